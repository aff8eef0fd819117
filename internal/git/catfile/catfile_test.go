package catfile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
	"quarry/internal/git/gitrepo"
)

func setup(t *testing.T) (*catfile.Pool, *gitrepo.Repo, git.ObjectID) {
	t.Helper()
	dir := t.TempDir()
	runner, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitrepo.NewStorages(runner, map[string]string{"default": filepath.Join(dir, "repos")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	repo, _ := st.Open("default", "r.git")
	ctx := context.Background()
	if err := repo.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	sig := gitrepo.Signature{Name: "a", Email: "a@x", When: time.Unix(1, 0)}
	big := bytes.Repeat([]byte("0123456789"), 100000)
	c, err := repo.Commit(ctx, gitrepo.CommitRequest{Branch: "main", Author: sig, Committer: sig, Message: "m",
		Files: []gitrepo.FileWrite{{Path: "a.txt", Content: []byte("hello\n")}, {Path: "dir/big.bin", Content: big}}})
	if err != nil {
		t.Fatal(err)
	}
	pool := catfile.NewPool(runner, 2)
	t.Cleanup(pool.Close)
	return pool, repo, c
}

func TestPool_infoContentsStream(t *testing.T) {
	pool, repo, c := setup(t)
	ctx := context.Background()
	p, err := pool.Get(ctx, repo.Path())
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.Info("main^{commit}")
	if err != nil || info.OID != c || info.Type != "commit" {
		t.Fatalf("info %+v %v", info, err)
	}
	info, data, err := p.Contents(string(c) + ":a.txt")
	if err != nil || string(data) != "hello\n" || info.Type != "blob" || info.Size != 6 {
		t.Fatalf("contents %+v %q %v", info, data, err)
	}
	if _, err := p.Info("main:nope"); !errors.Is(err, catfile.ErrMissing) {
		t.Fatalf("missing: %v", err)
	}
	// Read part of a big object, close (drains), and keep going.
	info, rd, err := p.Stream("main:dir/big.bin")
	if err != nil || info.Size != 1000000 {
		t.Fatalf("stream %+v %v", info, err)
	}
	buf := make([]byte, 100)
	if _, err := io.ReadFull(rd, buf); err != nil {
		t.Fatal(err)
	}
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, data, err := p.Contents("main:a.txt"); err != nil || string(data) != "hello\n" {
		t.Fatalf("after drain %q %v", data, err)
	}
	pool.Release(p)
	// The same process comes back warm.
	p2, _ := pool.Get(ctx, repo.Path())
	if p2 != p {
		t.Error("process not reused")
	}
	pool.Release(p2)
}

func TestPool_concurrentReaders(t *testing.T) {
	pool, repo, _ := setup(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				p, err := pool.Get(ctx, repo.Path())
				if err != nil {
					t.Error(err)
					return
				}
				if _, data, err := p.Contents("main:a.txt"); err != nil || string(data) != "hello\n" {
					t.Errorf("read %q %v", data, err)
				}
				pool.Release(p)
			}
		}()
	}
	wg.Wait()
}

func TestPool_abandonedProcessIsNotReused(t *testing.T) {
	pool, repo, _ := setup(t)
	ctx := context.Background()
	p, _ := pool.Get(ctx, repo.Path())
	_, rd, err := p.Stream("main:dir/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rd.Read(make([]byte, 10))
	p.Abandon()
	pool.Release(p)
	p2, _ := pool.Get(ctx, repo.Path())
	if p2 == p {
		t.Fatal("abandoned process reused")
	}
	if _, data, err := p2.Contents("main:a.txt"); err != nil || string(data) != "hello\n" {
		t.Fatalf("fresh process %q %v", data, err)
	}
	pool.Release(p2)
}

// TestPool_limit: short reads beyond the limit wait for a release (or
// their context); streams go past the limit.
func TestPool_limit(t *testing.T) {
	pool, repo, _ := setup(t)
	ctx := context.Background()
	a, err := pool.Get(ctx, repo.Path())
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Get(ctx, repo.Path())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := pool.Get(short, repo.Path()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third Get past the limit: %v", err)
	}
	s, err := pool.GetStream(ctx, repo.Path())
	if err != nil {
		t.Fatalf("stream past the limit: %v", err)
	}
	pool.Release(s)
	got := make(chan *catfile.Process)
	go func() {
		p, _ := pool.Get(ctx, repo.Path())
		got <- p
	}()
	pool.Release(a)
	c := <-got
	if c == nil {
		t.Fatal("waiting Get got nothing after a release")
	}
	if _, err := c.Info("HEAD"); err != nil {
		t.Errorf("reused process: %v", err)
	}
	pool.Release(b)
	pool.Release(c)
}
