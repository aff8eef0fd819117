package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gittest"
)

// BenchmarkStorageMovesBulk moves 200 projects of the make-tree size
// (writeMakeTree: 2,000 files of ~6.5 KB in ~240 folders, and a commit of
// the project's own) from one storage to another with one bulk
// move, while 8 clients read a file of 10 other projects (on the
// destination storage, so never read-only) as fast as they can. It
// reports the projects moved per second (from the POST to the last move
// finished) and the p50/p99 of the unrelated reads before and during the
// move. QUARRY_BENCH_MOVE_CONCURRENCY sets --storage-move-concurrency
// (default 2); QUARRY_BENCH_POSTGRES=1 with QUARRY_TEST_DATABASE_URL runs
// it on PostgreSQL.
func BenchmarkStorageMovesBulk(b *testing.B) {
	const moved, unrelated, readers = 200, 10, 8
	concurrency := 2
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_MOVE_CONCURRENCY")); err == nil && v > 0 {
		concurrency = v
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) {
			c.Storages = "second=" + filepath.Join(c.DataDir, "second")
			c.StorageMoveConcurrency = concurrency
			c.StorageMoveCleanupDelay = time.Second
			c.LogLevel = "error"
		})
		owner := s.NewUser(b, "owner")
		seed := makeTreeSeed(b)
		for k := 0; k < moved; k++ {
			var p smProject
			s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
				JSON: map[string]any{"name": fmt.Sprintf("p%03d", k), "initialize_with_readme": true}}).Want(b, http.StatusCreated).JSON(b, &p)
			repo := filepath.Join(s.DataDir, "repositories", smDiskPathB(b, s, p.ID))
			// The make-tree history, and a commit of the project's own on
			// top.
			gittest.Run(b, repo, nil, "fetch", "-q", "--update-head-ok", seed, "+main:main")
			tip := gittest.Run(b, repo, nil, "rev-parse", "main")
			gittest.Commit(b, repo, gittest.Files{"PROJECT.txt": fmt.Sprintf("project %d\n", k)}, gittest.Branch("main"), gittest.Parents(tip))
		}
		s.Do(b, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"repository_storages_weighted": map[string]any{"default": 0, "second": 100}}}).Want(b, http.StatusOK)
		var others []int64
		for k := 0; k < unrelated; k++ {
			var p smProject
			s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
				JSON: map[string]any{"name": fmt.Sprintf("other%02d", k), "initialize_with_readme": true}}).Want(b, http.StatusCreated).JSON(b, &p)
			others = append(others, p.ID)
		}
		read := func(stop <-chan struct{}) []time.Duration {
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			for r := 0; r < readers; r++ {
				wg.Add(1)
				go func(r int) {
					defer wg.Done()
					for n := r; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						url := fmt.Sprintf("%s/api/v4/projects/%d/repository/files/README.md?ref=main", s.URL, others[n%len(others)])
						t0 := time.Now()
						benchGet(b, url, owner.Token)
						d := time.Since(t0)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}(r)
			}
			<-stop
			wg.Wait()
			return lat
		}
		stop := make(chan struct{})
		time.AfterFunc(3*time.Second, func() { close(stop) })
		before := read(stop)

		b.StartTimer()
		start := time.Now()
		s.Do(b, apitest.Request{Method: "POST", Path: "/project_repository_storage_moves", Token: s.RootToken,
			JSON: map[string]any{"source_storage_name": "default", "destination_storage_name": "second"}}).Want(b, http.StatusAccepted)
		stop = make(chan struct{})
		var during []time.Duration
		done := make(chan struct{})
		go func() { during = read(stop); close(done) }()
		for {
			n := 0
			s.Walk(b, "/project_repository_storage_moves?per_page=100", s.RootToken, func(r *apitest.Response) {
				for _, m := range r.Array(b) {
					switch m["state"] {
					case "finished", "replicated":
						n++
					case "failed", "cleanup failed":
						b.Fatalf("a move failed: %v", m)
					}
				}
			})
			if n == moved {
				break
			}
			if time.Since(start) > 10*time.Minute {
				b.Fatalf("%d of %d moved after 10 minutes", n, moved)
			}
			time.Sleep(100 * time.Millisecond)
		}
		elapsed := time.Since(start)
		close(stop)
		<-done
		b.StopTimer()
		if left := s.Get(b, "/projects?repository_storage=default", s.RootToken).Want(b, http.StatusOK).Array(b); len(left) != 0 {
			b.Fatalf("%d projects left on default", len(left))
		}
		b.ReportMetric(float64(moved)/elapsed.Seconds(), "projects/s")
		b.ReportMetric(pct(before, 50), "before-p50-ms")
		b.ReportMetric(pct(before, 99), "before-p99-ms")
		b.ReportMetric(pct(during, 50), "during-p50-ms")
		b.ReportMetric(pct(during, 99), "during-p99-ms")
		b.ReportMetric(float64(len(during))/elapsed.Seconds(), "reads/s")
		s.Stop()
	}
}

func pct(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[(len(s)-1)*p/100].Microseconds()) / 1000
}

// smDiskPathB is smDiskPath for a benchmark.
func smDiskPathB(b *testing.B, s *apitest.Server, id int64) string {
	b.Helper()
	p, err := s.App.DB.ProjectByID(b.Context(), id)
	if err != nil {
		b.Fatal(err)
	}
	return p.DiskPath
}

// makeTreeSeed is a repository whose main is one commit of the make-tree
// files; it is removed when the benchmark ends.
func makeTreeSeed(b *testing.B) string {
	b.Helper()
	w := filepath.Join(b.TempDir(), "seed")
	if out, err := gitRun(filepath.Dir(w), "init", "-q", "-b", "main", w); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if _, err := writeMakeTree(w); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "make-tree"}} {
		if out, err := gitRun(w, args...); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return w
}
