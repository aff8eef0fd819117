package e2e

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// parallelWork is a pipeline of n jobs in one stage and one job after.
func parallelWork(n int) string {
	return fmt.Sprintf(`
stages: [work, deploy]
work: {stage: work, script: [x], parallel: %d}
deploy: {stage: deploy, script: [ship]}
`, n)
}

// finishAll starts every pending work job of a pipeline, then ends each
// twice at once from different goroutines, through the given engines in
// turn: exactly one of the two finishes wins, the other is told the job
// no longer runs.
func finishAll(t *testing.T, engines []*ci.Service, jobs []jobJSON) {
	t.Helper()
	for i, j := range jobs {
		if _, err := engines[i%len(engines)].Start(ctx(t), j.ID); err != nil {
			t.Fatalf("start %s: %v", j.Name, err)
		}
	}
	type result struct {
		id  int64
		err error
	}
	work := make(chan jobJSON)
	results := make(chan result, 2*len(jobs))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for j := range work {
				_, err := engines[w%len(engines)].Finish(ctx(t), j.ID, succeed)
				results <- result{j.ID, err}
			}
		}(w)
	}
	for _, j := range jobs {
		work <- j
		work <- j
	}
	close(work)
	wg.Wait()
	close(results)
	won := map[int64]int{}
	for r := range results {
		switch st, notRunning := ci.NotRunningStatus(r.err); {
		case r.err == nil:
			won[r.id]++
		case notRunning && st == model.StatusSuccess:
		default:
			t.Fatalf("finish job %d: %v", r.id, r.err)
		}
	}
	for _, j := range jobs {
		if won[j.ID] != 1 {
			t.Fatalf("job %s finished %d times; want once", j.Name, won[j.ID])
		}
	}
}

// checkDone asserts a work pipeline whose work jobs all succeeded: every
// job success once, none retried, deploy pending, the pipeline running.
func checkDone(t *testing.T, p ciProject, pipelineID int64, n int) {
	t.Helper()
	jobs := p.ownJobs(t, pipelineID)
	if len(jobs) != n+1 {
		t.Fatalf("%d jobs; want %d (no job made twice)", len(jobs), n+1)
	}
	for _, j := range jobs {
		want := "success"
		if j.Name == "deploy" {
			want = "pending"
		}
		if j.Status != want {
			t.Fatalf("job %s %s; want %s", j.Name, j.Status, want)
		}
	}
	if st := p.pipeline(t, pipelineID).Status; st != "running" {
		t.Fatalf("pipeline %s; want running", st)
	}
}

// TestPipelines_concurrentFinishes: 120 jobs of one stage finishing at
// once, each reported twice by racing writers, leave every job finished
// once and the pipeline and the next stage in the right status.
func TestPipelines_concurrentFinishes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		const n = 120
		p := newCIProject(t, s, owner, "many", map[string]string{".gitlab-ci.yml": parallelWork(n)})
		p.settle(t, 1)
		pl := p.createPipeline(t, "main")
		var work []jobJSON
		for _, j := range p.ownJobs(t, pl.ID) {
			if j.Name != "deploy" {
				work = append(work, j)
			}
		}
		finishAll(t, []*ci.Service{engine(s)}, work)
		checkDone(t, p, pl.ID, n)
	})
}

// projectPipelineIDs lists every pipeline of a project.
func projectPipelineIDs(t *testing.T, p ciProject) []int64 {
	t.Helper()
	var ids []int64
	for _, pl := range p.pipelines(t, "per_page=100") {
		ids = append(ids, pl.ID)
	}
	return ids
}

// driveResourceGroup finishes the release jobs of the pipelines as their
// group hands out its slot, from one driver per server, then checks that
// no two of them ever held the slot at once: their [queued, finished]
// times are disjoint.
func driveResourceGroup(t *testing.T, servers []*apitest.Server, projectID int64, pipelines []int64) {
	t.Helper()
	releases := func(s *apitest.Server) []model.Job {
		var out []model.Job
		for _, id := range pipelines {
			jobs, err := s.App.DB.PipelineJobs(ctx(t), id, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				if j.Name == "release" {
					out = append(out, j)
				}
			}
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, len(servers))
	for _, s := range servers {
		wg.Add(1)
		go func(s *apitest.Server) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				done := 0
				for _, j := range releases(s) {
					switch j.Status {
					case model.StatusSuccess, model.StatusCanceled:
						done++
					case model.StatusPending:
						// Both drivers race for it: one takes it.
						if _, err := engine(s).Start(ctx(t), j.ID); err != nil {
							if _, ok := ci.NotRunningStatus(err); !ok {
								errs <- err
								return
							}
							continue
						}
						if _, err := engine(s).Finish(ctx(t), j.ID, succeed); err != nil {
							errs <- err
							return
						}
					}
				}
				if done == len(pipelines) {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			var state []string
			for _, j := range releases(s) {
				state = append(state, fmt.Sprintf("%d:%s", j.ID, j.Status))
			}
			g, _ := s.App.DB.ResourceGroup(ctx(t), projectID, "prod")
			errs <- fmt.Errorf("release jobs not all done after 60s: %v, slot held by %d", state, g.HolderID)
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var jobs []model.Job
	for _, j := range releases(servers[0]) {
		if j.QueuedAt != nil {
			jobs = append(jobs, j)
		}
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].QueuedAt.Before(*jobs[b].QueuedAt) })
	for i := 1; i < len(jobs); i++ {
		// A job canceled before it started has no finish time: its last
		// change ends its hold.
		end := jobs[i-1].UpdatedAt
		if f := jobs[i-1].FinishedAt; f != nil {
			end = *f
		}
		if jobs[i].QueuedAt.Before(end) {
			t.Fatalf("release %d was enqueued at %s before release %d let go at %s: two jobs held the group",
				jobs[i].ID, jobs[i].QueuedAt, jobs[i-1].ID, end)
		}
	}
}

// TestResourceGroups_oneAtATime: two drivers racing for the release jobs
// of eight pipelines in one resource group never get two of them at once.
func TestResourceGroups_oneAtATime(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "slots", map[string]string{".gitlab-ci.yml": "release: {script: [x], resource_group: prod}\n"})
		p.settle(t, 1)
		for i := 0; i < 8; i++ {
			p.createPipeline(t, "main")
		}
		driveResourceGroup(t, []*apitest.Server{s, s}, p.ID, projectPipelineIDs(t, p))
	})
}
