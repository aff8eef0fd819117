package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// ciBench is a server kept for the CI benchmarks, with a project whose
// default branch holds the 50-job configuration of the ciconfig golden
// files (5 stages, needs, rules, extends) and the files its rules look
// for.
var ciBench struct {
	once    sync.Once
	s       *apitest.Server
	project int64
	err     error
}

func ciBenchServer(b *testing.B) (*apitest.Server, int64) {
	ciBench.once.Do(func() {
		cfg, err := os.ReadFile("../internal/ciconfig/testdata/golden/fifty_jobs.yml")
		if err != nil {
			ciBench.err = err
			return
		}
		target := storetest.Target{Name: "sqlite"}
		if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
			target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
		}
		s := apitest.Start(&keepAlive{b}, target)
		owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
		p := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": string(cfg), "Dockerfile": "FROM scratch\n",
			"services/web/package.json": "{}\n"})
		ciBench.s, ciBench.project = s, p
	})
	if ciBench.err != nil {
		b.Fatal(ciBench.err)
	}
	return ciBench.s, ciBench.project
}

// newBenchProject makes a project with files on main through the API.
func newBenchProject(b *testing.B, s *apitest.Server, owner apitest.User, files map[string]string) int64 {
	var p struct{ ID int64 }
	s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": fmt.Sprintf("bench-%d", time.Now().UnixNano()),
		"initialize_with_readme": true}}).Want(b, http.StatusCreated).JSON(b, &p)
	var actions []map[string]any
	for path, content := range files {
		actions = append(actions, map[string]any{"action": "create", "file_path": path, "content": content})
	}
	s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", p.ID), Token: owner.Token,
		JSON: map[string]any{"branch": "main", "commit_message": "ci", "actions": actions}}).Want(b, http.StatusCreated)
	return p.ID
}

// BenchmarkPipelineCreate creates pipelines from the 50-job configuration
// through POST /projects/:id/pipeline, 8 clients at once.
func BenchmarkPipelineCreate(b *testing.B) {
	s, project := ciBenchServer(b)
	url := fmt.Sprintf("%s/api/v4/projects/%d/pipeline", s.URL, project)
	body := []byte(`{"ref":"main"}`)
	b.SetParallelism(4) // 4 × GOMAXPROCS (2) = 8 clients
	b.ReportAllocs()
	stmts, trips, cpu := store.Statements(), store.RoundTrips(), processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header.Set("PRIVATE-TOKEN", s.RootToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := benchClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Fatalf("POST pipeline: %d", resp.StatusCode)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pipelines/s")
	b.ReportMetric(float64(store.Statements()-stmts)/float64(b.N), "statements/op")
	b.ReportMetric(float64(store.RoundTrips()-trips)/float64(b.N), "round-trips/op")
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.StopTimer()
	// The pipelines hold every seeded job of the configuration.
	list, _, err := s.App.DB.Pipelines(context.Background(), store.PipelineFilter{ProjectID: project, Source: model.SourceAPI},
		model.Page{Number: 1, PerPage: 1})
	if err != nil || len(list) == 0 {
		b.Fatalf("no pipeline: %v", err)
	}
	all, err := s.App.DB.PipelineJobs(context.Background(), list[0].ID, false)
	if err != nil || len(all) < 40 {
		b.Fatalf("a pipeline of %d jobs: %v", len(all), err)
	}
}

// BenchmarkJobTransitions makes pipelines of 500 jobs in one stage (and
// one after) and lets 8 clients start and finish every job at once, as
// runners would; each job's two transitions process the whole pipeline.
// It checks the pipeline ends right and every job moved once.
func BenchmarkJobTransitions(b *testing.B) {
	s, _ := ciBenchServer(b)
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	project := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": `
stages: [work, deploy]
a: {stage: work, script: [x], parallel: 200}
b: {stage: work, script: [x], parallel: 200}
c: {stage: work, script: [x], parallel: 100}
deploy: {stage: deploy, script: [ship]}
`})
	svc := engine(s)
	bg := context.Background()
	var transitions atomic.Int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pl, ids := newWorkPipeline(b, s, project)
		work := make(chan int64, len(ids))
		for _, id := range ids {
			work <- id
		}
		close(work)
		b.StartTimer()
		var wg sync.WaitGroup
		for c := 0; c < 8; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := range work {
					if _, err := svc.Start(bg, id); err != nil {
						b.Error(err)
						return
					}
					if _, err := svc.Finish(bg, id, ci.Outcome{Status: model.StatusSuccess}); err != nil {
						b.Error(err)
						return
					}
					transitions.Add(2)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		got, err := s.App.DB.Pipeline(bg, pl.ID)
		if err != nil || got.Status != model.StatusRunning {
			b.Fatalf("pipeline %s, %v; want running (deploy pending)", got.Status, err)
		}
		after, _ := s.App.DB.PipelineJobs(bg, pl.ID, true)
		for _, j := range after {
			want := model.StatusSuccess
			if j.Name == "deploy" {
				want = model.StatusPending
			}
			// Each work job (stored pending) moved twice, started and
			// finished, each move once.
			if j.Status != want || (j.Name != "deploy" && j.Version != 2) {
				b.Fatalf("job %s %s v%d; want %s after two moves", j.Name, j.Status, j.Version, want)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(transitions.Load()), "ms/transition")
	b.ReportMetric(float64(transitions.Load())/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkJobTransitionLatency is one client moving the jobs of a
// pipeline one transition at a time (pending → running → success), each
// transition its own transaction that locks and processes the pipeline:
// the latency of one transition, and the statements it sends.
func BenchmarkJobTransitionLatency(b *testing.B) {
	s, _ := ciBenchServer(b)
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	project := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": `
stages: [work, deploy]
work: {stage: work, script: [x], parallel: 50}
deploy: {stage: deploy, script: [ship]}
`})
	svc := engine(s)
	bg := context.Background()
	var pending []int64
	// The statements, round trips and CPU of the pipelines' creation
	// are not counted.
	var setup, setupTrips int64
	var setupCPU time.Duration
	refill := func() {
		b.StopTimer()
		before, trips, cpu := store.Statements(), store.RoundTrips(), processCPU()
		defer func() {
			setup += store.Statements() - before
			setupTrips += store.RoundTrips() - trips
			setupCPU += processCPU() - cpu
			b.StartTimer()
		}()
		_, ids := newWorkPipeline(b, s, project)
		pending = append(pending, ids...)
	}
	var moved int64
	stmts, trips, cpu := store.Statements(), store.RoundTrips(), processCPU()
	b.ResetTimer()
	for moved < int64(b.N) {
		if len(pending) == 0 {
			refill()
		}
		id := pending[0]
		pending = pending[1:]
		j, err := svc.Start(bg, id)
		if err != nil || j.Status != model.StatusRunning {
			b.Fatalf("start job %d: %s, %v", id, j.Status, err)
		}
		j, err = svc.Finish(bg, id, ci.Outcome{Status: model.StatusSuccess})
		if err != nil || j.Status != model.StatusSuccess {
			b.Fatalf("finish job %d: %s, %v", id, j.Status, err)
		}
		moved += 2
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(moved), "ms/transition")
	b.ReportMetric(float64(store.Statements()-stmts-setup)/float64(moved), "statements/transition")
	b.ReportMetric(float64(store.RoundTrips()-trips-setupTrips)/float64(moved), "round-trips/transition")
	b.ReportMetric(float64((processCPU()-cpu-setupCPU).Microseconds())/float64(moved), "cpu-µs/transition")
}

// newWorkPipeline creates a pipeline on the project's main branch and
// returns it with the ids of its jobs but deploy.
func newWorkPipeline(b *testing.B, s *apitest.Server, project int64) (ci.PipelineView, []int64) {
	bg := context.Background()
	pl, err := engine(s).CreatePipeline(bg, rootActor(b, s), fmt.Sprint(project), "main", nil)
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := s.App.DB.PipelineJobs(bg, pl.ID, false)
	if err != nil {
		b.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		if j.Name != "deploy" {
			ids = append(ids, j.ID)
		}
	}
	return pl, ids
}

// rootActor is the administrator as the engine's caller.
func rootActor(b *testing.B, s *apitest.Server) auth.Actor {
	u, err := s.App.DB.UserByUsername(context.Background(), "root")
	if err != nil {
		b.Fatal(err)
	}
	return auth.Actor{User: &u}
}

// benchJobs is the size of the job table the list benchmarks use.
const benchJobs = 100_000

var ciListBench struct {
	once    sync.Once
	project int64
	err     error
}

// ciListServer adds benchJobs jobs (10,000 pipelines of 10) to the CI
// benchmark server, in one transaction.
func ciListServer(b *testing.B) (*apitest.Server, int64) {
	s, _ := ciBenchServer(b)
	ciListBench.once.Do(func() {
		owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
		project := newBenchProject(b, s, owner, map[string]string{"jobs.txt": "jobs\n"})
		var br struct {
			Commit struct{ ID string } `json:"commit"`
		}
		s.Get(b, fmt.Sprintf("/projects/%d/repository/branches/main", project), s.RootToken).Want(b, http.StatusOK).JSON(b, &br)
		sha := br.Commit.ID
		start := time.Now()
		ctx := context.Background()
		ciListBench.project, ciListBench.err = project, s.App.DB.InTx(ctx, func(tx *store.Tx) error {
			statuses := []model.CIStatus{model.StatusSuccess, model.StatusFailed, model.StatusCanceled, model.StatusSkipped}
			for i := 0; i < benchJobs/10; i++ {
				pl := model.Pipeline{ProjectID: project, Ref: "main", SHA: sha, BeforeSHA: model.ZeroRef, Source: model.SourcePush,
					Status: statuses[i%len(statuses)], UserID: owner.ID}
				if err := tx.CreatePipeline(ctx, &pl); err != nil {
					return err
				}
				for k := 0; k < 10; k++ {
					j := model.Job{ProjectID: project, PipelineID: pl.ID, Kind: model.JobBuild, Name: fmt.Sprintf("job %d", k),
						Stage: "test", Status: statuses[(i+k)%len(statuses)], When: model.WhenOnSuccess, UserID: owner.ID, Ref: "main",
						SHA: sha}
					if err := tx.CreateJob(ctx, &j); err != nil {
						return err
					}
				}
			}
			return nil
		})
		fmt.Fprintf(os.Stderr, "seeded %d jobs in %s\n", benchJobs, time.Since(start).Round(time.Millisecond))
	})
	if ciListBench.err != nil {
		b.Fatal(ciListBench.err)
	}
	return s, ciListBench.project
}

// BenchmarkJobsList lists a project's jobs and pipelines over 100,000
// jobs: keyset page N costs what page 1 costs.
func BenchmarkJobsList(b *testing.B) {
	s, project := ciListServer(b)
	jobs := fmt.Sprintf("%s/api/v4/projects/%d/jobs?per_page=20", s.URL, project)
	pipelines := fmt.Sprintf("%s/api/v4/projects/%d/pipelines?per_page=20", s.URL, project)
	cases := []struct{ name, url string }{
		{"jobs/offset/page=1", jobs + "&page=1"},
		{"jobs/offset/page=200", jobs + "&page=200"},
		{"jobs/keyset/page=1", jobs + "&pagination=keyset"},
		{"jobs/keyset/page=2001", walkKeyset(b, jobs+"&pagination=keyset", s.RootToken, 2000)},
		{"jobs/scope=failed", jobs + "&scope[]=failed&pagination=keyset"},
		{"pipelines/offset/page=1", pipelines + "&page=1"},
		{"pipelines/keyset/page=1", pipelines + "&pagination=keyset"},
		{"pipelines/keyset/page=401", walkKeyset(b, pipelines+"&pagination=keyset", s.RootToken, 400)},
		{"pipelines/status=failed", pipelines + "&status=failed"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if !strings.HasPrefix(c.url, "http") {
				b.Fatalf("bad url %q", c.url)
			}
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchGet(b, c.url, s.RootToken)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
