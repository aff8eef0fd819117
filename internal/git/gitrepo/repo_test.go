package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/git"
)

func storages(t *testing.T) *Storages {
	t.Helper()
	dir := t.TempDir()
	r, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStorages(r, map[string]string{"default": filepath.Join(dir, "repos")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestHashedPath(t *testing.T) {
	p := HashedPath("", 1)
	if p != "@hashed/6b/86/6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b.git" {
		t.Errorf("hashed path %q", p)
	}
	if w := WikiPath(p); w != "@hashed/6b/86/6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b.wiki.git" {
		t.Errorf("wiki path %q", w)
	}
	if w := GroupWikiPath(1); w != "@groups/6b/86/6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b.wiki.git" {
		t.Errorf("group wiki path %q", w)
	}
	if w := SnippetPath(1); w != "@snippets/6b/86/6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b.git" {
		t.Errorf("snippet path %q", w)
	}
}

func TestRepo_createCommitCopy(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	r, err := s.Open("default", HashedPath("", 7))
	if err != nil {
		t.Fatal(err)
	}
	if r.Exists() {
		t.Fatal("exists before create")
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if empty, err := r.Empty(ctx); err != nil || !empty {
		t.Fatalf("empty = %v, %v", empty, err)
	}
	sig := Signature{Name: "A U Thor", Email: "a@example.com", When: time.Unix(1700000000, 0)}
	c1, err := r.Commit(ctx, CommitRequest{Branch: "main", Files: []FileWrite{{Path: "README.md", Content: []byte("# hi\n")}},
		Author: sig, Committer: sig, Message: "Initial commit"})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: c1, Files: []FileWrite{{Path: "a/b/c.txt", Content: []byte("deep")}},
		Author: sig, Committer: sig, Message: "Nested"})
	if err != nil {
		t.Fatal(err)
	}
	// A writer that built on the old tip loses.
	_, err = r.Commit(ctx, CommitRequest{Branch: "main", Parent: c1, Files: []FileWrite{{Path: "x", Content: []byte("x")}},
		Author: sig, Committer: sig, Message: "Stale"})
	if !errors.Is(err, ErrRefMoved) {
		t.Fatalf("stale commit: %v", err)
	}
	if n, err := r.CommitCount(ctx, "main"); err != nil || n != 2 {
		t.Errorf("commit count %d, %v", n, err)
	}
	_ = c2
	for path, want := range map[string]bool{"README.md": true, "a/b/c.txt": true, "nope": false} {
		if got, err := r.HasFile(ctx, "main", path); err != nil || got != want {
			t.Errorf("HasFile(%s) = %v, %v", path, got, err)
		}
	}
	langCommit, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: c2, Files: []FileWrite{
		{Path: "main.go", Content: []byte(strings.Repeat("g", 300))}, {Path: "lib/x.rb", Content: []byte(strings.Repeat("r", 100))}},
		Author: sig, Committer: sig, Message: "code"})
	if err != nil {
		t.Fatal(err)
	}
	langs, err := r.Languages(ctx, string(langCommit))
	if err != nil || langs["Go"] != 75 || langs["Ruby"] != 25 || len(langs) != 2 {
		t.Errorf("languages %v, %v", langs, err)
	}
	c2 = langCommit
	if head, _ := r.HeadBranch(ctx); head != "main" {
		t.Errorf("head %q", head)
	}
	fork, _ := s.Open("default", HashedPath("", 8))
	if err := fork.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if err := fork.CopyFrom(ctx, r); err != nil {
		t.Fatal(err)
	}
	id, ok, err := fork.ResolveCommit(ctx, "main")
	if err != nil || !ok || id != c2 {
		t.Errorf("fork main = %s, %v, %v; want %s", id, ok, err, c2)
	}
	// The real git can clone it.
	out, err := exec.Command("git", "clone", "-q", fork.Path(), filepath.Join(t.TempDir(), "clone")).CombinedOutput()
	if err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	if size, err := fork.Size(); err != nil || size == 0 {
		t.Errorf("size %d, %v", size, err)
	}
	if err := fork.Remove(); err != nil || fork.Exists() {
		t.Errorf("remove: %v", err)
	}
}

// Concurrent writers on one branch: each attempt either lands or reports
// that the branch moved; no commit is lost or overwritten.
func TestRepo_concurrentCommits(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	r, _ := s.Open("default", HashedPath("", 9))
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	sig := Signature{Name: "x", Email: "x@example.com", When: time.Now()}
	base, err := r.Commit(ctx, CommitRequest{Branch: "main", Files: []FileWrite{{Path: "f", Content: []byte("0")}}, Author: sig, Committer: sig, Message: "base"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: base, Files: []FileWrite{{Path: "f", Content: []byte{byte('a' + i)}}},
				Author: sig, Committer: sig, Message: "w"})
			if err == nil {
				mu.Lock()
				landed++
				mu.Unlock()
			} else if !errors.Is(err, ErrRefMoved) {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if landed != 1 {
		t.Errorf("%d commits landed on the same parent; want 1", landed)
	}
	if n, _ := r.CommitCount(ctx, "main"); n != 2 {
		t.Errorf("history has %d commits; want 2", n)
	}
}

func TestCommand_argsSafety(t *testing.T) {
	if _, err := (git.Command{Name: "push"}).CommandLine(); err == nil {
		t.Error("push allowed")
	}
	if _, err := (git.Command{Name: "symbolic-ref", Args: []string{"--upload-pack=x"}}).CommandLine(); err == nil {
		t.Error("option-like argument accepted")
	}
	args, err := (git.Command{Name: "rev-parse", Args: []string{"--all"}}).CommandLine()
	if err != nil || strings.Join(args, " ") != "rev-parse --end-of-options --all" {
		t.Errorf("args %v, %v", args, err)
	}
}

// Create builds a repository aside and renames it into place: racing
// creators make one repository (the others learn it exists), configured;
// a folder a crash left aside is removed once old, kept while young.
func TestRepo_createAside(t *testing.T) {
	ctx := context.Background()
	s := storages(t)
	r, err := s.Open("default", HashedPath("", 11))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(r.Path()), 0o750); err != nil {
		t.Fatal(err)
	}
	old, young := r.Path()+asideSuffix+"0ld", r.Path()+asideSuffix+"y0ung"
	for _, dir := range []string{old, young} {
		if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * asideMaxAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Create(ctx, "main")
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		switch {
		case err == nil:
			made++
		case !errors.Is(err, ErrRepositoryExists):
			t.Errorf("create: %v", err)
		}
	}
	if made != 1 {
		t.Errorf("%d creators made the repository; want 1", made)
	}
	for key, want := range map[string]string{"receive.advertisePushOptions": "true", "gc.auto": "0", "fetch.writeCommitGraph": "true"} {
		out, err := exec.Command("git", "--git-dir", r.Path(), "config", key).Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("config %s = %q, %v; want %q", key, got, err, want)
		}
	}
	if head, err := r.HeadBranch(ctx); err != nil || head != "main" {
		t.Errorf("head %q, %v", head, err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old folder aside is still there: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("the young folder aside was removed: %v", err)
	}
	left, _ := filepath.Glob(r.Path() + asideSuffix + "*")
	if len(left) != 1 {
		t.Errorf("folders aside after the creations: %v; want only the young one", left)
	}
	if err := r.Create(ctx, "main"); !errors.Is(err, ErrRepositoryExists) {
		t.Errorf("create again: %v", err)
	}
	// Housekeeping removes it once it is old too.
	if err := os.Chtimes(young, past, past); err != nil {
		t.Fatal(err)
	}
	r.Tidy()
	if _, err := os.Stat(young); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("housekeeping left the old folder aside: %v", err)
	}
}
