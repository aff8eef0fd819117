package gittest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"quarry/internal/git/gittest"
)

// git asks the real git about repo.
func git(t *testing.T, repo string, args ...string) string {
	t.Helper()
	return gittest.Run(t, repo, nil, append([]string{"--git-dir=" + repo}, args...)...)
}

func TestNewRepo_bareWithMainAsHead(t *testing.T) {
	repo := gittest.NewRepo(t)
	if got := git(t, repo, "rev-parse", "--is-bare-repository"); got != "true" {
		t.Errorf("bare = %q", got)
	}
	if got := git(t, repo, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD = %q; want refs/heads/main", got)
	}
	if got := gittest.Ref(t, repo, "HEAD"); got != "" {
		t.Errorf("HEAD of an empty repository resolves to %q", got)
	}
}

// The same description gives the same ids, in any repository, and the
// second commit builds on the first.
func TestCommit_deterministicHistoryOnBranch(t *testing.T) {
	build := func() (string, string, string) {
		repo := gittest.NewRepo(t)
		c1 := gittest.Commit(t, repo, gittest.Files{"README.md": "hi\n", "src/a.go": "package a\n"},
			gittest.Branch("main"), gittest.Message("first"))
		c2 := gittest.Commit(t, repo, gittest.Files{"src/a.go": "package a // 2\n"},
			gittest.Branch("main"), gittest.Message("second\n\nChangelog: added"))
		return repo, c1, c2
	}
	repo, c1, c2 := build()
	_, d1, d2 := build()
	if c1 != d1 || c2 != d2 {
		t.Fatalf("ids differ between runs: %s %s, then %s %s", c1, c2, d1, d2)
	}
	if got := gittest.Ref(t, repo, "refs/heads/main"); got != c2 {
		t.Errorf("main = %s; want %s", got, c2)
	}
	if got := git(t, repo, "rev-parse", c2+"^"); got != c1 {
		t.Errorf("parent of second = %s; want %s", got, c1)
	}
	if got := git(t, repo, "ls-tree", "-r", "--name-only", c2); got != "README.md\nsrc/a.go" {
		t.Errorf("tree of second:\n%s", got)
	}
	if got := gittest.ReadFile(t, repo, c2, "src/a.go"); got != "package a // 2\n" {
		t.Errorf("src/a.go = %q", got)
	}
	if got := gittest.ReadFile(t, repo, c2, "README.md"); got != "hi\n" {
		t.Errorf("README.md kept from the parent = %q", got)
	}
	if got := git(t, repo, "log", "-1", "--format=%B", c2); got != "second\n\nChangelog: added" {
		t.Errorf("message %q", got)
	}
	want := fmt.Sprintf("%s <%s> %d|%s <%s> %d", gittest.DefaultAuthor.Name, gittest.DefaultAuthor.Email, gittest.BaseTime.Unix(),
		gittest.DefaultCommitter.Name, gittest.DefaultCommitter.Email, gittest.BaseTime.Unix())
	if got := git(t, repo, "log", "-1", "--format=%an <%ae> %at|%cn <%ce> %ct", c1); got != want {
		t.Errorf("first commit signed %q; want %q", got, want)
	}
	if got := git(t, repo, "log", "-1", "--format=%ct", c2); got != fmt.Sprint(gittest.BaseTime.Add(time.Minute).Unix()) {
		t.Errorf("second commit dated %s; want a minute after the first", got)
	}
	// Loose objects only: every write is checked by fsck.
	if out := git(t, repo, "fsck", "--strict", "--no-dangling"); out != "" {
		t.Errorf("fsck: %s", out)
	}
}

func TestCommit_optionsShapeTheCommit(t *testing.T) {
	repo := gittest.NewRepo(t)
	base := gittest.Commit(t, repo, gittest.Files{"a.txt": "a", "d/x.txt": "x", "d/e/y.txt": "y", "f": "file"}, gittest.Branch("main"))
	if got := git(t, repo, "log", "-1", "--format=%s", base); got != "Update a.txt, d/e/y.txt, d/x.txt, f" {
		t.Errorf("default message %q", got)
	}

	when := time.Date(2025, 6, 1, 12, 30, 0, 0, time.FixedZone("", 2*3600))
	c := gittest.Commit(t, repo, gittest.Files{"run.sh": "#!/bin/sh\n", "d": "d is a file now", "f/inner.txt": "f is a folder now"},
		gittest.Branch("main"), gittest.Remove("a.txt"), gittest.Executable("run.sh"), gittest.Symlink("link", "run.sh"),
		gittest.Author("Ann", "ann@example.com"), gittest.Committer("Bot", "bot@example.com"), gittest.At(when))
	tree := git(t, repo, "ls-tree", "-r", c)
	for _, want := range []string{"100755 blob", "\trun.sh", "120000 blob", "\tlink", "\td\n", "\tf/inner.txt"} {
		if !strings.Contains(tree+"\n", want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	for _, gone := range []string{"a.txt", "d/x.txt", "d/e/y.txt", "\tf\n"} {
		if strings.Contains(tree+"\n", gone) {
			t.Errorf("tree still has %q:\n%s", gone, tree)
		}
	}
	if got := gittest.ReadFile(t, repo, c, "link"); got != "run.sh" {
		t.Errorf("symlink target %q", got)
	}
	if got := git(t, repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%aI", c); got != "Ann <ann@example.com>|Bot <bot@example.com>|2025-06-01T12:30:00+02:00" {
		t.Errorf("signatures %q", got)
	}

	// A commit off any branch leaves the refs alone.
	before := git(t, repo, "for-each-ref")
	loose := gittest.Commit(t, repo, gittest.Files{"only.txt": "1"}, gittest.Parents(c), gittest.WholeTree(), gittest.Message("alone"))
	if after := git(t, repo, "for-each-ref"); after != before {
		t.Errorf("refs changed:\n%s\nthen\n%s", before, after)
	}
	if got := git(t, repo, "ls-tree", "-r", "--name-only", loose); got != "only.txt" {
		t.Errorf("whole tree = %q", got)
	}
	if got := git(t, repo, "rev-parse", loose+"^"); got != c {
		t.Errorf("parent = %s; want %s", got, c)
	}
	if got := git(t, repo, "log", "-1", "--format=%ct", loose); got != fmt.Sprint(when.Add(time.Minute).Unix()) {
		t.Errorf("dated %s; want a minute after its parent", got)
	}

	// A merge takes the first parent's tree; a branch can start anywhere.
	side := gittest.Commit(t, repo, gittest.Files{"side.txt": "s"}, gittest.Branch("side"), gittest.Parents(base))
	merge := gittest.Commit(t, repo, gittest.Files{"side.txt": "s"}, gittest.Branch("main"), gittest.Parents("main", "side"),
		gittest.Message("Merge branch 'side'"))
	if got := git(t, repo, "rev-parse", merge+"^1", merge+"^2"); got != c+"\n"+side {
		t.Errorf("merge parents:\n%s", got)
	}
	if got := git(t, repo, "ls-tree", "--name-only", merge); !strings.Contains(got, "run.sh") || !strings.Contains(got, "side.txt") {
		t.Errorf("merge tree:\n%s", got)
	}
	// An empty Parents starts over, even on an existing branch.
	root := gittest.Commit(t, repo, nil, gittest.Branch("side"), gittest.Parents())
	if got := git(t, repo, "rev-list", "--count", "side"); got != "1" || gittest.Ref(t, repo, "side") != root {
		t.Errorf("side after a root commit: %s commits", got)
	}
	if got := git(t, repo, "log", "-1", "--format=%s", root); got != "Empty commit" {
		t.Errorf("empty message %q", got)
	}
	// A name under refs/ is taken as it is.
	mr := gittest.Commit(t, repo, gittest.Files{"mr.txt": "1"}, gittest.Branch("refs/merge-requests/1/head"), gittest.Parents(base))
	if gittest.Ref(t, repo, "refs/merge-requests/1/head") != mr {
		t.Error("refs/merge-requests/1/head not written")
	}
	if out := git(t, repo, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("fsck: %s", out)
	}
}

// A branch "a" is not confused with "a/b" below it.
func TestCommit_branchMatchesExactly(t *testing.T) {
	repo := gittest.NewRepo(t)
	gittest.Commit(t, repo, gittest.Files{"x": "1"}, gittest.Branch("topic/one"))
	c := gittest.Commit(t, repo, gittest.Files{"y": "1"}, gittest.Branch("refs/heads/topic-two"))
	if got := git(t, repo, "rev-list", "--count", c); got != "1" {
		t.Errorf("new branch has %s commits; want 1", got)
	}
}

func TestCommit_oddPaths(t *testing.T) {
	repo := gittest.NewRepo(t)
	names := []string{"with space.txt", `"quoted".txt`, "tab\there", "ünïcode/ß.md", "new\nline"}
	files := gittest.Files{}
	for _, n := range names {
		files[n] = n
	}
	c := gittest.Commit(t, repo, files, gittest.Branch("main"))
	for _, n := range names {
		if got := gittest.ReadFile(t, repo, c, n); got != n {
			t.Errorf("%q holds %q", n, got)
		}
	}
}

func TestTag_lightweightAndAnnotated(t *testing.T) {
	repo := gittest.NewRepo(t)
	c := gittest.Commit(t, repo, gittest.Files{"a": "1"}, gittest.Branch("main"))
	if got := gittest.Tag(t, repo, "v1.0.0", "main", ""); got != c {
		t.Errorf("lightweight tag = %s; want %s", got, c)
	}
	if got := git(t, repo, "cat-file", "-t", "refs/tags/v1.0.0"); got != "commit" {
		t.Errorf("lightweight tag is a %s", got)
	}
	tag := gittest.Tag(t, repo, "v1.1.0", c, "release 1.1.0\n\nnotes")
	if got := git(t, repo, "cat-file", "-t", tag); got != "tag" {
		t.Errorf("annotated tag is a %s", got)
	}
	if got := git(t, repo, "rev-parse", "v1.1.0^{commit}"); got != c {
		t.Errorf("tag peels to %s; want %s", got, c)
	}
	if got := git(t, repo, "for-each-ref", "--format=%(contents)|%(taggername)|%(taggerdate:unix)", "refs/tags/v1.1.0"); got != fmt.Sprintf("release 1.1.0\n\nnotes\n|%s|%d", gittest.DefaultCommitter.Name, gittest.BaseTime.Unix()) {
		t.Errorf("tag object %q", got)
	}
	other := gittest.NewRepo(t)
	gittest.Commit(t, other, gittest.Files{"a": "1"}, gittest.Branch("main"))
	if again := gittest.Tag(t, other, "v1.1.0", "main", "release 1.1.0\n\nnotes"); again != tag {
		t.Errorf("annotated tag id differs between runs: %s, %s", tag, again)
	}
}

func TestRefs_updateAndDelete(t *testing.T) {
	repo := gittest.NewRepo(t)
	c1 := gittest.Commit(t, repo, gittest.Files{"a": "1"}, gittest.Branch("main"))
	c2 := gittest.Commit(t, repo, gittest.Files{"a": "2"}, gittest.Branch("main"))
	if got := gittest.UpdateRef(t, repo, "refs/heads/dev", c1); got != c1 {
		t.Errorf("UpdateRef = %s", got)
	}
	gittest.UpdateRef(t, repo, "refs/heads/dev", "main")
	if got := gittest.Ref(t, repo, "dev"); got != c2 {
		t.Errorf("dev = %s; want %s", got, c2)
	}
	gittest.DeleteRef(t, repo, "refs/heads/dev")
	if got := gittest.Ref(t, repo, "refs/heads/dev"); got != "" {
		t.Errorf("deleted dev = %s", got)
	}
}

// A history of a hundred commits builds on one branch (the time it took
// is logged, not asserted).
func TestCommit_longHistory(t *testing.T) {
	repo := gittest.NewRepo(t)
	start := time.Now()
	for i := range 100 {
		gittest.Commit(t, repo, gittest.Files{fmt.Sprintf("f%d.txt", i%7): fmt.Sprint(i)}, gittest.Branch("main"))
	}
	t.Logf("100 commits in %v", time.Since(start))
	if got := git(t, repo, "rev-list", "--count", "main"); got != "100" {
		t.Errorf("%s commits", got)
	}
}

// Bad descriptions fail the test instead of writing something else.
func TestCommit_refusesBadDescriptions(t *testing.T) {
	for name, c := range map[string]struct {
		files gittest.Files
		opts  []gittest.CommitOption
	}{
		"absolute path":         {gittest.Files{"/a": "1"}, nil},
		"dot dot":               {gittest.Files{"a/../b": "1"}, nil},
		"dot git":               {gittest.Files{".git/config": "1"}, nil},
		"trailing slash":        {gittest.Files{"a/": "1"}, nil},
		"written and removed":   {gittest.Files{"a": "1"}, []gittest.CommitOption{gittest.Remove("a")}},
		"executable not given":  {gittest.Files{"a": "1"}, []gittest.CommitOption{gittest.Executable("b")}},
		"identity with bracket": {gittest.Files{"a": "1"}, []gittest.CommitOption{gittest.Author("a>b", "x@example.com")}},
		"missing parent":        {gittest.Files{"a": "1"}, []gittest.CommitOption{gittest.Parents("no-such-branch")}},
	} {
		t.Run(name, func(t *testing.T) {
			repo := gittest.NewRepo(t)
			ft := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				gittest.Commit(ft, repo, c.files, c.opts...)
			}()
			<-done
			if !ft.failed {
				t.Error("accepted")
			}
		})
	}
}

// fatalRecorder notes a Fatal and ends the goroutine that called it, as
// testing does, without failing the real test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.failed = true
	f.TB.Logf("(expected) "+format, args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Fatal(args ...any) {
	f.failed = true
	f.TB.Log(append([]any{"(expected)"}, args...)...)
	runtime.Goexit()
}
