package gitrepo

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/gittest"
)

// gitIn runs the real git in dir for building test histories.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, nil, args...)
}

// TestLastCommit_matchesRevList builds a random history (edits, deletions,
// re-additions, folders replaced by files, mode changes, merges) and checks
// that LastCommit answers what `git rev-list -1 <commit> -- <path>` does,
// for every path at many commits.
func TestLastCommit_matchesRevList(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	r, err := s.Open("default", HashedPath("", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "w")
	gitIn(t, filepath.Dir(w), "init", "-q", "-b", "main", w)
	rnd := rand.New(rand.NewSource(3))
	names := []string{"a.txt", "b.txt", "d/x.txt", "d/y.txt", "d/e/z.txt", "f/g.txt", "top"}
	write := func(name, content string) {
		p := filepath.Join(w, name)
		for d := filepath.Dir(p); d != w; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
				os.Remove(d) // a file stands where a folder goes
			}
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		write(n, "v0 "+n)
	}
	gitIn(t, w, "add", "-A")
	gitIn(t, w, "commit", "-q", "-m", "root")
	var commits []string
	for i := 0; i < 60; i++ {
		switch k := rnd.Intn(10); {
		case k < 5:
			write(names[rnd.Intn(len(names))], fmt.Sprintf("v%d", i))
		case k == 5:
			os.RemoveAll(filepath.Join(w, names[rnd.Intn(len(names))]))
		case k == 6:
			// A folder becomes a file, or back.
			if fi, err := os.Stat(filepath.Join(w, "f")); err == nil && fi.IsDir() {
				os.RemoveAll(filepath.Join(w, "f"))
				write("f", "now a file")
			} else {
				os.RemoveAll(filepath.Join(w, "f"))
				write("f/g.txt", fmt.Sprintf("back %d", i))
			}
		case k == 7:
			if p := filepath.Join(w, "a.txt"); fileExists(p) {
				os.Chmod(p, 0o755)
			}
		case k == 8:
			// A side branch merged back.
			gitIn(t, w, "checkout", "-q", "-b", fmt.Sprintf("side%d", i))
			write("d/e/z.txt", fmt.Sprintf("side %d", i))
			gitIn(t, w, "add", "-A")
			gitIn(t, w, "commit", "-q", "-m", "side")
			gitIn(t, w, "checkout", "-q", "main")
			write("b.txt", fmt.Sprintf("main %d", i))
			gitIn(t, w, "add", "-A")
			gitIn(t, w, "commit", "-q", "-m", "main side")
			gitIn(t, w, "merge", "-q", "--no-edit", fmt.Sprintf("side%d", i))
			commits = append(commits, gitIn(t, w, "rev-parse", "HEAD"))
			continue
		default:
			write(fmt.Sprintf("new%d.txt", i), "new")
		}
		gitIn(t, w, "add", "-A")
		if gitIn(t, w, "status", "--porcelain") == "" {
			continue
		}
		gitIn(t, w, "commit", "-q", "-m", fmt.Sprintf("c%d", i))
		commits = append(commits, gitIn(t, w, "rev-parse", "HEAD"))
	}
	gitIn(t, w, "push", "-q", r.Path(), "--all")

	checked := 0
	for i, c := range commits {
		if i%3 != 0 && i != len(commits)-1 {
			continue
		}
		paths := strings.Split(gitIn(t, r.Path(), "ls-tree", "-r", "-t", "--name-only", c), "\n")
		for _, p := range paths {
			want := gitIn(t, r.Path(), "rev-list", "--max-count=1", c, "--", p)
			got, err := r.LastCommit(ctx, git.ObjectID(c), p)
			if err != nil {
				t.Fatalf("LastCommit(%s, %s): %v", c[:8], p, err)
			}
			if string(got) != want {
				t.Errorf("LastCommit(%s, %s) = %s, rev-list says %s", c[:8], p, got, want)
			}
			checked++
		}
		if _, err := r.LastCommit(ctx, git.ObjectID(c), "no/such/path"); err != ErrPathNotFound {
			t.Errorf("missing path: %v", err)
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d answers", checked)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestHousekeep packs the loose objects of API commits once there are
// enough, and everything stays readable, including through a process
// that was warm before the pack was made.
func TestHousekeep(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	r, err := s.Open("default", HashedPath("", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	sig := Signature{Name: "T", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	var first, tip git.ObjectID
	for i := 0; i < 90; i++ {
		id, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: tip, Author: sig, Committer: sig, Message: fmt.Sprintf("c%d", i),
			Files: []FileWrite{{Path: fmt.Sprintf("d%d/f%d.txt", i%7, i), Content: []byte(fmt.Sprint(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = id
		}
		tip = id
		if i == 10 {
			if done, err := r.Optimize(ctx, OptimizeOptions{}); err != nil || done.Repack != "" {
				t.Fatalf("early housekeeping: %+v, %v", done, err)
			}
		}
	}
	if _, err := r.ReadCommit(ctx, string(first)); err != nil { // warms a cat-file process
		t.Fatal(err)
	}
	done, err := r.Optimize(ctx, OptimizeOptions{})
	if err != nil || done.Repack != "incremental" {
		t.Fatalf("housekeeping: %+v, %v", done, err)
	}
	if out := gitIn(t, r.Path(), "count-objects", "-v"); !strings.Contains(out, "count: 0\n") {
		t.Errorf("loose objects left:\n%s", out)
	}
	for _, id := range []git.ObjectID{first, tip} {
		if _, err := r.ReadCommit(ctx, string(id)); err != nil {
			t.Errorf("read %s after packing: %v", id, err)
		}
	}
	if got, err := r.LastCommit(ctx, tip, "d0/f0.txt"); err != nil || got != first {
		t.Errorf("last commit after packing %s %v", got, err)
	}
	if done, err := r.Optimize(ctx, OptimizeOptions{}); err != nil || done.Repack != "" {
		t.Errorf("second housekeeping: %+v, %v", done, err)
	}
}
