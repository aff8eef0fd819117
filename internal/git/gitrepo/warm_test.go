package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/git"
	"quarry/internal/leaktest"
)

// gitProcesses lists the git processes descending from this test process
// that work under root, read from /proc (not from any counter of ours).
// A zombie git child counts wherever it worked: it was ended and never
// gitProcesses lists the git processes descending from this test process
// that work under root (and git zombies anywhere), read from /proc, not
// from the budget's counters.
func gitProcesses(t testing.TB, root string) []int {
	t.Helper()
	procs, err := leaktest.GitProcessesIn(root)
	if err != nil {
		t.Fatalf("list git processes: %v", err)
	}
	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.PID
	}
	return pids
}

// describe says what the processes are, for failure messages.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		cmd, _ := os.ReadFile(dir + "/cmdline")
		cwd, _ := os.Readlink(dir + "/cwd")
		stat, _ := os.ReadFile(dir + "/stat")
		fmt.Fprintf(&b, "\n\t%d %q in %s (%.40s)", pid, strings.ReplaceAll(string(cmd), "\x00", " "), cwd, stat)
	}
	return b.String()
}

// waitGitProcesses waits until at most want git processes run under root
// and returns how many do at the deadline.
func waitGitProcesses(t testing.TB, root string, want int, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n := len(gitProcesses(t, root))
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reapers counts the goroutines that end idle git processes (by their
// creator: one not yet scheduled shows no frame of its own).
func reapers() int { return leaktest.CountCreatedBy("quarry/internal/git/catfile.NewBudget") }

func storagesWith(t *testing.T, opts Options) (*Storages, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStoragesWith(r, map[string]string{"default": filepath.Join(dir, "repos")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, dir
}

var testSig = Signature{Name: "A U Thor", Email: "a@example.com", When: time.Unix(1700000000, 0)}

// TestStorages_warmProcessesBounded creates many repositories, commits to
// some and reads from all of them through the real code paths (one by one,
// then concurrently), and counts the git processes in /proc after every
// step: never more than the maximum, and none once the idle timeout has
// passed without traffic.
func TestStorages_warmProcessesBounded(t *testing.T) {
	const max, repos = 12, 160
	idle := 300 * time.Millisecond
	s, root := storagesWith(t, Options{MaxProcesses: max, IdleTimeout: idle})
	ctx := context.Background()
	peak := 0
	check := func(step string) {
		t.Helper()
		pids := gitProcesses(t, root)
		if len(pids) > max {
			t.Fatalf("after %s: %d git processes; want at most %d (budget %+v):%s", step, len(pids), max, s.WarmProcesses(), describe(pids))
		}
		if st := s.WarmProcesses(); st.Warm > max || st.Busy != 0 {
			t.Fatalf("after %s: budget %+v; want at most %d warm, none busy", step, st, max)
		}
		peak = maxInt(peak, len(pids))
	}
	all := make([]*Repo, repos)
	tips := make([]git.ObjectID, repos)
	start := time.Now()
	for i := range all {
		r, err := s.Open("default", HashedPath("", int64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		all[i] = r
		if err := r.Create(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("create %d", i))
		if i%3 == 0 {
			// Reads the parent's trees through cat-file while the
			// writers store objects, then moves the ref.
			tips[i], err = r.Commit(ctx, CommitRequest{Branch: "main", Author: testSig, Committer: testSig, Message: "first",
				Files: []FileWrite{{Path: "README.md", Content: []byte("# " + strconv.Itoa(i) + "\n")}, {Path: "src/a.txt", Content: []byte("a")}}})
			if err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("commit %d", i))
			if _, err := r.Tree(ctx, tips[i], "src", false); err != nil {
				t.Fatal(err)
			}
		} else if _, err := r.CommitID(ctx, "main"); !errors.Is(err, ErrRefNotFound) {
			t.Fatalf("empty repository %d: %v", i, err)
		}
		check(fmt.Sprintf("read %d", i))
	}
	st := s.WarmProcesses()
	t.Logf("%d repositories in %v: peak %d git processes (max %d), budget %+v", repos, time.Since(start).Round(time.Millisecond), peak, max, st)

	// Eight workers over every repository at once: reads of commits
	// and trees, and commits on the repositories that have a branch.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < repos; i += 8 {
				r := all[i]
				if tips[i] == "" {
					if _, err := r.CommitID(ctx, "main"); !errors.Is(err, ErrRefNotFound) {
						errs <- fmt.Errorf("repository %d: %v", i, err)
						return
					}
					continue
				}
				if _, err := r.ReadCommit(ctx, "main"); err != nil {
					errs <- err
					return
				}
				if i%2 == 0 {
					next, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: tips[i], Author: testSig, Committer: testSig, Message: "second",
						Files: []FileWrite{{Path: "src/b.txt", Content: []byte(strconv.Itoa(i))}}})
					if err != nil {
						errs <- err
						return
					}
					tips[i] = next
				}
				if _, rd, err := r.OpenObject(ctx, string(tips[i])+":README.md"); err != nil {
					errs <- err
					return
				} else if _, err := io.Copy(io.Discard, rd); err != nil || rd.Close() != nil {
					errs <- fmt.Errorf("read README.md of %d: %v", i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check("concurrent reads and commits")
	for i, r := range all {
		if tips[i] == "" {
			continue
		}
		if info, data, err := r.ReadObject(ctx, string(tips[i])+":README.md"); err != nil || string(data) != "# "+strconv.Itoa(i)+"\n" {
			t.Fatalf("README.md of %d: %+v %q %v", i, info, data, err)
		}
		check(fmt.Sprintf("re-read %d", i))
	}
	st = s.WarmProcesses()
	t.Logf("after concurrent work and a second pass: peak %d git processes, budget %+v", peak, st)
	if st.Evicted == 0 {
		t.Errorf("no process was evicted; the test did not fill the budget")
	}

	// No traffic: the reaper ends every process.
	idleSince := time.Now()
	if n := waitGitProcesses(t, root, 0, idle+5*time.Second); n != 0 {
		t.Fatalf("%d git processes after %v without traffic; want 0:%s", n, time.Since(idleSince), describe(gitProcesses(t, root)))
	}
	t.Logf("no git process %v after the last use (idle timeout %v)", time.Since(idleSince).Round(time.Millisecond), idle)
	// The places are freed just after the processes end.
	for deadline := time.Now().Add(time.Second); s.WarmProcesses().Warm != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.WarmProcesses(); st.Warm != 0 || st.Idle != 0 || st.Reaped == 0 {
		t.Errorf("budget after the idle timeout %+v; want nothing warm, some reaped", st)
	}
	// And the storages still work afterwards.
	if _, err := all[0].ReadCommit(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	check("read after reaping")
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestStorages_commitWithFullBudget: a commit holds a cat-file process
// while its writers run; with every warm place busy the writers start all
// the same (and end after use) instead of waiting.
func TestStorages_commitWithFullBudget(t *testing.T) {
	s, root := storagesWith(t, Options{MaxProcesses: 1, IdleTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		r, _ := s.Open("default", HashedPath("", int64(100+w)))
		if err := r.Create(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent := git.ObjectID("")
			for j := 0; j < 5; j++ {
				c, err := r.Commit(ctx, CommitRequest{Branch: "main", Parent: parent, Author: testSig, Committer: testSig, Message: "m",
					Files: []FileWrite{{Path: "d/f" + strconv.Itoa(j), Content: []byte{byte(j)}}}})
				if err != nil {
					errs <- err
					return
				}
				parent = c
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("commits with a budget of one process did not finish: deadlock")
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(gitProcesses(t, root)); n > 1 {
		t.Errorf("%d git processes after the commits; want at most 1", n)
	}
	if st := s.WarmProcesses(); st.Warm > 1 || st.Busy != 0 {
		t.Errorf("budget %+v; want at most one warm process, none busy", st)
	}
}

// TestStorages_close: Close ends every idle process (readers and writers)
// at once and stops the reaper; a stream still being read keeps its
// process until it is closed, and the storages work on without warm
// processes.
func TestStorages_close(t *testing.T) {
	before := reapers()
	s, root := storagesWith(t, Options{MaxProcesses: 16, IdleTimeout: time.Hour})
	if got := reapers(); got != before+1 {
		t.Fatalf("%d reaper goroutines after NewStoragesWith; want %d", got, before+1)
	}
	ctx := context.Background()
	var streams []io.ReadCloser
	var repos []*Repo
	for i := 0; i < 3; i++ {
		r, _ := s.Open("default", HashedPath("", int64(200+i)))
		if err := r.Create(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("0123456789", 2*smallObject/10) // over smallObject: a stream
		c, err := r.Commit(ctx, CommitRequest{Branch: "main", Author: testSig, Committer: testSig, Message: "m",
			Files: []FileWrite{{Path: "big", Content: []byte(big)}}})
		if err != nil {
			t.Fatal(err)
		}
		_, rd, err := r.OpenObject(ctx, string(c)+":big")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rd, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, rd)
		repos = append(repos, r)
	}
	warm := len(gitProcesses(t, root))
	if warm < 5 {
		t.Fatalf("%d git processes before Close; want the writers and readers warm", warm)
	}
	s.Close()
	if got := reapers(); got != before {
		t.Errorf("%d reaper goroutines after Close; want %d", got, before)
	}
	if n := len(gitProcesses(t, root)); n != len(streams) {
		t.Errorf("%d git processes after Close with %d streams open (from %d); want %d", n, len(streams), warm, len(streams))
	}
	for _, rd := range streams {
		if _, err := io.Copy(io.Discard, rd); err != nil {
			t.Fatal(err)
		}
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(gitProcesses(t, root)); n != 0 {
		t.Errorf("%d git processes after the streams closed; want 0", n)
	}
	// Still usable, but nothing stays warm.
	if _, err := repos[0].Commit(ctx, CommitRequest{Branch: "main", Parent: mustCommitID(t, repos[0]), Author: testSig, Committer: testSig,
		Message: "after close", Files: []FileWrite{{Path: "x", Content: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(gitProcesses(t, root)); n != 0 {
		t.Errorf("%d git processes after a commit on closed storages; want 0", n)
	}
	s.Close() // twice is harmless
}

func mustCommitID(t *testing.T, r *Repo) git.ObjectID {
	t.Helper()
	id, err := r.CommitID(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStorages_removeEndsProcesses: removing a repository ends its warm
// processes and leaves the others warm.
func TestStorages_removeEndsProcesses(t *testing.T) {
	s, root := storagesWith(t, Options{MaxProcesses: 16, IdleTimeout: time.Hour})
	ctx := context.Background()
	var repos []*Repo
	for i := 0; i < 2; i++ {
		r, _ := s.Open("default", HashedPath("", int64(300+i)))
		if err := r.Create(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(ctx, CommitRequest{Branch: "main", Author: testSig, Committer: testSig, Message: "m",
			Files: []FileWrite{{Path: "f", Content: []byte("f")}}}); err != nil {
			t.Fatal(err)
		}
		repos = append(repos, r)
	}
	each := len(gitProcesses(t, repos[0].Path()))
	if each != 5 {
		t.Fatalf("%d git processes in one repository after a commit; want 5 (cat-file and four writers)", each)
	}
	if err := repos[0].Remove(); err != nil {
		t.Fatal(err)
	}
	if n := len(gitProcesses(t, repos[0].Path())); n != 0 {
		t.Errorf("%d git processes of the removed repository; want 0", n)
	}
	if n := len(gitProcesses(t, root)); n != each {
		t.Errorf("%d git processes left; want the %d of the other repository", n, each)
	}
}
