package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Action is one change of a commit.
type Action struct {
	Kind         string // create, update, delete, move, chmod; write (create or replace)
	Path         string
	PreviousPath string // move
	Content      []byte
	// Blob is content already stored (WriteBlob), used instead of
	// Content: large uploads stream in once and survive a retried commit.
	Blob       git.ObjectID
	HasContent bool // move: keep the old content unless given
	Executable *bool
}

// ActionError is a change that does not fit the tree it applies to; its
// message is what the API answers.
type ActionError struct{ Message string }

func (e *ActionError) Error() string { return e.Message }

// ErrNoChanges reports a commit that would not change the tree.
var ErrNoChanges = errors.New("no changes")

// BuildCommit writes the objects of a commit applying actions on top of
// parent ("" for the first commit of an empty repository) and returns it,
// without moving any ref. Trees are edited in memory: only the folders on
// the changed paths are read (through the warm cat-file process) and
// written again (through the warm writers).
func (r *Repo) BuildCommit(ctx context.Context, parent git.ObjectID, actions []Action, author, committer Signature, message string) (git.ObjectID, error) {
	var parentTree git.ObjectID
	var root *editTree
	err := r.withCat(ctx, func(p *catfile.Process) error {
		if parent != "" {
			_, data, err := p.Contents(string(parent))
			if err != nil {
				return err
			}
			c, err := ParseCommit(parent, data)
			if err != nil {
				return err
			}
			parentTree = c.Tree
		}
		var err error
		if root, err = loadEditTree(p, parentTree); err != nil {
			return err
		}
		for _, a := range actions {
			if err := r.apply(ctx, p, root, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	w := r.writers.get(r.path)
	tree, err := r.writeEditTree(root, w)
	if err != nil {
		return "", err
	}
	if tree == parentTree {
		return "", ErrNoChanges
	}
	var obj strings.Builder
	obj.WriteString("tree " + string(tree) + "\n")
	if parent != "" {
		obj.WriteString("parent " + string(parent) + "\n")
	}
	obj.WriteString("author " + author.ident() + "\n")
	obj.WriteString("committer " + committer.ident() + "\n\n")
	obj.WriteString(message)
	return r.hashFile(w, &w.commits, strings.NewReader(obj.String()))
}

// WriteBlob stores content (read to its end, streamed through a
// temporary file) as a blob and returns its id, for an Action's Blob.
func (r *Repo) WriteBlob(ctx context.Context, content io.Reader) (git.ObjectID, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	w := r.writers.get(r.path)
	return r.hashFile(w, &w.blobs, content)
}

// hashFile writes content to a temporary file and has a warm hash-object
// store it.
func (r *Repo) hashFile(w *repoWriters, proc *warmProc, content io.Reader) (git.ObjectID, error) {
	f, err := os.CreateTemp(r.path, "quarry-object-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	_, err = io.Copy(f, content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return oneID(proc.exchange(r.runner, r.path, f.Name()+"\n", 1))
}

// editTree is a tree being changed: entries by name, folders loaded on
// demand.
type editTree struct {
	id      git.ObjectID // as read; "" once changed
	entries map[string]*editEntry
}

type editEntry struct {
	mode string // git's mode, e.g. "100644", "40000"
	oid  git.ObjectID
	sub  *editTree // loaded folder
}

func (e *editEntry) isTree() bool { return isTreeMode(e.mode) }

func loadEditTree(p *catfile.Process, id git.ObjectID) (*editTree, error) {
	t := &editTree{id: id, entries: map[string]*editEntry{}}
	if id == "" {
		return t, nil
	}
	_, data, err := p.Contents(string(id))
	if err != nil {
		return nil, err
	}
	ents, err := parseTree(data, len(id)/2)
	if err != nil {
		return nil, err
	}
	for name, e := range ents {
		t.entries[name] = &editEntry{mode: e.mode, oid: git.ObjectID(e.oid)}
	}
	return t, nil
}

// folder returns the loaded folder of an entry.
func (e *editEntry) folder(p *catfile.Process) (*editTree, error) {
	if e.sub == nil {
		sub, err := loadEditTree(p, e.oid)
		if err != nil {
			return nil, err
		}
		e.sub = sub
	}
	return e.sub, nil
}

// lookup finds the entry at path and the folder holding it; create makes
// missing folders on the way (and fails on a file in the way).
func lookup(p *catfile.Process, root *editTree, path string, create bool) (*editTree, *editEntry, error) {
	parts := strings.Split(path, "/")
	t := root
	for i, name := range parts[:len(parts)-1] {
		e := t.entries[name]
		if e == nil {
			if !create {
				return nil, nil, nil
			}
			e = &editEntry{mode: "40000", sub: &editTree{entries: map[string]*editEntry{}}}
			t.entries[name] = e
			t.id = ""
		}
		if !e.isTree() {
			if create {
				return nil, nil, &ActionError{fmt.Sprintf("A file with this name already exists: %s", strings.Join(parts[:i+1], "/"))}
			}
			return nil, nil, nil
		}
		sub, err := e.folder(p)
		if err != nil {
			return nil, nil, err
		}
		t.id = ""
		t = sub
	}
	return t, t.entries[parts[len(parts)-1]], nil
}

// apply changes the tree for one action.
func (r *Repo) apply(ctx context.Context, p *catfile.Process, root *editTree, a Action) error {
	name := a.Path[strings.LastIndexByte(a.Path, '/')+1:]
	dir, cur, err := lookup(p, root, a.Path, a.Kind == "create" || a.Kind == "move" || a.Kind == "write")
	if err != nil {
		return err
	}
	if cur != nil && cur.isTree() && a.Kind != "delete" {
		return &ActionError{"A directory with this name already exists"}
	}
	mode := ""
	if a.Executable != nil {
		mode = "100644"
		if *a.Executable {
			mode = "100755"
		}
	}
	put := func(oid git.ObjectID, keepMode string) error {
		if mode == "" {
			mode = keepMode
		}
		if mode == "" {
			mode = "100644"
		}
		dir.entries[name] = &editEntry{mode: mode, oid: oid}
		dir.id = ""
		return nil
	}
	writeContent := func() (git.ObjectID, error) {
		if a.Blob != "" {
			return a.Blob, nil
		}
		return r.hashFile(r.writers.get(r.path), &r.writers.get(r.path).blobs, bytes.NewReader(a.Content))
	}
	switch a.Kind {
	case "create", "write":
		if cur != nil && a.Kind == "create" {
			return &ActionError{"A file with this name already exists"}
		}
		oid, err := writeContent()
		if err != nil {
			return err
		}
		keep := ""
		if cur != nil {
			keep = cur.mode
		}
		return put(oid, keep)
	case "update", "chmod":
		if cur == nil {
			return &ActionError{"A file with this name doesn't exist"}
		}
		oid := cur.oid
		if a.Kind == "update" {
			if oid, err = writeContent(); err != nil {
				return err
			}
		}
		return put(oid, cur.mode)
	case "delete":
		if cur == nil {
			return &ActionError{"A file with this name doesn't exist"}
		}
		delete(dir.entries, name)
		dir.id = ""
		return nil
	case "move":
		pdir, prev, err := lookup(p, root, a.PreviousPath, false)
		if err != nil {
			return err
		}
		if prev == nil || prev.isTree() {
			return &ActionError{"A file with this name doesn't exist"}
		}
		if cur != nil {
			return &ActionError{"A file with this name already exists"}
		}
		delete(pdir.entries, a.PreviousPath[strings.LastIndexByte(a.PreviousPath, '/')+1:])
		pdir.id = ""
		oid := prev.oid
		if a.HasContent {
			if oid, err = writeContent(); err != nil {
				return err
			}
		}
		return put(oid, prev.mode)
	}
	return &ActionError{fmt.Sprintf("Unknown action '%s'", a.Kind)}
}

// writeEditTree writes the changed folders bottom-up and returns the root
// tree's id. Folders left empty disappear, as git stores no empty trees.
func (r *Repo) writeEditTree(t *editTree, w *repoWriters) (git.ObjectID, error) {
	if t.id != "" {
		return t.id, nil
	}
	var in strings.Builder
	for name, e := range t.entries {
		if e.sub != nil && e.sub.id == "" {
			id, err := r.writeEditTree(e.sub, w)
			if err != nil {
				return "", err
			}
			if id == emptyTree {
				continue
			}
			e.oid = id
		}
		typ := "blob"
		switch {
		case e.isTree():
			typ = "tree"
		case e.mode == "160000":
			typ = "commit"
		}
		fmt.Fprintf(&in, "%s %s %s\t%s\x00", e.mode, typ, e.oid, name)
	}
	in.WriteByte(0)
	id, err := oneID(w.trees.exchange(r.runner, r.path, in.String(), 1))
	if err != nil {
		return "", err
	}
	t.id = id
	return id, nil
}

// emptyTree is the id of the tree with no entries.
const emptyTree = git.ObjectID("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// UpdateRef moves ref from old ("" for a new ref) to next; ErrRefMoved when
// ref no longer points at old.
func (r *Repo) UpdateRef(ctx context.Context, ref string, next, old git.ObjectID) error {
	o := string(old)
	if o == "" {
		o = string(git.ZeroOID)
	}
	if strings.ContainsAny(ref, " \n\x00") || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("invalid ref %q", ref)
	}
	w := r.writers.get(r.path)
	lines, err := w.refs.exchange(r.runner, r.path, "start\nupdate "+ref+" "+string(next)+" "+o+"\nprepare\ncommit\n", 3)
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) {
			return fmt.Errorf("%w: %v", ErrRefMoved, err)
		}
		return err
	}
	if lines[0] != "start: ok" || lines[1] != "prepare: ok" || lines[2] != "commit: ok" {
		w.refs.mu.Lock()
		w.refs.stopLocked()
		w.refs.mu.Unlock()
		return fmt.Errorf("%w: %q", errUnexpected, lines)
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
