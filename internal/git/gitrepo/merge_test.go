package gitrepo

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/gittest"
	"quarry/internal/leaktest"
)

// mergeRepo is a new repository on fresh storages, and the folder holding
// them (for process and temporary-file checks).
func mergeRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	s, root := storagesWith(t, Options{})
	r, err := s.Open("default", HashedPath("", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	return r, root
}

// commitIn writes a commit with gittest and returns its id.
func commitIn(t *testing.T, r *Repo, files gittest.Files, opts ...gittest.CommitOption) git.ObjectID {
	t.Helper()
	return git.ObjectID(gittest.Commit(t, r.Path(), files, opts...))
}

// lines is a file of n numbered lines, with line i (1-based) replaced when
// given.
func lines(n int, replace map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := replace[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// change is one side of a merge: files written and paths removed on top of
// the base.
type change struct {
	files  gittest.Files
	remove []string
}

func (c change) commit(t *testing.T, r *Repo, base git.ObjectID, branch string) git.ObjectID {
	t.Helper()
	return commitIn(t, r, c.files, gittest.Branch(branch), gittest.Parents(string(base)), gittest.Remove(c.remove...))
}

var mergeBase = gittest.Files{"a.txt": lines(5, nil), "b.txt": "b\n", "dir/x": "x\n"}

// mergeCases are merges of two sides of mergeBase; want is the merged
// tree's files ("" for absent) when the merge is clean.
var mergeCases = []struct {
	name          string
	ours, theirs  change
	wantConflicts []string
	want          map[string]string
}{
	{
		name:   "clean: both sides' changes",
		ours:   change{files: gittest.Files{"a.txt": lines(5, map[int]string{1: "ours"}), "o.txt": "o\n"}},
		theirs: change{files: gittest.Files{"a.txt": lines(5, map[int]string{5: "theirs"}), "b.txt": "B\n"}, remove: []string{"dir/x"}},
		want: map[string]string{"a.txt": lines(5, map[int]string{1: "ours", 5: "theirs"}), "o.txt": "o\n", "b.txt": "B\n",
			"dir/x": ""},
	},
	{
		name:          "conflict: same line changed on both sides",
		ours:          change{files: gittest.Files{"a.txt": lines(5, map[int]string{3: "ours"})}},
		theirs:        change{files: gittest.Files{"a.txt": lines(5, map[int]string{3: "theirs"}), "b.txt": "B\n"}},
		wantConflicts: []string{"a.txt"},
	},
	{
		name: "conflicts: several paths, sorted, odd names",
		ours: change{files: gittest.Files{"z.txt": "ours\n", "dir/x": "ours\n", "we ird\nname": "ours\n", "b.txt": "ours\n"}},
		theirs: change{files: gittest.Files{"z.txt": "theirs\n", "dir/x": "theirs\n", "we ird\nname": "theirs\n",
			"b.txt": "theirs\n"}},
		wantConflicts: []string{"b.txt", "dir/x", "we ird\nname", "z.txt"},
	},
	{
		name:          "conflict: modified on one side, deleted on the other",
		ours:          change{remove: []string{"a.txt"}},
		theirs:        change{files: gittest.Files{"a.txt": lines(5, map[int]string{2: "theirs"})}},
		wantConflicts: []string{"a.txt"},
	},
	{
		name:   "clean: rename on one side, edit on the other",
		ours:   change{files: gittest.Files{"moved/a.txt": lines(5, nil)}, remove: []string{"a.txt"}},
		theirs: change{files: gittest.Files{"a.txt": lines(5, map[int]string{4: "theirs"})}},
		want:   map[string]string{"a.txt": "", "moved/a.txt": lines(5, map[int]string{4: "theirs"})},
	},
}

func TestRepo_MergeTree(t *testing.T) {
	ctx := context.Background()
	for _, tc := range mergeCases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := mergeRepo(t)
			base := commitIn(t, r, mergeBase, gittest.Branch("main"))
			ours := tc.ours.commit(t, r, base, "ours")
			theirs := tc.theirs.commit(t, r, base, "theirs")
			res, err := r.MergeTree(ctx, ours, theirs)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantConflicts == nil {
				tc.wantConflicts = []string{}
			}
			if !slices.Equal(res.Conflicts, tc.wantConflicts) || res.Conflicts == nil {
				t.Errorf("conflicts %q; want %q", res.Conflicts, tc.wantConflicts)
			}
			if !validOID(string(res.Tree)) {
				t.Fatalf("tree %q", res.Tree)
			}
			// The tree is written either way, with markers in conflicts.
			if typ := gittest.Run(t, r.Path(), nil, "cat-file", "-t", string(res.Tree)); typ != "tree" {
				t.Fatalf("tree %s is a %s", res.Tree, typ)
			}
			for _, p := range tc.wantConflicts {
				if p == "a.txt" && len(tc.ours.remove) > 0 {
					continue // modify/delete: the modified side is kept as it is
				}
				if got := gittest.ReadFile(t, r.Path(), string(res.Tree), p); !strings.Contains(got, "<<<<<<<") {
					t.Errorf("conflicted %q holds %q; want conflict markers", p, got)
				}
			}
			checkTreeFiles(t, r, res.Tree, tc.want)
			// git merge in a clone agrees on clean trees.
			if len(tc.wantConflicts) == 0 {
				if got := gitMergeTree(t, r.Path(), ours, theirs); got != string(res.Tree) {
					t.Errorf("tree %s; git merge makes %s", res.Tree, got)
				}
			}
		})
	}
}

// checkTreeFiles checks the files of a tree ("" for absent).
func checkTreeFiles(t *testing.T, r *Repo, tree git.ObjectID, want map[string]string) {
	t.Helper()
	for p, content := range want {
		has, err := r.HasFile(context.Background(), string(tree), p)
		if err != nil {
			t.Fatal(err)
		}
		if content == "" {
			if has {
				t.Errorf("%q is in the tree; want it gone", p)
			}
			continue
		}
		if !has {
			t.Errorf("%q is not in the tree", p)
			continue
		}
		if got := gittest.ReadFile(t, r.Path(), string(tree), p); got != content {
			t.Errorf("%q = %q; want %q", p, got, content)
		}
	}
}

// scratchClone clones the branches of bare into a new work tree.
func scratchClone(t *testing.T, bare string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "w")
	gittest.Run(t, filepath.Dir(dir), nil, "clone", "--quiet", "--no-checkout", bare, dir)
	return dir
}

// gitMergeTree is the tree `git merge` makes in a work tree.
func gitMergeTree(t *testing.T, bare string, ours, theirs git.ObjectID) string {
	t.Helper()
	w := scratchClone(t, bare)
	gittest.Run(t, w, nil, "checkout", "--quiet", "--detach", string(ours))
	gittest.Run(t, w, nil, "merge", "--quiet", "--no-edit", string(theirs))
	return gittest.Run(t, w, nil, "rev-parse", "HEAD^{tree}")
}

func TestRepo_MergeTree_errors(t *testing.T) {
	ctx := context.Background()
	r, _ := mergeRepo(t)
	base := commitIn(t, r, mergeBase, gittest.Branch("main"))
	other := commitIn(t, r, gittest.Files{"other": "x\n"}, gittest.Branch("other"))
	for name, pair := range map[string][2]git.ObjectID{
		"unrelated histories": {base, other},
		"revision, not id":    {"main", base},
		"option-like":         {"--output=x", base},
		"missing object":      {git.ObjectID(strings.Repeat("1", 40)), base},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.MergeTree(ctx, pair[0], pair[1])
			if err == nil || errors.Is(err, ErrMergeConflict) {
				t.Fatalf("err %v; want a failure, not a conflict", err)
			}
		})
	}
}

func TestRepo_IsAncestor(t *testing.T) {
	ctx := context.Background()
	r, _ := mergeRepo(t)
	base := commitIn(t, r, mergeBase, gittest.Branch("main"))
	tip := commitIn(t, r, gittest.Files{"a.txt": "2\n"}, gittest.Branch("main"))
	side := commitIn(t, r, gittest.Files{"s": "s\n"}, gittest.Branch("side"), gittest.Parents(string(base)))
	root := commitIn(t, r, gittest.Files{"r": "r\n"}, gittest.Branch("root"))
	for _, tc := range []struct {
		name                 string
		ancestor, descendant git.ObjectID
		want                 bool
	}{
		{"fast-forward", base, tip, true},
		{"backwards", tip, base, false},
		{"itself", tip, tip, true},
		{"diverged", side, tip, false},
		{"diverged backwards", tip, side, false},
		{"unrelated", root, tip, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.IsAncestor(ctx, tc.ancestor, tc.descendant)
			if err != nil || got != tc.want {
				t.Errorf("IsAncestor = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, bad := range []git.ObjectID{"main", git.ObjectID(strings.Repeat("2", 40))} {
		if _, err := r.IsAncestor(ctx, bad, tip); err == nil {
			t.Errorf("IsAncestor(%q): no error", bad)
		}
	}
}

var mergeSig = Signature{Name: "Mer Ger", Email: "merger@example.com", When: time.Unix(1710000000, 0)}

func TestRepo_MergeCommit_SquashCommit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range mergeCases {
		for _, squash := range []bool{false, true} {
			name := tc.name + "/merge"
			if squash {
				name = tc.name + "/squash"
			}
			t.Run(name, func(t *testing.T) {
				r, _ := mergeRepo(t)
				base := commitIn(t, r, mergeBase, gittest.Branch("main"))
				target := tc.ours.commit(t, r, base, "target")
				tc.theirs.commit(t, r, base, "source")
				// A second source commit: a squash takes all of them.
				source := commitIn(t, r, gittest.Files{"second.txt": "2\n"}, gittest.Branch("source"))
				do, wantParents := r.MergeCommit, []string{string(target), string(source)}
				if squash {
					do, wantParents = r.SquashCommit, []string{string(target)}
				}
				id, err := do(ctx, target, source, "Merge it\n\nbody\n", mergeSig)
				if len(tc.wantConflicts) > 0 {
					if !errors.Is(err, ErrMergeConflict) {
						t.Fatalf("err %v; want ErrMergeConflict", err)
					}
					for _, p := range tc.wantConflicts {
						if !strings.Contains(err.Error(), strconv.Quote(p)) {
							t.Errorf("error %q does not name %q", err, p)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				c, err := r.ReadCommit(ctx, string(id))
				if err != nil {
					t.Fatal(err)
				}
				res, err := r.MergeTree(ctx, target, source)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(c.ParentIDs, wantParents) {
					t.Errorf("parents %q; want %q", c.ParentIDs, wantParents)
				}
				if c.Tree != res.Tree {
					t.Errorf("tree %s; want the merged tree %s", c.Tree, res.Tree)
				}
				want := maps.Clone(tc.want)
				want["second.txt"] = "2\n"
				checkTreeFiles(t, r, c.Tree, want)
				for _, p := range []Person{c.Author, c.Committer} {
					if p.Name != mergeSig.Name || p.Email != mergeSig.Email || !p.When.Equal(mergeSig.When) {
						t.Errorf("identity %+v; want %+v", p, mergeSig)
					}
				}
				if c.Message != "Merge it\n\nbody\n" {
					t.Errorf("message %q", c.Message)
				}
				gittest.Run(t, r.Path(), nil, "fsck", "--strict", "--no-dangling")
			})
		}
	}
}

func TestRepo_CommitTree(t *testing.T) {
	ctx := context.Background()
	r, _ := mergeRepo(t)
	a := commitIn(t, r, gittest.Files{"a": "a\n"}, gittest.Branch("main"))
	b := commitIn(t, r, gittest.Files{"b": "b\n"}, gittest.Branch("main"))
	tree := git.ObjectID(gittest.Run(t, r.Path(), nil, "rev-parse", string(b)+"^{tree}"))
	blob := git.ObjectID(gittest.Run(t, r.Path(), nil, "rev-parse", string(b)+":b"))
	author := Signature{Name: "Au Thor", Email: "author@example.com", When: time.Unix(1700000000, 0)}
	for _, tc := range []struct {
		name    string
		tree    git.ObjectID
		parents []git.ObjectID
		ok      bool
	}{
		{"root commit", tree, nil, true},
		{"two parents, in order", tree, []git.ObjectID{b, a}, true},
		{"blob as tree", blob, nil, false},
		{"tree as parent", tree, []git.ObjectID{git.ObjectID(tree)}, false},
		{"missing parent", tree, []git.ObjectID{git.ObjectID(strings.Repeat("3", 40))}, false},
		{"revision as parent", tree, []git.ObjectID{"main"}, false},
		{"header injection", tree, []git.ObjectID{a + "\nauthor x <x> 0 +0000"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := r.CommitTree(ctx, tc.tree, tc.parents, "msg\n", author, mergeSig)
			if !tc.ok {
				if err == nil {
					t.Fatalf("CommitTree = %s; want an error", id)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := r.ReadCommit(ctx, string(id))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			for _, p := range tc.parents {
				want = append(want, string(p))
			}
			if c.Tree != tc.tree || !slices.Equal(c.ParentIDs, want) || c.Message != "msg\n" ||
				c.Author.Name != author.Name || !c.Author.When.Equal(author.When) || c.Committer.Name != mergeSig.Name {
				t.Errorf("commit %+v", c)
			}
		})
	}
}

// gitRebase is what `git rebase onto` makes of source in a scratch clone,
// with committer as committer; ok is false when git stops (a conflict).
func gitRebase(t *testing.T, bare string, onto, source git.ObjectID, committer Signature) (string, bool) {
	t.Helper()
	w := scratchClone(t, bare)
	gittest.Run(t, w, nil, "checkout", "--quiet", "--detach", string(source))
	cmd := exec.Command("git", "rebase", string(onto))
	cmd.Dir = w
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_COMMITTER_NAME="+committer.Name, "GIT_COMMITTER_EMAIL="+committer.Email,
		"GIT_COMMITTER_DATE=@"+strconv.FormatInt(committer.When.Unix(), 10)+" +0000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("git rebase: %v\n%s", err, out)
		return "", false
	}
	return gittest.Run(t, w, nil, "rev-parse", "HEAD"), true
}

// history builds the branches of a rebase scenario.
type history struct {
	t *testing.T
	r *Repo
}

func (h history) commit(branch string, files gittest.Files, opts ...gittest.CommitOption) git.ObjectID {
	h.t.Helper()
	return commitIn(h.t, h.r, files, append([]gittest.CommitOption{gittest.Branch(branch)}, opts...)...)
}

// fork starts branch at commit.
func (h history) fork(branch string, at git.ObjectID) {
	gittest.UpdateRef(h.t, h.r.Path(), "refs/heads/"+branch, string(at))
}

var zone = time.FixedZone("", 2*3600+30*60)

// rebaseCases build onto and source (on branches, so that a clone has
// them); the result must be what `git rebase` makes.
var rebaseCases = []struct {
	name string
	make func(h history) (onto, source git.ObjectID)
	// want names the expected head: "onto", "source" or "" for new commits.
	want string
	// picks is how many new commits the result has on top of onto.
	picks int
}{
	{
		name: "linear replay, authors and zones kept",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(9, nil), "x.txt": "x\n", "y.txt": "y\n"})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"x.txt": "x2\n"}, gittest.Message("upstream"))
			h.commit("source", gittest.Files{"a.txt": lines(9, map[int]string{1: "one"})}, gittest.Author("Ann", "ann@example.com"),
				gittest.At(time.Date(2024, 2, 1, 10, 0, 0, 0, zone)), gittest.Message("first\n\nwith a body\n"))
			h.commit("source", gittest.Files{"d/e.txt": "new\n"}, gittest.Author("Bob", "bob@example.com"),
				gittest.AuthoredAt(time.Date(2023, 5, 1, 0, 0, 0, 0, time.FixedZone("", -7*3600))))
			return onto, h.commit("source", gittest.Files{"a.txt": lines(9, map[int]string{1: "one", 9: "nine"})}, gittest.Remove("y.txt"))
		},
		picks: 3,
	},
	{
		name: "nothing to replay: source is behind onto",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.fork("source", base)
			return h.commit("main", gittest.Files{"b.txt": "b\n"}), base
		},
		want: "onto",
	},
	{
		name: "already on top of onto",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			onto := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.fork("source", onto)
			h.commit("source", gittest.Files{"b.txt": "b\n"})
			return onto, h.commit("source", gittest.Files{"c.txt": "c\n"})
		},
		want: "source",
	},
	{
		name: "same commit",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			c := h.commit("main", gittest.Files{"a.txt": "a\n"})
			return c, c
		},
		want: "source",
	},
	{
		name: "a change onto already has (same patch) is skipped",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(5, nil), "b.txt": "b\n"})
			h.fork("source", base)
			h.commit("main", gittest.Files{"a.txt": lines(5, map[int]string{2: "two"})}, gittest.Message("picked upstream"),
				gittest.Author("Other", "other@example.com"))
			onto := h.commit("main", gittest.Files{"c.txt": "c\n"})
			h.commit("source", gittest.Files{"a.txt": lines(5, map[int]string{2: "two"})}, gittest.Message("original"))
			return onto, h.commit("source", gittest.Files{"b.txt": "b2\n"})
		},
		picks: 1,
	},
	{
		name: "a commit that becomes empty is dropped",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(5, nil), "b.txt": "b\n"})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"a.txt": lines(5, map[int]string{2: "two"}), "c.txt": "c\n"})
			h.commit("source", gittest.Files{"a.txt": lines(5, map[int]string{2: "two"})})
			return onto, h.commit("source", gittest.Files{"b.txt": "b2\n"})
		},
		picks: 1,
	},
	{
		name: "a commit empty from the start is kept",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"c.txt": "c\n"})
			h.commit("source", nil, gittest.Message("nothing"))
			return onto, h.commit("source", gittest.Files{"b.txt": "b\n"})
		},
		picks: 2,
	},
	{
		name: "empty commits on both sides: kept",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.fork("source", base)
			h.commit("main", nil, gittest.Message("upstream nothing"))
			onto := h.commit("main", gittest.Files{"c.txt": "c\n"})
			return onto, h.commit("source", nil, gittest.Message("nothing"))
		},
		picks: 1,
	},
	{
		name: "merge commits are skipped",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(5, nil)})
			h.fork("source", base)
			h.fork("topic", base)
			onto := h.commit("main", gittest.Files{"u.txt": "u\n"})
			a := h.commit("source", gittest.Files{"s1.txt": "1\n"})
			x := h.commit("topic", gittest.Files{"a.txt": lines(5, map[int]string{5: "topic"})})
			h.commit("source", gittest.Files{"a.txt": lines(5, map[int]string{5: "topic"})}, gittest.Parents(string(a), string(x)),
				gittest.Message("Merge topic"))
			return onto, h.commit("source", gittest.Files{"s2.txt": "2\n"})
		},
		picks: 3,
	},
	{
		name: "renamed upstream, edited in source",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(20, nil)})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"moved/a.txt": lines(20, nil)}, gittest.Remove("a.txt"))
			return onto, h.commit("source", gittest.Files{"a.txt": lines(20, map[int]string{10: "ten"})})
		},
		picks: 1,
	},
	{
		name: "messages kept byte for byte",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"c.txt": "c\n"})
			h.commit("source", gittest.Files{"b.txt": "b\n"}, gittest.Message("title  \n\n\nbody\t\n\n\n"))
			return onto, h.commit("source", gittest.Files{"d.txt": "d\n"}, gittest.Message("# not a comment\n"))
		},
		picks: 2,
	},
	{
		name: "unrelated histories: everything replayed",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			onto := h.commit("main", gittest.Files{"a.txt": "a\n"})
			h.commit("source", gittest.Files{"b.txt": "b\n"})
			return onto, h.commit("source", gittest.Files{"c.txt": "c\n"})
		},
		picks: 2,
	},
	{
		name: "a later commit touches what an earlier one changed",
		make: func(h history) (git.ObjectID, git.ObjectID) {
			base := h.commit("main", gittest.Files{"a.txt": lines(12, nil)})
			h.fork("source", base)
			onto := h.commit("main", gittest.Files{"a.txt": lines(12, map[int]string{12: "upstream"})})
			h.commit("source", gittest.Files{"a.txt": lines(12, map[int]string{1: "one"})}, gittest.Message("1"))
			h.commit("source", gittest.Files{"a.txt": lines(12, map[int]string{1: "uno", 2: "dos"})}, gittest.Message("2"))
			return onto, h.commit("source", gittest.Files{"a.txt": lines(12, map[int]string{2: "dos"})}, gittest.Message("3"))
		},
		picks: 3,
	},
}

var rebaser = Signature{Name: "Re Baser", Email: "rebaser@example.com", When: time.Unix(1720000000, 0)}

// TestRepo_Rebase_matchesGitRebase checks each scenario against `git
// rebase` run in a scratch clone with the same committer and date: the
// same commit ids, so the same trees, parents, authors, messages.
func TestRepo_Rebase_matchesGitRebase(t *testing.T) {
	ctx := context.Background()
	for _, tc := range rebaseCases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := mergeRepo(t)
			onto, source := tc.make(history{t, r})
			got, err := r.Rebase(ctx, onto, source, rebaser)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := gitRebase(t, r.Path(), onto, source, rebaser)
			if !ok {
				t.Fatal("git rebase failed")
			}
			if string(got) != want {
				t.Errorf("Rebase = %s; git rebase makes %s\n%s", got, want,
					gittest.Run(t, r.Path(), nil, "log", "--format=raw", string(onto)+".."+string(got)))
			}
			switch tc.want {
			case "onto":
				if got != onto {
					t.Errorf("Rebase = %s; want onto %s", got, onto)
				}
			case "source":
				if got != source {
					t.Errorf("Rebase = %s; want source %s", got, source)
				}
			default:
				checkReplay(t, r, onto, source, got, tc.picks)
			}
		})
	}
}

// checkReplay checks a rebase result independently of git rebase: n
// commits chained on onto, by the rebaser, each with the author and
// message of a commit of source.
func checkReplay(t *testing.T, r *Repo, onto, source, head git.ObjectID, n int) {
	t.Helper()
	ctx := context.Background()
	originals := map[string]Commit{}
	for _, id := range strings.Fields(gittest.Run(t, r.Path(), nil, "rev-list", string(onto)+".."+string(source))) {
		c, err := r.ReadCommit(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		originals[c.Message] = c
	}
	cur := head
	for i := 0; i < n; i++ {
		c, err := r.ReadCommit(ctx, string(cur))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.ParentIDs) != 1 {
			t.Fatalf("commit %s has parents %q", cur, c.ParentIDs)
		}
		orig, ok := originals[c.Message]
		switch {
		case !ok:
			t.Errorf("commit %s: message %q is none of source's", cur, c.Message)
		case c.Author.Name != orig.Author.Name || c.Author.Email != orig.Author.Email || !c.Author.When.Equal(orig.Author.When) ||
			c.Author.When.Format("-0700") != orig.Author.When.Format("-0700"):
			t.Errorf("commit %s: author %+v; want %+v", cur, c.Author, orig.Author)
		}
		if c.Committer.Name != rebaser.Name || c.Committer.Email != rebaser.Email || !c.Committer.When.Equal(rebaser.When) {
			t.Errorf("commit %s: committer %+v", cur, c.Committer)
		}
		cur = git.ObjectID(c.ParentIDs[0])
	}
	if cur != onto {
		t.Errorf("after %d commits: %s; want onto %s", n, cur, onto)
	}
}

// repoState is what a failed rebase must leave as it was: the refs,
// the work trees git knows, and every file of the repository outside
// objects/ (temporary object files, which go in the repository's folder,
// included).
func repoState(t *testing.T, r *Repo) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(gittest.Run(t, r.Path(), nil, "for-each-ref") + "\n")
	b.WriteString(gittest.Run(t, r.Path(), nil, "worktree", "list", "--porcelain") + "\n")
	err := filepath.WalkDir(r.Path(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "objects" {
			return filepath.SkipDir
		}
		b.WriteString(p + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRepo_Rebase_conflict(t *testing.T) {
	ctx := context.Background()
	r, root := mergeRepo(t)
	h := history{t, r}
	base := h.commit("main", gittest.Files{"a.txt": lines(5, nil), "b.txt": "b\n"})
	h.fork("source", base)
	onto := h.commit("main", gittest.Files{"a.txt": lines(5, map[int]string{3: "upstream"})})
	h.commit("source", gittest.Files{"b.txt": "b2\n"})
	bad := h.commit("source", gittest.Files{"a.txt": lines(5, map[int]string{3: "source"})})
	source := h.commit("source", gittest.Files{"c.txt": "c\n"})
	before := repoState(t, r)

	_, err := r.Rebase(ctx, onto, source, rebaser)
	if !errors.Is(err, ErrMergeConflict) {
		t.Fatalf("err %v; want ErrMergeConflict", err)
	}
	if !strings.Contains(err.Error(), `"a.txt"`) || !strings.Contains(err.Error(), string(bad)) {
		t.Errorf("error %q; want it to name a.txt and commit %s", err, bad)
	}
	if _, ok := gitRebase(t, r.Path(), onto, source, rebaser); ok {
		t.Error("git rebase succeeded where Rebase found a conflict")
	}
	if after := repoState(t, r); after != before {
		t.Errorf("repository changed:\n%s\nwas:\n%s", after, before)
	}
	if wt := gittest.Run(t, r.Path(), nil, "worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("work trees:\n%s", wt)
	}
	checkNoGitCommands(t, root)
}

// checkNoGitCommands fails when a git process other than the warm ones
// (cat-file, hash-object, mktree, update-ref) still works under root.
func checkNoGitCommands(t *testing.T, root string) {
	t.Helper()
	procs, err := leaktest.GitProcessesIn(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if !strings.Contains(p.Cmdline, "--batch") && !strings.Contains(p.Cmdline, "--stdin") {
			t.Errorf("git process left: %d %s (%s)", p.PID, p.Cmdline, p.State)
		}
	}
}

func TestRepo_Rebase_canceled(t *testing.T) {
	r, root := mergeRepo(t)
	h := history{t, r}
	base := h.commit("main", gittest.Files{"a.txt": "a\n"})
	h.fork("source", base)
	onto := h.commit("main", gittest.Files{"a.txt": "a2\n"})
	var source git.ObjectID
	for i := 0; i < 150; i++ {
		source = h.commit("source", gittest.Files{"f" + strconv.Itoa(i): "x\n"})
	}
	before := repoState(t, r)

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.Rebase(ctx, onto, source, rebaser); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v; want context.Canceled", err)
		}
	})
	t.Run("midway", func(t *testing.T) {
		// 150 commits take one merge-tree process each: far longer than
		// the wait before the cancel.
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(50*time.Millisecond, cancel)
		defer timer.Stop()
		start := time.Now()
		_, err := r.Rebase(ctx, onto, source, rebaser)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v after %v; want context.Canceled", err, time.Since(start))
		}
	})
	if after := repoState(t, r); after != before {
		t.Errorf("repository changed:\n%s\nwas:\n%s", after, before)
	}
	checkNoGitCommands(t, root)
	// The same rebase, not canceled, still works.
	if _, err := r.Rebase(context.Background(), onto, source, rebaser); err != nil {
		t.Fatal(err)
	}
}

func TestRepo_Rebase_badInput(t *testing.T) {
	ctx := context.Background()
	r, _ := mergeRepo(t)
	c := commitIn(t, r, gittest.Files{"a": "a\n"}, gittest.Branch("main"))
	for _, pair := range [][2]git.ObjectID{{"main", c}, {c, "--exec=true"}, {c, git.ObjectID(strings.Repeat("4", 40))}} {
		if _, err := r.Rebase(ctx, pair[0], pair[1], rebaser); err == nil {
			t.Errorf("Rebase(%q, %q): no error", pair[0], pair[1])
		}
	}
}

// TestMain fails the package's tests when they leave goroutines or git
// processes behind.
func TestMain(m *testing.M) { leaktest.Main(m) }
