package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/git"
)

// age moves the times of the ref files back, as if they were written
// long ago (a snapshot is kept only once they have settled).
func age(t *testing.T, r *Repo) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	_ = filepath.Walk(filepath.Join(r.path, "refs"), func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
	_ = os.Chtimes(filepath.Join(r.path, "packed-refs"), old, old)
}

func TestRefSnapshot_followsTheRefFiles(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	var started atomic.Int64
	s.Runner().Observe(func(string, string) { started.Add(1) })
	r, err := s.Open("default", HashedPath("", 41))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	g := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_DIR="+r.path, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.com",
			"GIT_COMMITTER_DATE=1700000000 +0100")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tree := g("mktree")
	c1 := g("commit-tree", "-m", "one\n\nbody", tree)
	c2 := g("commit-tree", "-p", c1, "-m", "two", tree)
	other := g("commit-tree", "-p", c1, "-m", "other", tree)
	g("update-ref", "refs/heads/main", c2)
	g("update-ref", "refs/heads/dir/old", c1)
	g("update-ref", "refs/heads/side", other)
	age(t, r)

	snap := func() *RefSnapshot {
		t.Helper()
		sn, err := r.RefSnapshot(ctx, "refs/heads/")
		if err != nil {
			t.Fatal(err)
		}
		return sn
	}
	names := func(sn *RefSnapshot) string {
		var n []string
		for _, ref := range sn.Refs {
			n = append(n, ref.Name+"="+string(ref.Commit.ID)[:7])
		}
		return strings.Join(n, ",")
	}
	s1 := snap()
	if got, want := names(s1), "dir/old="+c1[:7]+",main="+c2[:7]+",side="+other[:7]; got != want {
		t.Fatalf("refs %s; want %s", got, want)
	}
	if m, _ := s1.Find("dir/old"); m.Commit.Message != "one\n\nbody\n" || m.Commit.Committer.Name != "C" || m.Commit.Committer.When.Unix() != 1700000000 || len(m.Commit.ParentIDs) != 0 {
		t.Errorf("dir/old commit %+v", m.Commit)
	}
	before := started.Load()
	if s2 := snap(); s2 != s1 || started.Load() != before {
		t.Errorf("unchanged refs: a new snapshot (%v) or git started (%d)", s2 != s1, started.Load()-before)
	}
	merged, err := r.MergedInto(ctx, s1, git.ObjectID(c2), []string{"dir/old", "side", "missing"})
	if err != nil || len(merged) != 2 || !merged["dir/old"] || merged["side"] {
		t.Fatalf("merged %v, %v", merged, err)
	}
	before = started.Load()
	if again, _ := r.MergedInto(ctx, s1, git.ObjectID(c2), []string{"side", "dir/old"}); started.Load() != before || !again["dir/old"] || again["side"] {
		t.Errorf("merged again: %v, %d processes", again, started.Load()-before)
	}

	// Each kind of ref write shows in the next snapshot.
	for _, step := range []struct {
		name string
		do   func()
		want string
	}{
		{"a ref in a new folder", func() { g("update-ref", "refs/heads/dir/sub/new", c2) },
			"dir/old=" + c1[:7] + ",dir/sub/new=" + c2[:7] + ",main=" + c2[:7] + ",side=" + other[:7]},
		{"a ref moved", func() { g("update-ref", "refs/heads/side", c1) },
			"dir/old=" + c1[:7] + ",dir/sub/new=" + c2[:7] + ",main=" + c2[:7] + ",side=" + c1[:7]},
		{"refs packed", func() { g("pack-refs", "--all") },
			"dir/old=" + c1[:7] + ",dir/sub/new=" + c2[:7] + ",main=" + c2[:7] + ",side=" + c1[:7]},
		{"a packed ref deleted", func() { g("update-ref", "-d", "refs/heads/dir/sub/new") },
			"dir/old=" + c1[:7] + ",main=" + c2[:7] + ",side=" + c1[:7]},
		{"a packed ref moved", func() { g("update-ref", "refs/heads/dir/old", other) },
			"dir/old=" + other[:7] + ",main=" + c2[:7] + ",side=" + c1[:7]},
	} {
		step.do()
		if got := names(snap()); got != step.want {
			t.Errorf("%s: refs %s; want %s", step.name, got, step.want)
		}
		age(t, r)
		if got := names(snap()); got != step.want {
			t.Errorf("%s, settled: refs %s; want %s", step.name, got, step.want)
		}
	}
	// A fresh write is not kept: the next read looks again.
	g("update-ref", "refs/heads/fresh", c1)
	s3 := snap()
	if s3.cached {
		t.Error("a snapshot of refs written just now is kept")
	}
	if _, ok := s3.Find("fresh"); !ok {
		t.Error("fresh branch missing")
	}
}

func TestParseRefSnapshot_bad(t *testing.T) {
	for _, in := range []string{"refs/heads/a\x00x", "refs/heads/a\x00id\x00commit\x00\x00\x0099\x00\nshort\n",
		"refs/heads/a\x00id\x00commit\x00\x00\x00-1\x00\n\n", "refs/heads/a\x00id\x00commit\x00\x00\x002\x00\nabc"} {
		if _, _, err := parseRefSnapshot([]byte(in), "refs/heads/"); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzParseRefSnapshot feeds for-each-ref output of any shape (commit and
// tag objects are users' bytes): never a panic, and a record it accepts
// keeps its name.
func FuzzParseRefSnapshot(f *testing.F) {
	f.Add([]byte("refs/heads/a\x00" + strings.Repeat("1", 40) + "\x00commit\x00\x00\x0011\x00\ntree x\n\nmsg\n"))
	f.Add([]byte("refs/tags/t\x00id\x00tag\x00cid\x00commit\x005\x006\nab\n\ncd\n\nef\n"))
	f.Add([]byte("refs/tags/t\x00id\x00tag\x00tid\x00tag\x000\x000\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, nested, err := parseRefSnapshot(in, "refs/heads/")
		if err != nil {
			return
		}
		for _, i := range nested {
			if i < 0 || i >= len(s.Refs) {
				t.Fatalf("nested index %d of %d refs", i, len(s.Refs))
			}
		}
		for i, r := range s.Refs {
			if j, ok := s.byName[r.Name]; !ok || (j != i && s.Refs[j].Name != r.Name) {
				t.Fatalf("ref %q not found by name", r.Name)
			}
		}
	})
}
