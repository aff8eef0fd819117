package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// Dependencies that lost their archives, at the protocol: a job one of
// whose dependencies was erased or whose archive expired never reaches a
// runner. Asked for work, the server fails it with
// missing_dependency_failure and answers with the next job, or 204
// (GitLab's RegisterJobService and Build#valid_dependency?).

const depsCI = `
stages: [build, test]
build:
  stage: build
  script: [make]
  artifacts:
    paths: [out/]
other:
  stage: build
  script: [make other]
  artifacts:
    paths: [other/]
uses-build:
  stage: test
  dependencies: [build]
  script: [test]
needs-build:
  stage: test
  needs: [build]
  script: [test]
needs-build-no-artifacts:
  stage: test
  needs:
    - job: build
      artifacts: false
  script: [test]
uses-other:
  stage: test
  dependencies: [other]
  script: [test]
no-dependencies:
  stage: test
  dependencies: []
  script: [test]
earlier-stages:
  stage: test
  script: [test]
`

// uploadArchive hands in a zip archive for a job a runner holds.
func uploadArchive(t *testing.T, s *apitest.Server, job payloadJSON, query string) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/jobs/%d/artifacts?artifact_type=archive&artifact_format=zip%s", job.ID, query),
		Header: map[string]string{"JOB-TOKEN": job.Token},
		Files:  map[string]apitest.File{"file": {Name: "artifacts.zip", Content: buildZip(t, map[string]string{"out/a.txt": "a"})}}}).
		Want(t, http.StatusCreated)
}

// getJob reads a job through the API.
func (p ciProject) getJob(t *testing.T, id int64) jobJSON {
	t.Helper()
	var j jobJSON
	p.s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, id), p.Token).Want(t, http.StatusOK).JSON(t, &j)
	return j
}

// wantDropped checks a job failed with missing_dependency_failure
// without ever running.
func (p ciProject) wantDropped(t *testing.T, name string, id int64) {
	t.Helper()
	j := p.getJob(t, id)
	if j.Status != "failed" || j.FailureReason != "missing_dependency_failure" || j.StartedAt != nil {
		t.Errorf("%s: status %s, failure_reason %q, started_at %v; want failed with missing_dependency_failure, never started",
			name, j.Status, j.FailureReason, j.StartedAt)
	}
}

// takeNow asks once, with no queue version: 201 with a job, or 204.
func (r protoRunner) takeNow(t *testing.T) (payloadJSON, bool) {
	t.Helper()
	res := r.request(t, "")
	switch res.Status {
	case http.StatusCreated:
		var p payloadJSON
		res.JSON(t, &p)
		return p, true
	case http.StatusNoContent:
		return payloadJSON{}, false
	}
	t.Fatalf("POST /jobs/request: %d %s", res.Status, res.Body)
	return payloadJSON{}, false
}

func TestRunnerProtocol_missingDependency(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "depowner")
		p := newCIProject(t, s, owner, "deps", map[string]string{".gitlab-ci.yml": depsCI})
		p.settle(t, 1)
		pl := p.pipelines(t, "source=push")[0]
		ids := map[string]int64{}
		for _, j := range p.jobs(t, pl.ID) {
			ids[j.Name] = j.ID
		}
		r := projectRunner(t, p, nil)
		finish := func(job payloadJSON) {
			t.Helper()
			r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		}

		build := r.take(t)
		if build.ID != ids["build"] {
			t.Fatalf("first job %s; want build", build.JobInfo.Name)
		}
		uploadArchive(t, s, build, "&expire_in=1+week")
		finish(build)
		other := r.take(t)
		if other.ID != ids["other"] {
			t.Fatalf("second job %s; want other", other.JobInfo.Name)
		}
		uploadArchive(t, s, other, "")
		finish(other)

		// build is erased; other's artifacts deleted (GitLab keeps such a
		// job a valid dependency: its dependents run without the archive).
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/erase", p.ID, build.ID), Token: owner.Token}).
			Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, other.ID), Token: owner.Token}).
			Want(t, http.StatusNoContent)

		// The oldest candidates depend on build: failed, and the answer is
		// the first job that may run.
		next, ok := r.takeNow(t)
		if !ok || next.ID != ids["needs-build-no-artifacts"] {
			t.Fatalf("after the erase the runner got %q (%v); want needs-build-no-artifacts", next.JobInfo.Name, ok)
		}
		if len(next.Dependencies) != 0 {
			t.Errorf("needs-build-no-artifacts dependencies %+v; want none", next.Dependencies)
		}
		p.wantDropped(t, "uses-build", ids["uses-build"])
		p.wantDropped(t, "needs-build", ids["needs-build"])
		finish(next)

		next, ok = r.takeNow(t)
		if !ok || next.ID != ids["uses-other"] {
			t.Fatalf("then the runner got %q (%v); want uses-other", next.JobInfo.Name, ok)
		}
		if len(next.Dependencies) != 1 || next.Dependencies[0].ID != other.ID || next.Dependencies[0].ArtifactsFile != nil {
			t.Errorf("uses-other dependencies %+v; want other without an archive", next.Dependencies)
		}
		finish(next)
		next, ok = r.takeNow(t)
		if !ok || next.ID != ids["no-dependencies"] {
			t.Fatalf("then the runner got %q (%v); want no-dependencies", next.JobInfo.Name, ok)
		}
		finish(next)

		// earlier-stages depends on build and other: failed; nothing is
		// left, 204.
		if next, ok = r.takeNow(t); ok {
			t.Fatalf("the runner got %q; want 204", next.JobInfo.Name)
		}
		p.wantDropped(t, "earlier-stages", ids["earlier-stages"])
		if st := p.pipeline(t, pl.ID).Status; st != "failed" {
			t.Errorf("pipeline %s; want failed", st)
		}
	}, shortPoll)
}

// clockedEach is apitest.Each with a clock of its own for each server
// (the databases' servers run in parallel), moved by hand.
func clockedEach(t *testing.T, start time.Time, body func(t *testing.T, s *apitest.Server, clk *testClock), opts ...apitest.Option) {
	t.Helper()
	var mu sync.Mutex
	clocks := map[string]*testClock{}
	opts = append(opts, func(c *config) {
		clk := &testClock{now: start}
		mu.Lock()
		clocks[c.DataDir] = clk
		mu.Unlock()
		c.Clock = clk.Now
	})
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		mu.Lock()
		clk := clocks[s.DataDir]
		mu.Unlock()
		if clk == nil {
			t.Fatal("no clock for the server")
		}
		body(t, s, clk)
	}, opts...)
}

// An archive that expired and was swept away is lost to the jobs after
// it; one kept (POST …/artifacts/keep) is not.
func TestRunnerProtocol_expiredDependency(t *testing.T) {
	start := time.Date(2031, 6, 7, 8, 0, 0, 0, time.UTC)
	clockedEach(t, start, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner := s.NewUser(t, "expowner")
		p := newCIProject(t, s, owner, "expiry", map[string]string{".gitlab-ci.yml": `
stages: [build, test]
build:
  stage: build
  script: [make]
  artifacts:
    paths: [out/]
kept:
  stage: build
  script: [make]
  artifacts:
    paths: [out/]
uses-build:
  stage: test
  dependencies: [build]
  script: [test]
uses-kept:
  stage: test
  dependencies: [kept]
  script: [test]
`})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		var build, kept payloadJSON
		for range 2 {
			job := r.take(t)
			uploadArchive(t, s, job, "&expire_in=30+minutes")
			r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
			if job.JobInfo.Name == "build" {
				build = job
			} else {
				kept = job
			}
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/artifacts/keep", p.ID, kept.ID), Token: owner.Token}).
			Want(t, http.StatusOK)

		// Forty minutes on, the sweep removes build's archive.
		clk.Set(start.Add(40 * time.Minute))
		eventually(t, "the sweep removed the expired archive", func() bool {
			list, err := s.App.DB.JobArtifacts(ctx(t), build.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(list) == 0
		})

		next, ok := r.takeNow(t)
		if !ok || next.JobInfo.Name != "uses-kept" {
			t.Fatalf("the runner got %q (%v); want uses-kept", next.JobInfo.Name, ok)
		}
		if len(next.Dependencies) != 1 || next.Dependencies[0].ID != kept.ID || next.Dependencies[0].ArtifactsFile == nil {
			t.Errorf("uses-kept dependencies %+v; want kept with its archive", next.Dependencies)
		}
		for _, j := range p.jobs(t, p.pipelines(t, "source=push")[0].ID) {
			if j.Name == "uses-build" {
				p.wantDropped(t, j.Name, j.ID)
			}
		}
	}, shortPoll, func(c *config) { c.StuckJobsInterval = 200 * time.Millisecond })
}

// A job needing a feature the runner lacks (artifacts:exclude without
// artifacts_exclude) fails with runner_unsupported before it runs; the
// runner gets 204.
func TestRunnerProtocol_unsupportedFeature(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "featowner")
		p := newCIProject(t, s, owner, "feat", map[string]string{".gitlab-ci.yml": `
job1:
  script: [make]
  artifacts:
    paths: [out/]
    exclude: [out/*.log]
`})
		p.settle(t, 1)
		job := p.job(t, p.pipelines(t, "source=push")[0].ID, "job1")
		r := projectRunner(t, p, nil)
		features := map[string]bool{}
		for f, on := range runnerFeatures {
			features[f] = on && f != "artifacts_exclude"
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{"token": r.Token,
			"info": map[string]any{"name": "old", "version": "13.0.0", "executor": "shell", "features": features}}}).
			Want(t, http.StatusNoContent)
		j := p.getJob(t, job.ID)
		if j.Status != "failed" || j.FailureReason != "runner_unsupported" || j.StartedAt != nil {
			t.Errorf("job %s (%s), started_at %v; want failed, runner_unsupported, never started", j.Status, j.FailureReason, j.StartedAt)
		}
	}, shortPoll)
}
