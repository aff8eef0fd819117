package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/runner"
	"quarry/internal/storetest"
)

// The end-to-end pipeline a real runner runs: build → test (a JUnit
// report, GET /job from inside the job) → deploy (manual, in a resource
// group), with an artifact, a masked variable, a log that streams while a
// job runs, and a cancel that stops a running job. Both Quarry's own
// runner and the official gitlab-runner run it.

const e2eCI = `
stages: [build, test, deploy]
variables:
  GREETING: hello
build:
  stage: build
  script:
    - echo "building $GREETING"
    - mkdir -p out/sub && echo artifact-a > out/a.txt && echo artifact-b > out/sub/b.txt
    - echo "the secret is $MASKED_SECRET"
  artifacts:
    paths: [out/]
test:
  stage: test
  script:
    - cat out/a.txt
    - 'curl -s --fail --header "JOB-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/job" > job.json'
    - cat job.json
    - printf '<testsuite name="unit" tests="2"><testcase classname="c" name="ok"/><testcase classname="c" name="bad"><failure message="boom">trace</failure></testcase></testsuite>' > report.xml
  artifacts:
    when: always
    reports:
      junit: report.xml
deploy:
  stage: deploy
  when: manual
  resource_group: production
  script: [echo deploying]
`

// The slow branch has one job that prints, then sleeps: it is canceled
// while it runs.
const slowCI = `
slow:
  script:
    - echo slow-start
    - sleep %d
    - echo slow-end
`

const maskedSecret = "supersecret-9f3a1c"

// runnerStarter starts a runner registered with token against url,
// working in dir; the runner stops when the test ends.
type runnerStarter func(t *testing.T, url, token, dir string)

// runEndToEnd runs the pipeline with the runner start starts; the slow
// job sleeps sleepSeconds, a number no other test's job sleeps (the test
// looks for that process to be gone).
func runEndToEnd(t *testing.T, sleepSeconds int, start runnerStarter) {
	began := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed inside the jobs: ", err)
	}
	// Real processes on a real port: SQLite is enough (the protocol tests
	// cover both databases).
	s := apitest.Start(t, storetest.Target{Name: "sqlite"}, func(c *config) { c.RunnerLongPoll = 2 * time.Second })
	owner := s.NewUser(t, "e2eowner")
	p := newCIProject(t, s, owner, "e2e", nil)
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
		JSON: map[string]any{"key": "MASKED_SECRET", "value": maskedSecret, "masked": true}}).Want(t, http.StatusCreated)
	r := projectRunner(t, p, map[string]any{"description": "e2e"})
	start(t, s.URL, r.Token, t.TempDir())

	p.commit(t, "main", map[string]string{".gitlab-ci.yml": e2eCI})
	var pl pipelineJSON
	eventuallyFor(t, time.Minute, "the push pipeline", func() bool {
		list := p.pipelines(t, "source=push")
		if len(list) > 0 {
			pl = list[0]
		}
		return len(list) > 0
	})
	trace := func(id int64) string {
		res := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token)
		if res.Status == http.StatusNotFound {
			return "(no log)"
		}
		return string(res.Want(t, http.StatusOK).Body)
	}
	eventuallyFor(t, 2*time.Minute, "build and test done, deploy manual", func() bool {
		jobs := latest(p.jobs(t, pl.ID))
		for _, name := range []string{"build", "test"} {
			if st := jobs[name].Status; st == "failed" || st == "canceled" {
				t.Fatalf("%s %s (%s):\n%s", name, st, jobs[name].FailureReason, trace(jobs[name].ID))
			}
		}
		return jobs["build"].Status == "success" && jobs["test"].Status == "success" && jobs["deploy"].Status == "manual"
	})
	phase("build and test done")
	jobs := latest(p.jobs(t, pl.ID))
	build, test := jobs["build"], jobs["test"]

	// Logs: the commands ran with their variables; the masked one never
	// shows.
	buildLog := trace(build.ID)
	for _, want := range []string{"building hello", "the secret is [MASKED]"} {
		if !strings.Contains(buildLog, want) {
			t.Errorf("build log lacks %q:\n%s", want, buildLog)
		}
	}
	if strings.Contains(buildLog, maskedSecret) {
		t.Errorf("the masked variable shows in the log:\n%s", buildLog)
	}
	// GET /job answered the job its own JSON from inside it.
	testLog := trace(test.ID)
	if !strings.Contains(testLog, "artifact-a") || !strings.Contains(testLog, fmt.Sprintf(`{"id":%d,`, test.ID)) {
		t.Errorf("test log lacks the artifact or GET /job's answer:\n%s", testLog)
	}

	// Artifacts: the whole archive and one file.
	zipBody := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, build.ID), owner.Token).Want(t, http.StatusOK).Body
	zr, err := zip.NewReader(bytes.NewReader(zipBody), int64(len(zipBody)))
	if err != nil {
		t.Fatalf("the archive is not a zip: %v", err)
	}
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
	}
	if !names["out/a.txt"] || !names["out/sub/b.txt"] {
		t.Errorf("archive holds %v", names)
	}
	s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts/out/sub/b.txt", p.ID, build.ID), owner.Token).Want(t, http.StatusOK).
		WantText(t, "artifact-b\n")
	s.Get(t, fmt.Sprintf("/projects/%d/jobs/artifacts/main/raw/out/a.txt?job=build", p.ID), owner.Token).Want(t, http.StatusOK).
		WantText(t, "artifact-a\n")

	// The JUnit report fed the test report and its summary.
	var summary struct {
		Total struct {
			Count   int `json:"count"`
			Success int `json:"success"`
			Failed  int `json:"failed"`
		} `json:"total"`
	}
	s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/test_report_summary", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &summary)
	if summary.Total.Count != 2 || summary.Total.Success != 1 || summary.Total.Failed != 1 {
		t.Errorf("test report summary %+v", summary.Total)
	}
	s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/test_report", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK)

	// Deploy: played, it takes the resource group and runs.
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", p.ID, jobs["deploy"].ID), Token: owner.Token}).
		Want(t, http.StatusOK)
	eventuallyFor(t, time.Minute, "the pipeline succeeded", func() bool { return p.pipeline(t, pl.ID).Status == "success" })
	if log := trace(jobs["deploy"].ID); !strings.Contains(log, "deploying") {
		t.Errorf("deploy log:\n%s", log)
	}

	// A slow job: its log streams while it runs; a cancel stops it.
	phase("main pipeline done")
	p.commit(t, "slow", map[string]string{".gitlab-ci.yml": fmt.Sprintf(slowCI, sleepSeconds)})
	var slow jobJSON
	eventuallyFor(t, time.Minute, "the slow job runs and its log shows", func() bool {
		for _, pp := range p.pipelines(t, "ref=slow") {
			for _, j := range p.jobs(t, pp.ID) {
				if j.Status == "running" && strings.Contains(trace(j.ID), "slow-start") {
					slow = j
					return true
				}
			}
		}
		return false
	})
	phase("slow job running")
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/cancel", p.ID, slow.ID), Token: owner.Token}).
		Want(t, http.StatusCreated)
	eventuallyFor(t, time.Minute, "the runner stopped the canceled job's script", func() bool {
		out, _ := exec.Command("pgrep", "-f", fmt.Sprintf("sleep %d", sleepSeconds)).Output()
		return len(bytes.TrimSpace(out)) == 0
	})
	phase("canceled job stopped")
	var canceled jobJSON
	s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, slow.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &canceled)
	if canceled.Status != "canceled" || strings.Contains(trace(slow.ID), "slow-end") {
		t.Errorf("canceled job: %s\n%s", canceled.Status, trace(slow.ID))
	}
}

// eventuallyFor polls cond until it holds, at most d.
func eventuallyFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
	}
}

// TestGitLabRunner_endToEnd runs the pipeline on the official gitlab-runner
// (its shell executor), built from its source: set QUARRY_GITLAB_RUNNER to
// its binary (see README, "Attaching gitlab-runner"). It registers twice —
// with a glrt- token and with the project's registration token — and runs
// the pipeline with the first.
func TestGitLabRunner_endToEnd(t *testing.T) {
	bin := os.Getenv("QUARRY_GITLAB_RUNNER")
	if bin == "" {
		t.Skip("NOT RUN: the official gitlab-runner end-to-end test needs QUARRY_GITLAB_RUNNER=/path/to/gitlab-runner")
	}
	t.Parallel()
	runEndToEnd(t, 122, gitLabRunner(bin, 1))
}

// gitLabRunner starts the official gitlab-runner binary bin (its shell
// executor) taking concurrent jobs at once; it stops when the test ends.
func gitLabRunner(bin string, concurrent int) runnerStarter {
	return func(t *testing.T, url, token, dir string) {
		cfg := filepath.Join(dir, "config.toml")
		out, err := exec.Command(bin, "register", "--non-interactive", "--config", cfg, "--url", url, "--token", token,
			"--executor", "shell", "--name", "official").CombinedOutput()
		if err != nil {
			t.Fatalf("gitlab-runner register: %v\n%s", err, out)
		}
		if concurrent > 1 {
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Replace(b, []byte("concurrent = 1\n"), []byte(fmt.Sprintf("concurrent = %d\n", concurrent)), 1)
			if err := os.WriteFile(cfg, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(dir, "builds"), 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "run", "--config", cfg, "--working-directory", filepath.Join(dir, "builds"))
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cancel()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("gitlab-runner log:\n%s", log.String())
			}
		})
	}
}

// TestGitLabRunner_registrationToken registers the official runner with a
// project's registration token (the legacy flow) and verifies it.
func TestGitLabRunner_registrationToken(t *testing.T) {
	bin := os.Getenv("QUARRY_GITLAB_RUNNER")
	if bin == "" {
		t.Skip("NOT RUN: the official gitlab-runner registration test needs QUARRY_GITLAB_RUNNER=/path/to/gitlab-runner")
	}
	s := apitest.Start(t, storetest.Target{Name: "sqlite"})
	owner := s.NewUser(t, "legacyowner")
	p := newCIProject(t, s, owner, "legacy", nil)
	var proj struct {
		RunnersToken string `json:"runners_token"`
	}
	s.Get(t, fmt.Sprintf("/projects/%d", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &proj)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	out, err := exec.Command(bin, "register", "--non-interactive", "--config", cfg, "--url", s.URL, "--registration-token", proj.RunnersToken,
		"--executor", "shell", "--description", "legacy", "--tag-list", "a,b").CombinedOutput()
	if err != nil {
		t.Fatalf("gitlab-runner register: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "verify", "--config", cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is alive") && !strings.Contains(string(out), "is valid") {
		t.Fatalf("gitlab-runner verify: %v\n%s", err, out)
	}
	list, _, err := s.App.DB.Runners(ctx(t), storeRunnerFilter(p.ID), pageOne)
	if err != nil || len(list) != 1 || list[0].Description != "legacy" || strings.Join(list[0].TagList, ",") != "a,b" || list[0].ContactedAt == nil {
		t.Fatalf("registered runner %+v, %v", list, err)
	}
	out, err = exec.Command(bin, "unregister", "--config", cfg, "--all-runners").CombinedOutput()
	if err != nil {
		t.Fatalf("gitlab-runner unregister: %v\n%s", err, out)
	}
	if list, _, _ := s.App.DB.Runners(ctx(t), storeRunnerFilter(p.ID), pageOne); len(list) != 0 {
		t.Errorf("unregistered runner still there: %+v", list)
	}
}

// TestQuarryRunner_endToEnd runs the pipeline on Quarry's own runner
// (quarry runner), registered with a glrt- token, two jobs at once.
func TestQuarryRunner_endToEnd(t *testing.T) {
	t.Parallel()
	runEndToEnd(t, 121, quarryRunner(2))
}

// quarryRunner starts Quarry's runner with concurrent workers; it stops
// when the test ends.
func quarryRunner(concurrent int) runnerStarter {
	return func(t *testing.T, url, token, dir string) {
		cfg, err := runner.Register(ctx(t), runner.RegisterOptions{URL: url, Token: token, BuildsDir: filepath.Join(dir, "builds"),
			Concurrent: concurrent})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ID == 0 || cfg.SystemID == "" {
			t.Fatalf("registered config %+v", cfg)
		}
		rctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- runner.Run(rctx, cfg, nil) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("runner: %v", err)
			}
		})
	}
}
