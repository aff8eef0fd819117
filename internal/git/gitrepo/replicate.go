package gitrepo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"quarry/internal/git"
)

// movingSuffix marks the folder a storage move builds its copy in, beside
// the copy's place on the destination: "<rel>.moving-<random>".
const movingSuffix = ".moving-"

// ReplicateTo copies this repository to dst (the same repository on
// another storage) for a storage move: every ref at the same object, the
// same HEAD, the objects they reach. The copy is built aside on dst's
// storage, checked — the same refs at the same objects (for-each-ref),
// the same HEAD, `git fsck` clean — and only then renamed into place, so
// that dst is either absent or a whole, verified copy. A repository
// already at dst (a leftover of an earlier move whose cleanup failed; the
// container is not on that storage) is replaced. When this repository
// does not exist (a wiki never written), dst is removed instead: nothing
// stale may appear after the move.
//
// The caller keeps the source unchanged meanwhile (the container is
// read-only and no write is in flight).
func (r *Repo) ReplicateTo(ctx context.Context, dst *Repo) error {
	if !r.Exists() {
		return dst.Remove()
	}
	if err := os.MkdirAll(filepath.Dir(dst.path), 0o750); err != nil {
		return fmt.Errorf("make the destination's folder: %w", err)
	}
	aside, err := dst.aside()
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(aside.path)
		}
	}()
	head, err := r.HeadBranch(ctx)
	if err != nil {
		return fmt.Errorf("read HEAD: %w", err)
	}
	if err := aside.initConfigured(ctx, head); err != nil {
		return fmt.Errorf("make the copy: %w", err)
	}
	refs, err := r.refList(ctx)
	if err != nil {
		return fmt.Errorf("list refs: %w", err)
	}
	if len(refs) > 0 {
		if _, err := aside.run(ctx, git.Command{Name: "fetch", Flags: []git.Flag{{Name: "--quiet"}, {Name: "--no-tags"},
			{Name: "--no-write-fetch-head"}}, Args: []string{r.path, "+refs/*:refs/*"}}, git.Options{}); err != nil {
			return fmt.Errorf("copy objects and refs: %w", err)
		}
	}
	if err := aside.verifyCopyOf(ctx, r, refs, head); err != nil {
		return err
	}
	if err := dst.Remove(); err != nil {
		return fmt.Errorf("remove a stale copy at the destination: %w", err)
	}
	if err := os.Rename(aside.path, dst.path); err != nil {
		return fmt.Errorf("put the copy in place: %w", err)
	}
	keep = true
	// Nothing may have warmed up on the path meanwhile, but be sure.
	dst.pool.Evict(dst.path)
	dst.writers.evict(dst.path)
	return nil
}

// aside is a fresh path beside the repository's to build a replacement
// in (renamed into place once whole; RemoveMoveLeftovers finds those a
// crash left).
func (r *Repo) aside() (*Repo, error) {
	var random [8]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, err
	}
	return &Repo{path: r.path + movingSuffix + hex.EncodeToString(random[:]), runner: r.runner}, nil
}

// refList is every ref with its object, one "<object> <ref>" line each,
// sorted by ref.
func (r *Repo) refList(ctx context.Context) (string, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--format", Value: "%(objectname) %(refname)"}}},
		git.Options{})
	return string(out), err
}

// verifyCopyOf checks that r is a faithful copy of src, whose refs were
// refs and HEAD head: the same refs at the same objects, the same HEAD,
// and fsck finds nothing wrong.
func (r *Repo) verifyCopyOf(ctx context.Context, src *Repo, refs, head string) error {
	got, err := r.refList(ctx)
	if err != nil {
		return fmt.Errorf("verify the copy: %w", err)
	}
	if got != refs {
		return fmt.Errorf("verify the copy: its refs differ from the source's (%d refs, want %d)",
			strings.Count(got, "\n"), strings.Count(refs, "\n"))
	}
	if now, err := src.refList(ctx); err != nil || now != refs {
		return fmt.Errorf("verify the copy: the source's refs changed while it was copied")
	}
	gotHead, err := r.HeadBranch(ctx)
	if err != nil || gotHead != head {
		return fmt.Errorf("verify the copy: HEAD is %q, want %q", gotHead, head)
	}
	if _, err := r.run(ctx, git.Command{Name: "fsck", Flags: []git.Flag{{Name: "--no-progress"}, {Name: "--no-dangling"}}},
		git.Options{}); err != nil {
		return fmt.Errorf("verify the copy: git fsck: %w", err)
	}
	return nil
}

// RemoveMoveLeftovers removes the folders storage moves were building
// copies of this repository in (a move cut short by a crash): a move
// starting over calls it before it copies, being the only move of its
// container.
func (r *Repo) RemoveMoveLeftovers() error {
	entries, err := os.ReadDir(filepath.Dir(r.path))
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	prefix := filepath.Base(r.path) + movingSuffix
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(r.path), e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// CarryRefs copies to dst the refs under prefixes that this repository
// has and dst lacks (with their objects): refs Quarry writes itself
// without a write lease (a pipeline's refs/pipelines/<id>, a merge
// request's head) that reached a moved repository's old copy after it was
// copied. Refs dst has are left alone. It reports how many it copied.
func (r *Repo) CarryRefs(ctx context.Context, dst *Repo, prefixes ...string) (int, error) {
	if !r.Exists() || !dst.Exists() {
		return 0, nil
	}
	list := func(repo *Repo) (map[string]bool, error) {
		out, err := repo.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--format", Value: "%(refname)"}},
			Args: prefixes}, git.Options{})
		refs := map[string]bool{}
		for _, ref := range strings.Fields(string(out)) {
			refs[ref] = true
		}
		return refs, err
	}
	have, err := list(r)
	if err != nil {
		return 0, err
	}
	there, err := list(dst)
	if err != nil {
		return 0, err
	}
	var specs []string
	for ref := range have {
		if !there[ref] && git.ValidRefName(strings.TrimPrefix(ref, "refs/")) {
			specs = append(specs, ref+":"+ref)
		}
	}
	if len(specs) == 0 {
		return 0, nil
	}
	if _, err := dst.run(ctx, git.Command{Name: "fetch", Flags: []git.Flag{{Name: "--quiet"}, {Name: "--no-tags"},
		{Name: "--no-write-fetch-head"}}, Args: append([]string{r.path}, specs...)}, git.Options{}); err != nil {
		return 0, fmt.Errorf("carry refs: %w", err)
	}
	return len(specs), nil
}
