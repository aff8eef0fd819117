package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/secrets"
	"quarry/internal/storetest"
)

// artifacts:reports:dotenv: a job's report, parsed when the runner hands
// it in (refused whole with GitLab's 400 when it breaks a rule), becomes
// variables of the jobs that depend on it — above the YAML variables,
// below the project's — and may give a deployment its environment URL.

// gzipped is s as one gzip member, as a runner uploads a report.
func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadDotenv hands in a dotenv report for a job a runner holds.
func uploadDotenv(t *testing.T, s *apitest.Server, job payloadJSON, body []byte) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/jobs/%d/artifacts?artifact_type=dotenv&artifact_format=gzip", job.ID),
		Header: map[string]string{"JOB-TOKEN": job.Token},
		Files:  map[string]apitest.File{"file": {Name: ".env.gz", Content: body}}})
}

const dotenvProtoCI = `
stages: [build, test]
variables:
  FROM_YAML: yaml
build:
  stage: build
  script: [make]
  artifacts:
    reports:
      dotenv: deploy.env
test:
  stage: test
  script: [test]
excluded:
  stage: test
  needs:
    - job: build
      artifacts: false
  script: [test]
no-dependencies:
  stage: test
  dependencies: []
  script: [test]
`

func TestRunnerProtocol_dotenv(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "dotowner")
		p := newCIProject(t, s, owner, "dotenv", map[string]string{".gitlab-ci.yml": dotenvProtoCI})
		p.settle(t, 1)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": "OVERRIDDEN", "value": "from-project"}}).Want(t, http.StatusCreated)
		r := projectRunner(t, p, nil)

		build := r.take(t)
		if build.JobInfo.Name != "build" {
			t.Fatalf("first job %s; want build", build.JobInfo.Name)
		}
		if len(build.Artifacts) != 1 || build.Artifacts[0].ArtifactType != "dotenv" || build.Artifacts[0].Format != "gzip" {
			t.Fatalf("build's artifacts %+v; want one dotenv report in gzip", build.Artifacts)
		}
		// Refused files leave nothing behind: each is GitLab's 400 and
		// message, and a good file is still taken afterwards.
		for _, c := range []struct {
			name, body, want string
		}{
			{"bad key", "NO-WORK=1\n", "Validation failed: Key can contain only letters, digits and '_'."},
			{"blank line", "A=1\n\nB=2\n", "Invalid Format"},
			{"comment", "# note\n", "Invalid Format"},
			{"multi-line value", "A=\"x\ny\"\n", "Invalid Format"},
			{"too many", manyDotenv(21), "Dotenv files cannot have more than 20 variables"},
		} {
			res := uploadDotenv(t, s, build, gzipped(t, c.body))
			if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), `"message":`) {
				t.Errorf("%s: %d %s; want 400 with a message", c.name, res.Status, res.Body)
				continue
			}
			var m struct{ Message string }
			res.JSON(t, &m)
			if m.Message != c.want {
				t.Errorf("%s: message %q; want %q", c.name, m.Message, c.want)
			}
		}
		big := make([]byte, 5<<10)
		uploadDotenv(t, s, build, big).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"Dotenv Artifact Too Big. Maximum Allowable Size: 5120"}`)
		uploadDotenv(t, s, build, []byte("A=1\n")).Want(t, http.StatusBadRequest).WantBody(t, `{"message":"Invalid Format"}`)

		uploadDotenv(t, s, build, gzipped(t, "URL=https://review.example/app\nFROM_YAML=dotenv\r\nOVERRIDDEN=from-dotenv\n")).
			Want(t, http.StatusCreated)
		uploadDotenv(t, s, build, gzipped(t, "SECOND=1\n")).Want(t, http.StatusBadRequest)
		// At rest the values are sealed, as every CI variable's.
		db, _ := rawDB(t, s)
		rows, err := db.Query("SELECT key, value FROM ci_job_variables ORDER BY position")
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
			if _, ok := secrets.SealedWith(v); !ok || strings.Contains(v, "review.example") {
				t.Errorf("%s stored as %q; want it sealed", k, v)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if strings.Join(keys, " ") != "URL FROM_YAML OVERRIDDEN" {
			t.Errorf("stored keys %q; want those of the one file taken, in its order", keys)
		}
		r.update(t, build, map[string]any{"state": "success"}).Want(t, http.StatusOK)

		seen := map[string]bool{}
		for range 3 {
			job := r.take(t)
			seen[job.JobInfo.Name] = true
			url, _, public, ok := job.variable("URL")
			switch job.JobInfo.Name {
			case "test":
				if !ok || url != "https://review.example/app" || public {
					t.Errorf("test: URL %q (public %v, sent %v); want https://review.example/app, not public", url, public, ok)
				}
				// GitLab's order: YAML, then dotenv, then the project's
				// variables; the runner takes the last of a key.
				for key, want := range map[string][]string{
					"FROM_YAML":  {"yaml", "dotenv"},
					"OVERRIDDEN": {"from-dotenv", "from-project"},
				} {
					if got := valuesOf(job, key); strings.Join(got, " ") != strings.Join(want, " ") {
						t.Errorf("test: %s sent as %q in order; want %q", key, got, want)
					}
				}
			case "excluded", "no-dependencies":
				if ok {
					t.Errorf("%s: URL %q sent; a job that takes no artifacts of build gets none of its dotenv", job.JobInfo.Name, url)
				}
			default:
				t.Errorf("unexpected job %s", job.JobInfo.Name)
			}
			r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		}
		if len(seen) != 3 {
			t.Errorf("jobs %v; want test, excluded and no-dependencies", seen)
		}
	})
}

// valuesOf lists the values a payload gives key, in its order.
func valuesOf(p payloadJSON, key string) []string {
	var out []string
	for _, v := range p.Variables {
		if v.Key == key {
			out = append(out, v.Value)
		}
	}
	return out
}

func manyDotenv(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "V%d=%d\n", i, i)
	}
	return b.String()
}

const dotenvRunnerCI = `
stages: [build, test, deploy]
variables:
  FROM_YAML: yaml
build:
  stage: build
  script:
    - echo "URL=https://review.example/app" > deploy.env
    - echo "FROM_YAML=dotenv" >> deploy.env
    - echo "OVERRIDDEN=from-dotenv" >> deploy.env
  artifacts:
    reports:
      dotenv: deploy.env
bad:
  stage: build
  allow_failure: true
  script:
    - echo "NO-WORK=1" > bad.env
  artifacts:
    reports:
      dotenv: bad.env
later:
  stage: test
  script:
    - echo "url=[$URL] yaml=[$FROM_YAML] over=[$OVERRIDDEN]"
excluded:
  stage: test
  needs:
    - job: build
      artifacts: false
  script:
    - echo "url=[$URL]"
deploy:
  stage: deploy
  needs: [build]
  script:
    - echo "DYNAMIC_URL=$URL/$CI_JOB_ID" > own.env
  artifacts:
    reports:
      dotenv: own.env
  environment:
    name: review
    url: $DYNAMIC_URL
`

func TestQuarryRunner_dotenv(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) { testRunnerDotenv(t, s, quarryRunner(2), 2*time.Minute) })
}

// TestGitLabRunner_dotenv runs the same pipeline on the official
// gitlab-runner (QUARRY_GITLAB_RUNNER, as TestGitLabRunner_artifacts).
func TestGitLabRunner_dotenv(t *testing.T) {
	bin := os.Getenv("QUARRY_GITLAB_RUNNER")
	if bin == "" {
		t.Skip("NOT RUN: the official gitlab-runner dotenv test needs QUARRY_GITLAB_RUNNER=/path/to/gitlab-runner")
	}
	t.Parallel()
	testRunnerDotenv(t, apitest.Start(t, storetest.Target{Name: "sqlite"}), gitLabRunner(bin, 2), 10*time.Minute)
}

func testRunnerDotenv(t *testing.T, s *apitest.Server, start runnerStarter, wait time.Duration) {
	owner := s.NewUser(t, "dotrunowner")
	p := newCIProject(t, s, owner, "dotrun", map[string]string{".gitlab-ci.yml": dotenvRunnerCI})
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
		JSON: map[string]any{"key": "OVERRIDDEN", "value": "from-project"}}).Want(t, http.StatusCreated)
	p.settle(t, 1)
	pl := p.pipelines(t, "source=push")[0]
	startRunner(t, p, start)
	jobs := p.waitDone(t, pl.ID, wait)

	for name, want := range map[string]string{"build": "success", "bad": "failed", "later": "success", "excluded": "success",
		"deploy": "success"} {
		if j := jobs[name]; j.Status != want {
			t.Errorf("%s: %s (%s); want %s:\n%s", name, j.Status, j.FailureReason, want, p.jobLog(t, j.ID))
		}
	}
	if log := p.jobLog(t, jobs["bad"].ID); !strings.Contains(log, "400 Bad Request") {
		t.Errorf("bad's log does not show the refused upload:\n%s", log)
	}
	if log := p.jobLog(t, jobs["later"].ID); !strings.Contains(log, "url=[https://review.example/app] yaml=[dotenv] over=[from-project]") {
		t.Errorf("later's log lacks build's dotenv (above YAML, below the project's variable):\n%s", log)
	}
	if log := p.jobLog(t, jobs["excluded"].ID); !strings.Contains(log, "url=[]") {
		t.Errorf("excluded (needs build without artifacts) got build's dotenv:\n%s", log)
	}
	var envs []struct {
		Name        string `json:"name"`
		ExternalURL string `json:"external_url"`
	}
	s.Get(t, fmt.Sprintf("/projects/%d/environments?name=review", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &envs)
	want := fmt.Sprintf("https://review.example/app/%d", jobs["deploy"].ID)
	if len(envs) != 1 || envs[0].ExternalURL != want {
		t.Errorf("environments %+v; want review at %s (the deploy job's own dotenv)", envs, want)
	}
}

const dotenvBridgeCI = `
stages: [build, trigger]
build:
  stage: build
  script: [make]
  artifacts:
    reports:
      dotenv: build.env
child:
  stage: trigger
  needs: [build]
  variables:
    BUILD_VERSION: $BUILD_VERSION
  trigger:
    include: child.yml
`

// A bridge's variables are expanded with the dotenv reports of the jobs
// it depends on: the way GitLab hands a report downstream.
func TestRunnerProtocol_dotenvDownstream(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "dotbridge")
		p := newCIProject(t, s, owner, "dotbridge", map[string]string{".gitlab-ci.yml": dotenvBridgeCI,
			"child.yml": "show:\n  script: [echo]\n"})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		build := r.take(t)
		if build.JobInfo.Name != "build" {
			t.Fatalf("first job %s; want build", build.JobInfo.Name)
		}
		uploadDotenv(t, s, build, gzipped(t, "BUILD_VERSION=1.2.3\nONLY_UPSTREAM=x\n")).Want(t, http.StatusCreated)
		r.update(t, build, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		show := r.take(t)
		if show.JobInfo.Name != "show" {
			t.Fatalf("job %s; want the child pipeline's show", show.JobInfo.Name)
		}
		if v, _, _, ok := show.variable("BUILD_VERSION"); !ok || v != "1.2.3" {
			t.Errorf("child job: BUILD_VERSION %q (sent %v); want 1.2.3 from build's dotenv", v, ok)
		}
		if v, _, _, ok := show.variable("ONLY_UPSTREAM"); ok {
			t.Errorf("child job: ONLY_UPSTREAM %q sent; only the bridge's variables go downstream", v)
		}
		r.update(t, show, map[string]any{"state": "success"}).Want(t, http.StatusOK)
	})
}
