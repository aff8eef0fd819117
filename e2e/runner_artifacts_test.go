package e2e

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// Artifacts and failures on Quarry's own runner (quarry runner), on both
// databases: untracked files with paths and exclude, artifacts:when
// against the job's outcome, and the runner's own failures reported as
// runner_system_failure.

// startRunner registers a runner of p and starts it with start.
func startRunner(t *testing.T, p ciProject, start runnerStarter) {
	t.Helper()
	r := projectRunner(t, p, map[string]any{"description": "artifacts"})
	start(t, p.s.URL, r.Token, t.TempDir())
}

// jobLog reads a job's log ("" without one).
func (p ciProject) jobLog(t *testing.T, id int64) string {
	t.Helper()
	res := p.s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), p.Token)
	if res.Status != http.StatusOK {
		return ""
	}
	return string(res.Body)
}

// archiveNames lists the entries of a job's archive, sorted; nil when the
// job has none (404).
func (p ciProject) archiveNames(t *testing.T, id int64) []string {
	t.Helper()
	res := p.s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, id), p.Token)
	if res.Status == http.StatusNotFound {
		return nil
	}
	body := res.Want(t, http.StatusOK).Body
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("job %d: the archive is not a zip: %v", id, err)
	}
	names := []string{}
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}

// waitDone waits (at most wait) until every job of a pipeline is done,
// and returns the latest of each name.
func (p ciProject) waitDone(t *testing.T, pipelineID int64, wait time.Duration) map[string]jobJSON {
	t.Helper()
	var jobs map[string]jobJSON
	eventuallyFor(t, wait, "every job done", func() bool {
		jobs = latest(p.jobs(t, pipelineID))
		for _, j := range jobs {
			if j.Status != "success" && j.Status != "failed" && j.Status != "canceled" && j.Status != "skipped" {
				return false
			}
		}
		return len(jobs) > 0
	})
	return jobs
}

const artifactsCI = `
untracked:
  script:
    - mkdir -p out/sub logs && echo a > out/sub/a.txt && echo t > top.txt && echo s > skip.tmp && echo l > logs/x.log
    - echo ignored.txt > .gitignore && echo i > ignored.txt
    - echo changed >> README.md
  artifacts:
    untracked: true
    paths: [README.md]
    exclude: ["*.tmp", "logs/**"]
untracked-only:
  script: [echo u > u.txt]
  artifacts:
    untracked: true
success-on-success:
  script: [echo x > x.txt]
  artifacts:
    paths: [x.txt]
failed-on-success:
  script: [echo x > x.txt, exit 3]
  allow_failure: true
  artifacts:
    paths: [x.txt]
success-on-failure:
  script: [echo x > x.txt]
  artifacts:
    when: on_failure
    paths: [x.txt]
failed-on-failure:
  script: [echo x > x.txt, exit 3]
  allow_failure: true
  artifacts:
    when: on_failure
    paths: [x.txt]
success-always:
  script: [echo x > x.txt]
  artifacts:
    when: always
    paths: [x.txt]
failed-always:
  script: [echo x > x.txt, exit 3]
  allow_failure: true
  artifacts:
    when: always
    paths: [x.txt]
`

func TestQuarryRunner_artifacts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) { testRunnerArtifacts(t, s, quarryRunner(2), 2*time.Minute) })
}

// TestGitLabRunner_artifacts runs the same pipeline on the official
// gitlab-runner (QUARRY_GITLAB_RUNNER, as TestGitLabRunner_endToEnd): the
// archives must be the same. Its jobs are slow (seconds per stage): one
// database.
func TestGitLabRunner_artifacts(t *testing.T) {
	bin := os.Getenv("QUARRY_GITLAB_RUNNER")
	if bin == "" {
		t.Skip("NOT RUN: the official gitlab-runner artifacts test needs QUARRY_GITLAB_RUNNER=/path/to/gitlab-runner")
	}
	t.Parallel()
	testRunnerArtifacts(t, apitest.Start(t, storetest.Target{Name: "sqlite"}), gitLabRunner(bin, 2), 10*time.Minute)
}

// testRunnerArtifacts runs artifactsCI on s with the runner start starts,
// waiting for its jobs at most wait.
func testRunnerArtifacts(t *testing.T, s *apitest.Server, start runnerStarter, wait time.Duration) {
	owner := s.NewUser(t, "artrunowner")
	p := newCIProject(t, s, owner, "artrun", map[string]string{".gitlab-ci.yml": artifactsCI})
	p.settle(t, 1)
	pl := p.pipelines(t, "source=push")[0]
	startRunner(t, p, start)
	jobs := p.waitDone(t, pl.ID, wait)

	for name, want := range map[string]struct {
		status  string
		archive []string // nil: none uploaded
	}{
		// Untracked files (ignored ones too) and the tracked file paths
		// names; exclude takes out the rest.
		"untracked":          {"success", []string{".gitignore", "README.md", "ignored.txt", "out/sub/a.txt", "top.txt"}},
		"untracked-only":     {"success", []string{"u.txt"}},
		"success-on-success": {"success", []string{"x.txt"}},
		"failed-on-success":  {"failed", nil},
		"success-on-failure": {"success", nil},
		"failed-on-failure":  {"failed", []string{"x.txt"}},
		"success-always":     {"success", []string{"x.txt"}},
		"failed-always":      {"failed", []string{"x.txt"}},
	} {
		j, ok := jobs[name]
		if !ok {
			t.Errorf("no job %s", name)
			continue
		}
		if j.Status != want.status {
			t.Errorf("%s: %s (%s); want %s:\n%s", name, j.Status, j.FailureReason, want.status, p.jobLog(t, j.ID))
			continue
		}
		if want.status == "failed" && j.FailureReason != "script_failure" {
			t.Errorf("%s: failure_reason %s; want script_failure", name, j.FailureReason)
		}
		if got := p.archiveNames(t, j.ID); strings.Join(got, " ") != strings.Join(want.archive, " ") || (got == nil) != (want.archive == nil) {
			t.Errorf("%s: archive %q; want %q:\n%s", name, got, want.archive, p.jobLog(t, j.ID))
		}
	}
	log := p.jobLog(t, jobs["untracked"].ID)
	for _, want := range []string{"untracked: found 4 files", "*.tmp: excluded 1 files", "logs/**: excluded 1 files"} {
		if !strings.Contains(log, want) {
			t.Errorf("untracked log lacks %q:\n%s", want, log)
		}
	}
	if st := p.pipeline(t, pl.ID).Status; st != "success" {
		t.Errorf("pipeline %s; want success (the failing jobs may fail)", st)
	}
}

// The runner's own failures — sources it cannot fetch, a dependency's
// archive it cannot download — are runner_system_failure, not the
// script's.
func TestQuarryRunner_systemFailure(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "sysowner")
		p := newCIProject(t, s, owner, "sysfail", nil)
		// A pipeline whose branch is gone before a runner fetches it.
		p.commit(t, "doomed", map[string]string{".gitlab-ci.yml": "fetch:\n  script: [echo never-runs]\n"})
		var doomed pipelineJSON
		eventually(t, "the doomed branch's pipeline", func() bool {
			list := p.pipelines(t, "ref=doomed")
			if len(list) > 0 {
				doomed = list[0]
			}
			return len(list) > 0
		})
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/repository/branches/doomed", p.ID), Token: owner.Token}).
			Want(t, http.StatusNoContent)
		// A dependency whose archive is lost from storage: the server
		// still offers it, the download fails.
		p.commit(t, "main", map[string]string{".gitlab-ci.yml": `
stages: [build, test]
build:
  stage: build
  script: [mkdir -p out, echo a > out/a.txt]
  artifacts:
    paths: [out/]
test:
  stage: test
  when: manual
  script: [echo never-runs]
`})
		var main pipelineJSON
		eventually(t, "the main pipeline", func() bool {
			list := p.pipelines(t, "ref=main")
			if len(list) > 0 {
				main = list[0]
			}
			return len(list) > 0
		})
		startRunner(t, p, quarryRunner(1))

		wantSystemFailure := func(name string, j jobJSON) {
			t.Helper()
			log := p.jobLog(t, j.ID)
			if j.Status != "failed" || j.FailureReason != "runner_system_failure" ||
				!strings.Contains(log, "ERROR: Job failed (system failure):") || strings.Contains(log, "never-runs\n") {
				t.Errorf("%s: %s (%s); want failed, runner_system_failure, the script not run:\n%s", name, j.Status, j.FailureReason, log)
			}
		}
		wantSystemFailure("fetch", p.waitDone(t, doomed.ID, 2*time.Minute)["fetch"])

		var build jobJSON
		eventuallyFor(t, 2*time.Minute, "build done, test manual", func() bool {
			jobs := latest(p.jobs(t, main.ID))
			build = jobs["build"]
			return build.Status == "success" && jobs["test"].Status == "manual"
		})
		arts, err := s.App.DB.JobArtifacts(ctx(t), build.ID)
		if err != nil || len(arts) != 1 {
			t.Fatalf("build artifacts %v, %v", arts, err)
		}
		if err := os.Remove(filepath.Join(s.DataDir, "jobs", arts[0].Path)); err != nil {
			t.Fatal(err)
		}
		test := p.job(t, main.ID, "test")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", p.ID, test.ID), Token: owner.Token}).
			Want(t, http.StatusOK)
		test = p.waitDone(t, main.ID, 2*time.Minute)["test"]
		wantSystemFailure("test", test)
		if log := p.jobLog(t, test.ID); !strings.Contains(log, fmt.Sprintf("download artifacts of build (%d): 404 not found", build.ID)) {
			t.Errorf("test log:\n%s", log)
		}
	})
}
