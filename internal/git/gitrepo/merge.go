package gitrepo

// Merges, squashes and rebases for merge requests, all without a work
// tree: git's merge-ort machinery runs in memory through
// `git merge-tree --write-tree` and commits are written as objects. Nothing
// here moves a ref; callers point refs at the commits returned (UpdateRef,
// compare-and-swap). A failed or canceled call may leave unreachable
// objects behind (trees and blobs of a merge, a rebase's scratch commits),
// as any git merge does; nothing else is left: no work tree, index, ref or
// temporary file.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// ErrMergeConflict reports a merge (or a commit replayed by Rebase) that
// git cannot complete without a person; the wrapping error names the
// conflicted paths.
var ErrMergeConflict = errors.New("merge conflict")

// ErrUnrelatedHistories is a merge of commits without a common ancestor.
var ErrUnrelatedHistories = errors.New("unrelated histories")

// MergeResult is the outcome of a three-way merge of two commits.
type MergeResult struct {
	// Tree is the merged tree, written to the repository whether or not
	// the merge is clean; with conflicts its conflicted files hold
	// conflict markers.
	Tree git.ObjectID
	// Conflicts are the conflicted paths, sorted, each once; empty when
	// the merge is clean.
	Conflicts []string
}

// MergeTree merges theirs into ours as `git merge` would (merge-ort, the
// merge bases of both found by git, renames detected) without a work tree
// or index, and writes the resulting tree. A conflict is not an error: it
// is reported in Conflicts. Commits without a common ancestor are an
// error ("refusing to merge unrelated histories").
func (r *Repo) MergeTree(ctx context.Context, ours, theirs git.ObjectID) (MergeResult, error) {
	if err := checkOIDs(ours, theirs); err != nil {
		return MergeResult{}, fmt.Errorf("merge %s into %s: %w", theirs, ours, err)
	}
	res, err := r.mergeTree(ctx, ours, theirs, false)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s into %s: %w", theirs, ours, err)
	}
	return res, nil
}

// mergeTree runs `git merge-tree --write-tree` (git 2.38+; its
// --merge-base option needs 2.40, so the merge base is always git's
// choice). Exit status 0 is a clean merge, 1 a conflicted one; either
// way stdout is "<tree>NUL" then, with --name-only -z, one "<path>NUL" per
// conflicted path, and with --no-messages nothing more.
func (r *Repo) mergeTree(ctx context.Context, ours, theirs git.ObjectID, allowUnrelated bool) (MergeResult, error) {
	flags := []git.Flag{{Name: "--write-tree"}, {Name: "--name-only"}, {Name: "-z"}, {Name: "--no-messages"}}
	if allowUnrelated {
		flags = append(flags, git.Flag{Name: "--allow-unrelated-histories"})
	}
	out, err := r.run(ctx, git.Command{Name: "merge-tree", Flags: flags, Args: []string{string(ours), string(theirs)}}, git.Options{})
	conflicted := false
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "unrelated histories") {
			return MergeResult{}, fmt.Errorf("%w: %v", ErrUnrelatedHistories, err)
		}
		if !errors.As(err, &ge) || ge.Code != 1 || ctx.Err() != nil {
			return MergeResult{}, err
		}
		conflicted = true
	}
	fields := bytes.Split(out, []byte{0})
	tree := string(fields[0])
	if !validOID(tree) {
		return MergeResult{}, fmt.Errorf("merge-tree: %w: tree %q", errUnexpected, tree)
	}
	res := MergeResult{Tree: git.ObjectID(tree), Conflicts: []string{}}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if len(f) == 0 {
			break // end of the conflicted file list
		}
		if p := string(f); !seen[p] {
			seen[p] = true
			res.Conflicts = append(res.Conflicts, p)
		}
	}
	sort.Strings(res.Conflicts)
	if conflicted != (len(res.Conflicts) > 0) {
		// git lists a path for every conflict it reports; a mismatch is an
		// output this code does not understand.
		return MergeResult{}, fmt.Errorf("merge-tree: %w: exit status 1 = %v with %d conflicted paths", errUnexpected, conflicted, len(res.Conflicts))
	}
	return res, nil
}

// conflictError wraps ErrMergeConflict with the paths, quoted.
func conflictError(paths []string) error {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = fmt.Sprintf("%q", p)
	}
	return fmt.Errorf("%w in %s", ErrMergeConflict, strings.Join(q, ", "))
}

// IsAncestor reports whether ancestor is reachable from descendant (a
// commit is its own ancestor): whether descendant can be fast-forwarded
// from ancestor.
func (r *Repo) IsAncestor(ctx context.Context, ancestor, descendant git.ObjectID) (bool, error) {
	if err := checkOIDs(ancestor, descendant); err != nil {
		return false, fmt.Errorf("is %s an ancestor of %s: %w", ancestor, descendant, err)
	}
	_, err := r.run(ctx, git.Command{Name: "merge-base", Flags: []git.Flag{{Name: "--is-ancestor"}},
		Args: []string{string(ancestor), string(descendant)}}, git.Options{})
	if err == nil {
		return true, nil
	}
	var ge *git.Error
	if errors.As(err, &ge) && ge.Code == 1 && ctx.Err() == nil {
		return false, nil
	}
	return false, fmt.Errorf("is %s an ancestor of %s: %w", ancestor, descendant, err)
}

// CommitTree writes a commit of tree with parents (in order; none for a
// root commit) and returns its id, moving no ref. Dates are stored in UTC
// (as BuildCommit stores them) and the message as given, byte for byte.
// The tree must be a tree and every parent a commit of the repository.
func (r *Repo) CommitTree(ctx context.Context, tree git.ObjectID, parents []git.ObjectID, message string, author, committer Signature) (git.ObjectID, error) {
	if err := checkOIDs(append([]git.ObjectID{tree}, parents...)...); err != nil {
		return "", fmt.Errorf("commit tree %s: %w", tree, err)
	}
	err := r.withCat(ctx, func(p *catfile.Process) error {
		want := map[git.ObjectID]string{tree: "tree"}
		for _, id := range parents {
			want[id] = "commit"
		}
		for id, typ := range want {
			info, err := p.Info(string(id))
			if errors.Is(err, catfile.ErrMissing) {
				return fmt.Errorf("%s %s: %w", typ, id, ErrRefNotFound)
			}
			if err != nil {
				return err
			}
			if info.Type != typ {
				return fmt.Errorf("%s is a %s, not a %s", id, info.Type, typ)
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("commit tree %s: %w", tree, err)
	}
	id, err := r.writeCommit(ctx, tree, parents, author.ident(), committer.ident(), "", message)
	if err != nil {
		return "", fmt.Errorf("commit tree %s: %w", tree, err)
	}
	return id, nil
}

// writeCommit writes a commit object through the warm hash-object writer
// (as BuildCommit does) from its header values: author and committer as
// the object holds them ("Name <email> 1700000000 +0000"), encoding only
// when not "".
func (r *Repo) writeCommit(ctx context.Context, tree git.ObjectID, parents []git.ObjectID, author, committer, encoding, message string) (git.ObjectID, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var obj strings.Builder
	obj.WriteString("tree " + string(tree) + "\n")
	for _, p := range parents {
		obj.WriteString("parent " + string(p) + "\n")
	}
	obj.WriteString("author " + author + "\n")
	obj.WriteString("committer " + committer + "\n")
	if encoding != "" {
		obj.WriteString("encoding " + encoding + "\n")
	}
	obj.WriteString("\n" + message)
	w := r.writers.get(r.path)
	return r.hashFile(w, &w.commits, strings.NewReader(obj.String()))
}

// MergeCommit merges source into target and writes the merge commit:
// parents target then source, the merged tree, author as author and
// committer. A conflict is ErrMergeConflict (wrapped, naming the paths).
// It writes a commit even when source is already merged (check with
// IsAncestor first when that matters) and moves no ref.
func (r *Repo) MergeCommit(ctx context.Context, target, source git.ObjectID, message string, author Signature) (git.ObjectID, error) {
	tree, err := r.cleanMerge(ctx, target, source)
	if err != nil {
		return "", fmt.Errorf("merge commit of %s into %s: %w", source, target, err)
	}
	id, err := r.writeCommit(ctx, tree, []git.ObjectID{target, source}, author.ident(), author.ident(), "", message)
	if err != nil {
		return "", fmt.Errorf("merge commit of %s into %s: %w", source, target, err)
	}
	return id, nil
}

// SquashCommit writes one commit on top of target holding the changes of
// source: its only parent is target, its tree the merge of target and
// source (as `git merge --squash`), author as author and committer. A
// conflict is ErrMergeConflict (wrapped, naming the paths). It moves no
// ref.
func (r *Repo) SquashCommit(ctx context.Context, target, source git.ObjectID, message string, author Signature) (git.ObjectID, error) {
	tree, err := r.cleanMerge(ctx, target, source)
	if err != nil {
		return "", fmt.Errorf("squash %s onto %s: %w", source, target, err)
	}
	id, err := r.writeCommit(ctx, tree, []git.ObjectID{target}, author.ident(), author.ident(), "", message)
	if err != nil {
		return "", fmt.Errorf("squash %s onto %s: %w", source, target, err)
	}
	return id, nil
}

// cleanMerge is the merged tree of ours and theirs, or ErrMergeConflict.
func (r *Repo) cleanMerge(ctx context.Context, ours, theirs git.ObjectID) (git.ObjectID, error) {
	if err := checkOIDs(ours, theirs); err != nil {
		return "", err
	}
	res, err := r.mergeTree(ctx, ours, theirs, false)
	if err != nil {
		return "", err
	}
	if len(res.Conflicts) > 0 {
		return "", conflictError(res.Conflicts)
	}
	return res.Tree, nil
}

// rebaseScratch is the identity of the scratch commits Rebase writes to
// steer merge-tree's choice of merge base; fixed, so that the same
// replay writes the same objects.
const rebaseScratch = "Quarry <quarry@localhost> 0 +0000"

// Rebase replays the commits of source that onto lacks on top of onto and
// returns the new head, moving no ref. It gives what `git rebase onto`
// gives on source with git's defaults (checked against git 2.39 by the
// tests):
//   - the commits replayed are those of `rev-list --right-only
//     --cherry-mark --no-merges --topo-order --reverse onto...source`,
//     oldest first: merge commits are skipped (their changes come with
//     the commits replayed, or not at all), and so are commits whose
//     change onto already has (same patch id), unless they change
//     nothing;
//   - each keeps its author (name, email, date and zone, as stored), its
//     message and its encoding header; committer is the committer of
//     every new commit; other headers (signatures) are dropped;
//   - a commit that changes nothing is kept; one whose change is already
//     in the new head (it would change nothing there) is dropped.
//
// When onto is already in source's history there is nothing to do and
// source is returned unchanged (even when that history has merges); when
// every commit is skipped or dropped the result is onto. A conflict on
// any commit is ErrMergeConflict (wrapped, naming the commit and the
// paths) and no commit of the replay is reachable from anything.
//
// How: replaying commit C (parent P) on head H is the three-way merge of
// H and C with base P, which is what cherry-pick does. `merge-tree
// --merge-base` would name P, but needs git 2.40; instead Rebase writes a
// scratch commit S with H's tree and the sole parent P, so that P is the
// one merge base of S and C and `merge-tree --write-tree S C` merges
// exactly P→H with P→C (for a root C, S has no parent and the base is the
// empty tree). No work tree, index or temporary ref is involved: a
// failure or a canceled ctx (checked before every commit; a running git
// is killed) leaves only unreachable objects, which gc removes.
func (r *Repo) Rebase(ctx context.Context, onto, source git.ObjectID, committer Signature) (git.ObjectID, error) {
	head, err := r.rebase(ctx, onto, source, committer)
	if err != nil {
		return "", fmt.Errorf("rebase %s onto %s: %w", source, onto, err)
	}
	return head, nil
}

func (r *Repo) rebase(ctx context.Context, onto, source git.ObjectID, committer Signature) (git.ObjectID, error) {
	if err := checkOIDs(onto, source); err != nil {
		return "", err
	}
	if up, err := r.IsAncestor(ctx, onto, source); err != nil || up {
		return source, err
	}
	picks, err := r.rebasePicks(ctx, onto, source)
	if err != nil {
		return "", err
	}
	head := onto
	start, err := r.rawCommit(ctx, onto)
	if err != nil {
		return "", err
	}
	headTree := start.tree
	who := committer.ident()
	for _, id := range picks {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		c, err := r.rawCommit(ctx, id)
		if err != nil {
			return "", err
		}
		base := emptyTree
		if len(c.parents) > 0 {
			p, err := r.rawCommit(ctx, c.parents[0])
			if err != nil {
				return "", err
			}
			base = p.tree
		}
		var tree git.ObjectID
		switch {
		case c.tree == base:
			tree = headTree // empty from the start: kept
		case base == headTree:
			tree = c.tree
		default:
			scratch, err := r.writeCommit(ctx, headTree, c.parents, rebaseScratch, rebaseScratch, "", "quarry rebase scratch\n")
			if err != nil {
				return "", err
			}
			res, err := r.mergeTree(ctx, scratch, id, len(c.parents) == 0)
			if err != nil {
				return "", fmt.Errorf("replay %s: %w", id, err)
			}
			if len(res.Conflicts) > 0 {
				return "", fmt.Errorf("replay %s: %w", id, conflictError(res.Conflicts))
			}
			if res.Tree == headTree {
				continue // its change is already there: dropped
			}
			tree = res.Tree
		}
		if head, err = r.writeCommit(ctx, tree, []git.ObjectID{head}, c.author, who, c.encoding, c.message); err != nil {
			return "", fmt.Errorf("replay %s: %w", id, err)
		}
		headTree = tree
	}
	return head, nil
}

// rebasePicks lists the commits to replay, oldest first, as the todo
// list of `git rebase` (sequencer_make_script) has them: commits marked
// "=" (patch already in onto) are left out unless they change nothing.
func (r *Repo) rebasePicks(ctx context.Context, onto, source git.ObjectID) ([]git.ObjectID, error) {
	out, err := r.run(ctx, git.Command{Name: "rev-list", Flags: []git.Flag{{Name: "--right-only"}, {Name: "--cherry-mark"},
		{Name: "--no-merges"}, {Name: "--topo-order"}, {Name: "--reverse"}},
		Args: []string{string(onto) + "..." + string(source)}}, git.Options{})
	if err != nil {
		return nil, err
	}
	var picks []git.ObjectID
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		mark, id := line[0], line[1:]
		if !validOID(id) || mark != '+' && mark != '=' {
			return nil, fmt.Errorf("rev-list: %w: %q", errUnexpected, line)
		}
		if mark == '=' {
			c, err := r.rawCommit(ctx, git.ObjectID(id))
			if err != nil {
				return nil, err
			}
			empty := len(c.parents) == 0 && c.tree == emptyTree
			if len(c.parents) > 0 {
				p, err := r.rawCommit(ctx, c.parents[0])
				if err != nil {
					return nil, err
				}
				empty = p.tree == c.tree
			}
			if !empty {
				continue
			}
		}
		picks = append(picks, git.ObjectID(id))
	}
	return picks, nil
}

// rawCommitHeaders are the parts of a commit object a replay copies, as
// stored.
type rawCommitHeaders struct {
	tree     git.ObjectID
	parents  []git.ObjectID
	author   string // "Name <email> 1700000000 +0200"
	encoding string
	message  string
}

// rawCommit reads a commit object without interpreting its identities.
func (r *Repo) rawCommit(ctx context.Context, id git.ObjectID) (rawCommitHeaders, error) {
	info, data, err := r.ReadObject(ctx, string(id))
	if err != nil {
		return rawCommitHeaders{}, fmt.Errorf("read commit %s: %w", id, err)
	}
	if info.Type != "commit" {
		return rawCommitHeaders{}, fmt.Errorf("read commit %s: a %s", id, info.Type)
	}
	var c rawCommitHeaders
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.message = string(msg)
	for _, line := range strings.Split(string(head), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key { // continuation lines start with a space: key ""
		case "tree":
			c.tree = git.ObjectID(val)
		case "parent":
			c.parents = append(c.parents, git.ObjectID(val))
		case "author":
			c.author = val
		case "encoding":
			c.encoding = val
		}
	}
	if !validOID(string(c.tree)) {
		return rawCommitHeaders{}, fmt.Errorf("read commit %s: %w: tree %q", id, errUnexpected, c.tree)
	}
	return c, nil
}

// validOID reports a full hex object name (SHA-1 or SHA-256).
func validOID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && isHex(s)
}

// checkOIDs refuses anything but full object names: these operations take
// ids, never revisions.
func checkOIDs(ids ...git.ObjectID) error {
	for _, id := range ids {
		if !validOID(string(id)) {
			return fmt.Errorf("invalid object id %q", id)
		}
	}
	return nil
}
