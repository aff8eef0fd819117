package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"quarry/internal/git"
)

// WriteBundle writes every ref of the repository, with HEAD, as a git
// bundle at path (what GitLab's exports carry a wiki as; `bundle create --all`). ok is false,
// and nothing is written, when the repository does not exist or has no
// refs.
func (r *Repo) WriteBundle(ctx context.Context, path string) (ok bool, err error) {
	if !r.Exists() {
		return false, nil
	}
	refs, err := r.refList(ctx)
	if err != nil {
		return false, fmt.Errorf("list refs: %w", err)
	}
	if refs == "" {
		return false, nil
	}
	// Every ref by name (what --all would give, but an argument list
	// never holds an option), and HEAD when it names one of them.
	args := []string{path}
	head, _ := r.HeadBranch(ctx)
	for _, line := range strings.Split(strings.TrimSpace(refs), "\n") {
		if _, ref, ok := strings.Cut(line, " "); ok {
			if ref == "refs/heads/"+head {
				args = append(args, "HEAD")
			}
			args = append(args, ref)
		}
	}
	if _, err := r.run(ctx, git.Command{Name: "bundle", Sub: "create", Flags: []git.Flag{{Name: "--quiet"}},
		Args: args}, git.Options{}); err != nil {
		return false, fmt.Errorf("write bundle: %w", err)
	}
	return true, nil
}

// RestoreBundle makes this repository (which must not exist yet, or is
// replaced) a copy of the bundle at path: every ref it carries, with the
// objects checked by fsck as they come, and HEAD at the branch the
// bundle's HEAD names (defaultBranch when it names none or there is
// none). The copy is built aside and renamed into place, so the
// repository is either the old one or the whole copy.
func (r *Repo) RestoreBundle(ctx context.Context, path, defaultBranch string) error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o750); err != nil {
		return fmt.Errorf("make the repository's folder: %w", err)
	}
	aside, err := r.aside()
	if err != nil {
		return err
	}
	defer os.RemoveAll(aside.path)
	if err := aside.initConfigured(ctx, defaultBranch); err != nil {
		return fmt.Errorf("make the repository: %w", err)
	}
	heads, err := aside.run(ctx, git.Command{Name: "bundle", Sub: "list-heads", Args: []string{path}}, git.Options{})
	if err != nil {
		return fmt.Errorf("read the bundle: %w", err)
	}
	if _, err := aside.run(ctx, git.Command{Name: "fetch", Flags: []git.Flag{{Name: "--quiet"}, {Name: "--no-tags"},
		{Name: "--no-write-fetch-head"}}, Args: []string{path, "+refs/*:refs/*"},
		Env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=fetch.fsckObjects", "GIT_CONFIG_VALUE_0=true"}}, git.Options{}); err != nil {
		return fmt.Errorf("fetch from the bundle: %w", err)
	}
	if head := bundleHead(string(heads), defaultBranch); head != "" && head != defaultBranch {
		if err := aside.SetHeadBranch(ctx, head); err != nil {
			return err
		}
	}
	if err := r.Remove(); err != nil {
		return fmt.Errorf("remove the old repository: %w", err)
	}
	if err := os.Rename(aside.path, r.path); err != nil {
		return fmt.Errorf("put the repository in place: %w", err)
	}
	r.pool.Evict(r.path)
	r.writers.evict(r.path)
	return nil
}

// bundleHead is the branch a bundle's HEAD points at, from its
// list-heads output ("<oid> <ref>" lines): the branch at HEAD's object,
// preferring prefer; "" when the bundle has no HEAD or no branch there.
func bundleHead(listing, prefer string) string {
	var head string
	at := map[string][]string{}
	for _, line := range strings.Split(listing, "\n") {
		oid, ref, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if ref == "HEAD" {
			head = oid
			continue
		}
		if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			at[oid] = append(at[oid], b)
		}
	}
	branches := at[head]
	for _, b := range branches {
		if b == prefer {
			return b
		}
	}
	if len(branches) > 0 {
		return branches[0]
	}
	return ""
}
