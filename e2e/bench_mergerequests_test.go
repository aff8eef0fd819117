package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// mrBench is a server for the merge request benchmarks (issue 27): a
// project with 20 branches of three changed files each and 200 merge
// requests from them into main (20 opened through the API, 180 more
// stored beside them), each with two assignees, a reviewer and labels.
var mrBench struct {
	once    sync.Once
	s       *apitest.Server
	project int64
	err     error
}

func mrBenchServer(b *testing.B) (*apitest.Server, int64) {
	mrBench.once.Do(func() {
		target := storetest.Target{Name: "sqlite"}
		if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
			target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
		}
		var opts []apitest.Option
		if v := os.Getenv("QUARRY_BENCH_ENTITY_CACHE_BYTES"); v != "" { // 0: the entity cache off
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			opts = append(opts, func(c *config) { c.EntityCacheBytes = n })
		}
		s := apitest.Start(&keepAlive{b}, target, opts...)
		start := time.Now()
		ctx := context.Background()
		owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
		project := newBenchProject(b, s, owner, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
		var users []int64
		for i := 0; i < 4; i++ {
			u := s.NewUser(b, fmt.Sprintf("mrbench%d", i))
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", project), Token: s.RootToken,
				JSON: map[string]any{"user_id": u.ID, "access_level": 30}}).Want(b, http.StatusCreated)
			users = append(users, u.ID)
		}
		for i := 0; i < 20; i++ {
			branch := fmt.Sprintf("feature-%02d", i)
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", project), Token: s.RootToken,
				JSON: map[string]any{"branch": branch, "start_branch": "main", "commit_message": "change " + branch, "actions": []map[string]any{
					{"action": "update", "file_path": "a.txt", "content": "a " + branch + "\n"},
					{"action": "create", "file_path": branch + ".txt", "content": branch + "\n"},
					{"action": "delete", "file_path": "b.txt"},
				}}}).Want(b, http.StatusCreated)
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", project), Token: s.RootToken,
				JSON: map[string]any{"source_branch": branch, "target_branch": "main", "title": "Change " + branch,
					"assignee_ids": []int64{users[i%4], users[(i+1)%4]}, "reviewer_ids": []int64{users[(i+2)%4]},
					"labels": "bug,l" + fmt.Sprint(i%5)}}).Want(b, http.StatusCreated)
		}
		mrBench.err = s.App.DB.InTx(ctx, func(tx *store.Tx) error {
			for i := 20; i < 200; i++ {
				m, err := tx.MergeRequest(ctx, project, int64(i%20+1))
				if err != nil {
					return err
				}
				m.ID, m.IID, m.Title = 0, 0, fmt.Sprintf("merge request %d", i)
				if err := tx.CreateMergeRequest(ctx, &m); err != nil {
					return err
				}
			}
			return nil
		})
		mrBench.s, mrBench.project = s, project
		fmt.Fprintf(os.Stderr, "seeded the merge requests on %s in %s\n", target.Name, time.Since(start).Round(time.Millisecond))
	})
	if mrBench.err != nil {
		b.Fatal(mrBench.err)
	}
	return mrBench.s, mrBench.project
}

// BenchmarkMergeRequests reads one merge request and a page of 20 as the
// administrator, 8 clients per core; git/op counts the git processes a
// read starts. -cpuprofile shows where a read's time goes.
func BenchmarkMergeRequests(b *testing.B) {
	s, project := mrBenchServer(b)
	p := fmt.Sprintf("%s/api/v4/projects/%d", s.URL, project)
	var mu sync.Mutex
	gitProcs := 0
	runner := s.App.GitRunner()
	runner.Observe(func(string, string) {
		mu.Lock()
		gitProcs++
		mu.Unlock()
	})
	b.Cleanup(func() { runner.Observe(nil) })
	cases := []struct{ name, url string }{
		{"get", p + "/merge_requests/1"},
		{"list/page=1", p + "/merge_requests?per_page=20"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchGet(b, c.url, s.RootToken) // warm: what the first read after a change computes
			b.SetParallelism(8)
			b.ReportAllocs()
			mu.Lock()
			gitProcs = 0
			mu.Unlock()
			before, cpu := store.Statements(), processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchGet(b, c.url, s.RootToken)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(store.Statements()-before)/float64(b.N), "stmts/op")
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			mu.Lock()
			b.ReportMetric(float64(gitProcs)/float64(b.N), "git/op")
			mu.Unlock()
		})
	}
}
