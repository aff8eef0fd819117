package catfile_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
	"quarry/internal/git/gitrepo"
	"quarry/internal/leaktest"
)

// gitProcesses lists the git processes descending from this test process
// that work under root, read from /proc (not from the budget's counters).
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

// budgetRepos creates n empty repositories (with no warm process left
// behind) and returns a runner and their paths.
func budgetRepos(t *testing.T, n int) (*git.Runner, []string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner, err := git.NewRunner("", filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitrepo.NewStorages(runner, map[string]string{"default": filepath.Join(dir, "repos")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var paths []string
	for i := 0; i < n; i++ {
		r, _ := st.Open("default", gitrepo.HashedPath("", int64(i+1)))
		if err := r.Create(context.Background(), "main"); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, r.Path())
	}
	return runner, paths
}

// counts is how many git processes run in each repository.
func counts(t *testing.T, repos []string) []int {
	t.Helper()
	out := make([]int, len(repos))
	for i, r := range repos {
		out[i] = len(gitProcesses(t, r))
	}
	return out
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// use gets a process of repo, asks it something and releases it.
func use(t *testing.T, pool *catfile.Pool, repo string) *catfile.Process {
	t.Helper()
	p, err := pool.Get(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Info("HEAD"); !errors.Is(err, catfile.ErrMissing) { // empty repository
		t.Fatalf("info HEAD: %v", err)
	}
	pool.Release(p)
	return p
}

// TestBudget_evictsLeastRecentlyUsed: with the budget full, a repository
// that needs a process ends the least recently used idle one, whichever
// repository it serves; recently used ones stay warm.
func TestBudget_evictsLeastRecentlyUsed(t *testing.T) {
	runner, repos := budgetRepos(t, 4)
	a, b, c, d := repos[0], repos[1], repos[2], repos[3]
	budget := catfile.NewBudget(3, time.Hour)
	defer budget.Close()
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	defer pool.Close()

	pa := use(t, pool, a)
	use(t, pool, b)
	use(t, pool, c)
	if got := counts(t, repos); !sameInts(got, []int{1, 1, 1, 0}) {
		t.Fatalf("processes per repository %v; want [1 1 1 0]", got)
	}
	if use(t, pool, a) != pa {
		t.Fatal("a's warm process was not reused")
	}
	// Least recently used now: b, then c, then a.
	use(t, pool, d)
	if got := counts(t, repos); !sameInts(got, []int{1, 0, 1, 1}) {
		t.Fatalf("after d: processes per repository %v; want [1 0 1 1] (b evicted)", got)
	}
	use(t, pool, b)
	if got := counts(t, repos); !sameInts(got, []int{1, 1, 0, 1}) {
		t.Fatalf("after b again: processes per repository %v; want [1 1 0 1] (c evicted)", got)
	}
	if use(t, pool, a) != pa {
		t.Error("a's process was evicted; c's was the least recently used")
	}
	if st := budget.Stats(); st.Warm != 3 || st.Idle != 3 || st.Evicted != 2 {
		t.Errorf("stats %+v; want 3 warm, 3 idle, 2 evicted", st)
	}
}

// TestBudget_busyPastMax: when every warm process is busy a new one still
// starts (nobody waits on the budget) and ends when released.
func TestBudget_busyPastMax(t *testing.T) {
	runner, repos := budgetRepos(t, 2)
	a, b := repos[0], repos[1]
	budget := catfile.NewBudget(1, time.Hour)
	defer budget.Close()
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	defer pool.Close()
	ctx := context.Background()

	pa, err := pool.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *catfile.Process)
	go func() {
		pb, err := pool.Get(ctx, b)
		if err != nil {
			t.Error(err)
		}
		done <- pb
	}()
	var pb *catfile.Process
	select {
	case pb = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Get waited for the budget")
	}
	if got := counts(t, repos); !sameInts(got, []int{1, 1}) {
		t.Fatalf("processes per repository %v; want [1 1]", got)
	}
	if st := budget.Stats(); st.Warm != 1 || st.Busy != 2 {
		t.Errorf("stats %+v; want 1 warm, 2 busy", st)
	}
	pool.Release(pb)
	if got := counts(t, repos); !sameInts(got, []int{1, 0}) {
		t.Fatalf("after releasing b: processes per repository %v; want [1 0]", got)
	}
	pool.Release(pa)
	if got := counts(t, repos); !sameInts(got, []int{1, 0}) {
		t.Fatalf("after releasing a: processes per repository %v; want [1 0] (a kept)", got)
	}
	// A process past the maximum is kept when a place has freed by its
	// release.
	use(t, pool, a)
	pb, _ = pool.Get(ctx, b) // evicts a
	if got := counts(t, repos); !sameInts(got, []int{0, 1}) {
		t.Fatalf("b with a idle: processes per repository %v; want [0 1]", got)
	}
	pool.Release(pb)
	if st := budget.Stats(); st.Warm != 1 || st.Idle != 1 || st.Evicted != 1 {
		t.Errorf("stats %+v; want 1 warm and idle, 1 evicted", st)
	}
}

// TestBudget_idleTimeout: the reaper ends processes left idle for longer
// than the timeout, with no further use of the pool.
func TestBudget_idleTimeout(t *testing.T) {
	runner, repos := budgetRepos(t, 3)
	// Long enough that three processes started one after another on a
	// loaded machine are all still warm when counted (100 ms was not).
	budget := catfile.NewBudget(8, 2*time.Second)
	defer budget.Close()
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	defer pool.Close()
	for _, r := range repos {
		use(t, pool, r)
	}
	if got := counts(t, repos); !sameInts(got, []int{1, 1, 1}) {
		t.Fatalf("processes per repository %v; want [1 1 1]", got)
	}
	// The places are freed just after the processes end.
	deadline := time.Now().Add(20 * time.Second)
	for !sameInts(counts(t, repos), []int{0, 0, 0}) || budget.Stats().Warm != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes per repository %v, stats %+v 20s after their last use; want none", counts(t, repos), budget.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := budget.Stats(); st.Reaped != 3 {
		t.Errorf("stats %+v; want 3 reaped", st)
	}
	// The pool starts afresh.
	use(t, pool, repos[0])
	if got := counts(t, repos); !sameInts(got, []int{1, 0, 0}) {
		t.Errorf("processes per repository %v; want [1 0 0]", got)
	}
}

// TestPool_evictBusy: Evict ends the idle processes of a repository at
// once and its busy ones when released.
func TestPool_evictBusy(t *testing.T) {
	runner, repos := budgetRepos(t, 2)
	a, b := repos[0], repos[1]
	budget := catfile.NewBudget(8, time.Hour)
	defer budget.Close()
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	defer pool.Close()
	ctx := context.Background()
	use(t, pool, a)
	use(t, pool, b)
	busy, err := pool.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	use(t, pool, a) // a second process of a, idle
	if got := counts(t, repos); !sameInts(got, []int{2, 1}) {
		t.Fatalf("processes per repository %v; want [2 1]", got)
	}
	pool.Evict(a)
	if got := counts(t, repos); !sameInts(got, []int{1, 1}) {
		t.Fatalf("after Evict: processes per repository %v; want [1 1] (a's busy one left)", got)
	}
	if _, err := busy.Info("HEAD"); !errors.Is(err, catfile.ErrMissing) {
		t.Errorf("busy process after Evict: %v", err)
	}
	pool.Release(busy)
	if got := counts(t, repos); !sameInts(got, []int{0, 1}) {
		t.Fatalf("after release: processes per repository %v; want [0 1]", got)
	}
}

// TestBudget_close: Close ends the idle processes and the reaper; busy ones
// end when released, and nothing is kept afterwards.
func TestBudget_close(t *testing.T) {
	runner, repos := budgetRepos(t, 2)
	before := reapers()
	budget := catfile.NewBudget(8, time.Hour)
	if got := reapers(); got != before+1 {
		t.Fatalf("%d reapers after NewBudget; want %d", got, before+1)
	}
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	use(t, pool, repos[0])
	busy, err := pool.Get(context.Background(), repos[1])
	if err != nil {
		t.Fatal(err)
	}
	budget.Close()
	if got := reapers(); got != before {
		t.Errorf("%d reapers after Close; want %d", got, before)
	}
	if got := counts(t, repos); !sameInts(got, []int{0, 1}) {
		t.Fatalf("after Close: processes per repository %v; want [0 1]", got)
	}
	pool.Release(busy)
	use(t, pool, repos[0])
	if got := counts(t, repos); !sameInts(got, []int{0, 0}) {
		t.Fatalf("after release: processes per repository %v; want [0 0]", got)
	}
	pool.Close()
	budget.Close()
}

// reapers counts the goroutines a NewBudget started (by their creator: one
// not yet scheduled shows no frame of its own).
func reapers() int { return leaktest.CountCreatedBy("quarry/internal/git/catfile.NewBudget") }

// TestBudget_churn: many goroutines over a few repositories with a budget
// smaller than the per-repository limit, short reads, streams, abandoned
// processes, evictions and a reaper that fires every few milliseconds;
// afterwards nothing is busy and at most the maximum runs.
func TestBudget_churn(t *testing.T) {
	runner, repos := budgetRepos(t, 4)
	budget := catfile.NewBudget(3, 20*time.Millisecond)
	defer budget.Close()
	pool := catfile.NewPoolWithBudget(runner, 2, budget)
	defer pool.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				repo := repos[(g+i)%len(repos)]
				get := pool.Get
				if i%5 == 0 {
					get = pool.GetStream
				}
				p, err := get(ctx, repo)
				if err != nil {
					errs <- err
					return
				}
				if _, err := p.Info("HEAD"); !errors.Is(err, catfile.ErrMissing) {
					errs <- fmt.Errorf("info HEAD in %s: %v", repo, err)
				}
				if i%7 == 0 {
					p.Abandon()
				}
				if i%11 == 0 {
					pool.Evict(repo)
				}
				if i%13 == 0 {
					time.Sleep(25 * time.Millisecond) // let the reaper run
				}
				pool.Release(p)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for _, n := range counts(t, repos) {
		total += n
	}
	st := budget.Stats()
	if total > 3 || st.Busy != 0 || st.Warm != st.Idle+st.Ending || st.Warm > 3 {
		t.Fatalf("%d git processes, stats %+v; want at most 3, none busy", total, st)
	}
	t.Logf("after churn: %d git processes, stats %+v", total, st)
}
