package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Action is one change of a commit.
type Action struct {
	Kind         string // create, update, delete, move, chmod
	Path         string
	PreviousPath string // move
	Content      []byte
	HasContent   bool // move: keep the old content unless given
	Executable   *bool
}

// ActionError is a change that does not fit the tree it applies to; its
// message is what the API answers.
type ActionError struct{ Message string }

func (e *ActionError) Error() string { return e.Message }

// ErrNoChanges reports a commit that would not change the tree.
var ErrNoChanges = errors.New("no changes")

// BuildCommit writes the objects of a commit applying actions on top of
// parent ("" for the first commit of an empty repository) and returns it,
// without moving any ref.
func (r *Repo) BuildCommit(ctx context.Context, parent git.ObjectID, actions []Action, author, committer Signature, message string) (git.ObjectID, error) {
	index, err := os.CreateTemp(r.path, "quarry-index-*")
	if err != nil {
		return "", err
	}
	index.Close()
	os.Remove(index.Name())
	defer os.Remove(index.Name())
	env := []string{"GIT_INDEX_FILE=" + index.Name()}
	var parentTree string
	if parent != "" {
		if _, err := r.run(ctx, git.Command{Name: "read-tree", Args: []string{string(parent)}, Env: env}, git.Options{}); err != nil {
			return "", err
		}
		c, err := r.ReadCommit(ctx, string(parent))
		if err != nil {
			return "", err
		}
		parentTree = string(c.Tree)
	}
	var info bytes.Buffer
	err = r.withCat(ctx, func(p *catfile.Process) error {
		lookup := func(path string) (catfile.ObjectInfo, bool, error) {
			if parent == "" {
				return catfile.ObjectInfo{}, false, nil
			}
			oi, err := p.Info(string(parent) + ":" + path)
			if errors.Is(err, catfile.ErrMissing) {
				return oi, false, nil
			}
			return oi, err == nil, err
		}
		modeOf := func(path string) (string, error) {
			out, err := r.run(ctx, git.Command{Name: "ls-tree", Args: []string{string(parent)}, PathArgs: []string{path}}, git.Options{})
			if err != nil {
				return "", err
			}
			f := strings.Fields(string(out))
			if len(f) < 1 {
				return "100644", nil
			}
			return f[0], nil
		}
		for _, a := range actions {
			cur, exists, err := lookup(a.Path)
			if err != nil {
				return err
			}
			if exists && cur.Type == "tree" && a.Kind != "delete" {
				return &ActionError{"A directory with this name already exists"}
			}
			mode := "100644"
			if a.Executable != nil && *a.Executable {
				mode = "100755"
			}
			switch a.Kind {
			case "create":
				if exists {
					return &ActionError{"A file with this name already exists"}
				}
			case "update", "delete", "chmod":
				if !exists {
					return &ActionError{"A file with this name doesn't exist"}
				}
				if a.Executable == nil {
					if mode, err = modeOf(a.Path); err != nil {
						return err
					}
				}
			case "move":
				prev, ok, err := lookup(a.PreviousPath)
				if err != nil {
					return err
				}
				if !ok || prev.Type != "blob" {
					return &ActionError{"A file with this name doesn't exist"}
				}
				if exists {
					return &ActionError{"A file with this name already exists"}
				}
				if a.Executable == nil {
					if mode, err = modeOf(a.PreviousPath); err != nil {
						return err
					}
				}
				fmt.Fprintf(&info, "0 %s\t%s\n", git.ZeroOID, a.PreviousPath)
				if !a.HasContent {
					fmt.Fprintf(&info, "%s %s\t%s\n", mode, prev.OID, a.Path)
					continue
				}
			default:
				return &ActionError{fmt.Sprintf("Unknown action '%s'", a.Kind)}
			}
			switch a.Kind {
			case "delete":
				fmt.Fprintf(&info, "0 %s\t%s\n", git.ZeroOID, a.Path)
			case "chmod":
				fmt.Fprintf(&info, "%s %s\t%s\n", mode, cur.OID, a.Path)
			default:
				out, err := r.run(ctx, git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-w"}, {Name: "--stdin"}}}, git.Options{Stdin: bytes.NewReader(a.Content)})
				if err != nil {
					return err
				}
				fmt.Fprintf(&info, "%s %s\t%s\n", mode, strings.TrimSpace(string(out)), a.Path)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if _, err := r.run(ctx, git.Command{Name: "update-index", Flags: []git.Flag{{Name: "--add"}, {Name: "--remove"}, {Name: "--index-info"}}, Env: env}, git.Options{Stdin: &info}); err != nil {
		return "", fmt.Errorf("update index: %w", err)
	}
	tree, err := r.run(ctx, git.Command{Name: "write-tree", Env: env}, git.Options{})
	if err != nil {
		return "", err
	}
	treeID := strings.TrimSpace(string(tree))
	if treeID == parentTree {
		return "", ErrNoChanges
	}
	c := git.Command{Name: "commit-tree", Env: append(author.env("GIT_AUTHOR"), committer.env("GIT_COMMITTER")...)}
	if parent != "" {
		c.Flags = append(c.Flags, git.Flag{Name: "-p", Value: string(parent)})
	}
	c.Flags = append(c.Flags, git.Flag{Name: "-F", Value: "-"})
	c.Args = []string{treeID}
	out, err := r.run(ctx, c, git.Options{Stdin: strings.NewReader(message)})
	if err != nil {
		return "", err
	}
	return git.ObjectID(strings.TrimSpace(string(out))), nil
}

// UpdateRef moves ref from old ("" for a new ref) to next; ErrRefMoved when
// ref no longer points at old.
func (r *Repo) UpdateRef(ctx context.Context, ref string, next, old git.ObjectID) error {
	o := string(old)
	if o == "" {
		o = string(git.ZeroOID)
	}
	if _, err := r.run(ctx, git.Command{Name: "update-ref", Args: []string{ref, string(next), o}}, git.Options{}); err != nil {
		var ge *git.Error
		if errors.As(err, &ge) {
			return fmt.Errorf("%w: %v", ErrRefMoved, err)
		}
		return err
	}
	return nil
}

// ChangedPaths lists the paths that differ between two commits.
func (r *Repo) ChangedPaths(ctx context.Context, from, to git.ObjectID) (map[string]bool, error) {
	out, err := r.run(ctx, git.Command{Name: "diff-tree", Flags: []git.Flag{{Name: "-r"}, {Name: "--name-only"}, {Name: "-z"}, {Name: "--no-commit-id"}},
		Args: []string{string(from), string(to)}}, git.Options{})
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths[string(p)] = true
		}
	}
	return paths, nil
}

// BranchTip returns the commit a branch points at, "" when it does not
// exist.
func (r *Repo) BranchTip(ctx context.Context, branch string) (git.ObjectID, error) {
	id, err := r.CommitID(ctx, "refs/heads/"+branch)
	if errors.Is(err, ErrRefNotFound) {
		return "", nil
	}
	return id, err
}

// FetchCommit copies a commit (and its history) from another repository
// into a hidden ref of this one, so both sides of a cross-project compare
// live in one repository.
func (r *Repo) FetchCommit(ctx context.Context, src *Repo, commit git.ObjectID) error {
	if _, err := r.CommitID(ctx, string(commit)); err == nil {
		return nil
	}
	_, err := r.run(ctx, git.Command{Name: "fetch", Flags: []git.Flag{{Name: "--quiet"}, {Name: "--no-tags"}},
		Args: []string{src.path, "+" + string(commit) + ":refs/quarry/compare/" + string(commit)},
		Env:  []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=uploadpack.allowAnySHA1InWant", "GIT_CONFIG_VALUE_0=true"}}, git.Options{})
	return err
}
