package packcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"quarry/internal/git/gittest"
)

// lockedBuffer is a client's output written by a hook in another
// goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newCache(t *testing.T, maxBytes int64) *Cache {
	c, err := New(t.TempDir(), maxBytes, 5*time.Minute, "git version test")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answer produces a fixed answer, counting its calls.
func answer(s string, calls *int, keep bool) func(io.Writer) (bool, error) {
	return func(w io.Writer) (bool, error) {
		*calls++
		_, err := io.WriteString(w, s)
		return keep, err
	}
}

func TestServe_missThenHit(t *testing.T) {
	c := newCache(t, 1<<20)
	calls := 0
	for i, want := range []Counters{{Misses: 1}, {Misses: 1, Hits: 1}} {
		var out bytes.Buffer
		if err := c.Serve(context.Background(), "k", &out, answer("PACK-1", &calls, true)); err != nil || out.String() != "PACK-1" {
			t.Fatalf("request %d: %q, %v", i, out.String(), err)
		}
		if got := c.Counters(); got != want {
			t.Errorf("request %d: counters %+v; want %+v", i, got, want)
		}
	}
	if calls != 1 {
		t.Errorf("produced %d times; want 1", calls)
	}
	// Another key is another answer; one not to keep is produced each time.
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		if err := c.Serve(context.Background(), "other", &out, answer("PACK-2", &calls, false)); err != nil || out.String() != "PACK-2" {
			t.Fatalf("other %d: %q, %v", i, out.String(), err)
		}
	}
	if calls != 3 {
		t.Errorf("produced %d times; want 3", calls)
	}
}

func TestServe_pastTheBoundIsNotKept(t *testing.T) {
	c := newCache(t, 10)
	calls := 0
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		if err := c.Serve(context.Background(), "k", &out, answer("PACK-0123456789", &calls, true)); err != nil || out.String() != "PACK-0123456789" {
			t.Fatalf("request %d: %q, %v", i, out.String(), err)
		}
	}
	if got := c.Counters(); calls != 2 || got != (Counters{Fallbacks: 2}) {
		t.Errorf("produced %d times, counters %+v; want 2 and 2 fallbacks", calls, got)
	}
	if ents, _ := filepath.Glob(filepath.Join(c.dir, "k*")); len(ents) != 0 {
		t.Errorf("entries left: %v", ents)
	}
}

func TestCache_keyTakesEveryPart(t *testing.T) {
	c := newCache(t, 1)
	d, _ := New(t.TempDir(), 1, time.Minute, "git version other")
	base := c.Key([]byte("ab"), []byte("c"))
	for name, k := range map[string]string{
		"split":       c.Key([]byte("a"), []byte("bc")),
		"more":        c.Key([]byte("ab"), []byte("c"), nil),
		"git version": d.Key([]byte("ab"), []byte("c")),
	} {
		if k == base {
			t.Errorf("%s: same key", name)
		}
	}
}

// TestServe_follower: a request that finds the entry being written follows
// it, and learns the producer's outcome.
func TestServe_follower(t *testing.T) {
	for _, tc := range []struct {
		name      string
		written   string // what the producer writes before it ends
		end       func(f *os.File, part, pack string)
		wantErr   error
		wantOut   string
		wantCount Counters
	}{
		{"finished", "PACK-streamed", func(f *os.File, part, pack string) { os.Rename(part, pack) }, nil,
			"PACK-streamed", Counters{Hits: 1}},
		{"finished, then evicted", "PACK-streamed", func(f *os.File, part, pack string) { os.Rename(part, pack); os.Remove(pack) }, nil,
			"PACK-streamed", Counters{Hits: 1}},
		{"failed before a byte: the follower produces", "", func(f *os.File, part, pack string) { f.Truncate(0); os.Remove(part) }, nil,
			"PACK-own", Counters{Fallbacks: 1}},
		{"failed mid-stream", "PACK-part", func(f *os.File, part, pack string) { f.Truncate(0); os.Remove(part) }, ErrBroken,
			"PACK-part", Counters{}},
		{"killed mid-stream", "PACK-part", func(f *os.File, part, pack string) {}, ErrBroken,
			"PACK-part", Counters{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, 1<<20)
			part, pack := entryPaths(c.dir, "k")
			f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			var out lockedBuffer
			done := make(chan error, 1)
			calls := 0
			go func() { done <- c.Serve(context.Background(), "k", &out, answer("PACK-own", &calls, true)) }()
			f.WriteString(tc.written)
			deadline := time.Now().Add(10 * time.Second)
			for out.String() != tc.written || openCount(part) < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("the follower sent %q; want %q", out.String(), tc.written)
				}
				time.Sleep(time.Millisecond)
			}
			tc.end(f, part, pack)
			f.Close() // lets go of the lock, as a producer that ends
			select {
			case err := <-done:
				if !errors.Is(err, tc.wantErr) || out.String() != tc.wantOut {
					t.Errorf("%q, %v; want %q, %v", out.String(), err, tc.wantOut, tc.wantErr)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the follower did not end")
			}
			if got := c.Counters(); got != tc.wantCount {
				t.Errorf("counters %+v; want %+v", got, tc.wantCount)
			}
		})
	}
}

// TestServe_concurrent: requests at once share one production.
func TestServe_concurrent(t *testing.T) {
	c := newCache(t, 1<<20)
	release := make(chan struct{})
	var mu sync.Mutex
	calls := 0
	produce := func(w io.Writer) (bool, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		io.WriteString(w, "PACK-")
		<-release
		_, err := io.WriteString(w, "rest")
		return true, err
	}
	outs := make([]lockedBuffer, 8)
	errs := make(chan error, len(outs))
	for i := range outs {
		go func(i int) { errs <- c.Serve(context.Background(), "k", &outs[i], produce) }(i)
	}
	// All follow the entry being written (the producer's descriptor and
	// seven followers').
	part, _ := entryPaths(c.dir, "k")
	for deadline := time.Now().Add(10 * time.Second); openCount(part) < len(outs); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests on the entry; want %d", openCount(part), len(outs))
		}
	}
	close(release)
	for range outs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs {
		if outs[i].String() != "PACK-rest" {
			t.Errorf("request %d: %q", i, outs[i].String())
		}
	}
	if got := c.Counters(); calls != 1 || got.Misses != 1 || got.Hits != 7 {
		t.Errorf("produced %d times, counters %+v; want 1 production and 7 hits", calls, got)
	}
}

func TestRefsState_movesWithARef(t *testing.T) {
	repo := gittest.NewRepo(t)
	gittest.Commit(t, repo, gittest.Files{"a": "a\n"}, gittest.Branch("main"))
	before, err := RefsState(repo)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := RefsState(repo)
	if !bytes.Equal(before, again) {
		t.Fatal("the state of an unchanged repository moved")
	}
	gittest.Commit(t, repo, gittest.Files{"b": "b\n"}, gittest.Branch("other"))
	after, _ := RefsState(repo)
	if bytes.Equal(before, after) {
		t.Error("the state did not move with a new branch")
	}
}

// openCount is how many descriptors of this process have path open.
func openCount(path string) int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == path {
			n++
		}
	}
	return n
}

func TestSweep(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	write := func(name string, size int, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	expired := write("e"+packSuffix, 10, 10*time.Minute)
	oldest := write("o"+packSuffix, 400, 3*time.Minute)
	newer := write("n"+packSuffix, 400, time.Minute)
	stale := write("s"+partSuffix, 10, 2*time.Minute)
	busy := write("b"+partSuffix, 100, 2*time.Minute)
	bf, err := os.Open(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	if err := syscall.Flock(int(bf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := sweep(dir, 600, 5*time.Minute, now); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{expired: false, oldest: false, newer: true, stale: false, busy: true} {
		_, err := os.Stat(p)
		if got := err == nil; got != want {
			t.Errorf("%s kept: %v; want %v", filepath.Base(p), got, want)
		}
	}
	if c, _ := readCounters(dir); c.Evictions != 2 {
		t.Errorf("evictions %d; want 2", c.Evictions)
	}
}

// BenchmarkRefsState reads the state of a repository with 2,000 loose
// refs (the key of every shared clone takes it).
func BenchmarkRefsState(b *testing.B) {
	repo := gittest.NewRepo(b)
	c := gittest.Commit(b, repo, gittest.Files{"a": "a\n"}, gittest.Branch("main"))
	dir := filepath.Join(repo, "refs", "merge-requests")
	for i := 0; i < 2000; i++ {
		d := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "head"), []byte(c+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := RefsState(repo); err != nil {
			b.Fatal(err)
		}
	}
}
