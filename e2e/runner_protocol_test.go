package e2e

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

const oneJobCI = `
build:
  before_script: [echo before]
  script: [echo build]
  after_script: [echo after]
  artifacts:
    paths: [out/]
    expire_in: 1 week
    reports:
      junit: report.xml
`

// Registration: registration tokens (POST /runners), authentication
// tokens made by users (POST /user/runners) and verify, managers,
// unregister and token reset, with every error answer.
func TestRunnerProtocol_registration(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "regowner")
		p := newCIProject(t, s, owner, "reg", nil)
		var proj struct {
			RunnersToken string `json:"runners_token"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &proj)
		if proj.RunnersToken == "" {
			t.Fatal("project has no runners_token")
		}

		// Legacy registration.
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"token is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": "nope"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": proj.RunnersToken,
			"access_level": "bogus"}}).Want(t, http.StatusBadRequest)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": proj.RunnersToken,
			"run_untagged": false}}).Want(t, http.StatusBadRequest)
		var legacy struct {
			ID             int64   `json:"id"`
			Token          string  `json:"token"`
			TokenExpiresAt *string `json:"token_expires_at"`
		}
		res := s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": proj.RunnersToken,
			"description": "legacy", "tag_list": "a,b", "run_untagged": true, "locked": true, "paused": false,
			"info": map[string]any{"name": "gitlab-runner", "version": "16.0.0", "executor": "shell"}}}).Want(t, http.StatusCreated)
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q; want application/json", ct)
		}
		res.JSON(t, &legacy)
		if legacy.ID == 0 || legacy.Token == "" || strings.HasPrefix(legacy.Token, model.RunnerTokenPrefix) || legacy.TokenExpiresAt != nil {
			t.Fatalf("registration answer %s", res.Body)
		}
		// The secret is not stored: only its digest.
		stored, err := s.App.DB.Runner(ctx(t), legacy.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.TokenDigest == legacy.Token || strings.Contains(stored.TokenDigest, legacy.Token) {
			t.Error("the runner token is stored as it is")
		}

		// Verify, with a machine.
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{}}).Want(t, http.StatusBadRequest)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": "glrt-nope"}}).Want(t, http.StatusForbidden)
		var verified struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": legacy.Token, "system_id": "s_aaaaaaaaaaaa"}}).
			Want(t, http.StatusOK).JSON(t, &verified)
		if verified.ID != legacy.ID || verified.Token != legacy.Token {
			t.Errorf("verify answered %+v", verified)
		}
		managers, err := s.App.DB.RunnerManagers(ctx(t), legacy.ID)
		if err != nil || len(managers) != 1 || managers[0].SystemID != "s_aaaaaaaaaaaa" || managers[0].ContactedAt == nil {
			t.Fatalf("managers %+v, %v", managers, err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/runners/managers", JSON: map[string]any{"token": legacy.Token, "system_id": "s_other"}}).
			Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/runners/managers", JSON: map[string]any{"token": legacy.Token, "system_id": "s_aaaaaaaaaaaa"}}).
			Want(t, http.StatusNoContent)

		// Reset: the old token stops working, the new one works.
		var reset struct {
			Token string `json:"token"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/reset_authentication_token", JSON: map[string]any{"token": legacy.Token}}).
			Want(t, http.StatusCreated).JSON(t, &reset)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": legacy.Token}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": reset.Token}}).Want(t, http.StatusOK)
		// Unregister.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/runners", JSON: map[string]any{"token": reset.Token}}).Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": reset.Token}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/runners", JSON: map[string]any{"token": reset.Token}}).Want(t, http.StatusForbidden)

		// Runners made by users: glrt- tokens; who may make which.
		dev := s.NewUser(t, "regdev")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: owner.Token, JSON: map[string]any{}}).Want(t, http.StatusBadRequest)
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: owner.Token, JSON: map[string]any{"runner_type": "instance_type"}}).
			Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: dev.Token, JSON: map[string]any{"runner_type": "project_type",
			"project_id": p.ID}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: dev.Token, JSON: map[string]any{"runner_type": "project_type"}}).
			Want(t, http.StatusBadRequest)
		stranger := s.NewUser(t, "regstranger")
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: stranger.Token, JSON: map[string]any{"runner_type": "project_type",
			"project_id": p.ID}}).Want(t, http.StatusNotFound)
		readOnly := s.NewToken(t, owner.ID, "read_api")
		s.Do(t, apitest.Request{Method: "POST", Path: "/user/runners", Token: readOnly, JSON: map[string]any{"runner_type": "project_type",
			"project_id": p.ID}}).Want(t, http.StatusForbidden)
		createOnly := s.NewToken(t, owner.ID, "create_runner")
		r := newRunner(t, s, createOnly, map[string]any{"runner_type": "project_type", "project_id": p.ID, "description": "mine"})
		if !strings.HasPrefix(r.Token, "glrt-") {
			t.Errorf("token %q lacks the glrt- prefix", r.Token)
		}
		inst := newRunner(t, s, s.RootToken, map[string]any{"runner_type": "instance_type"})
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/verify", JSON: map[string]any{"token": inst.Token}}).Want(t, http.StatusOK)
		// A missing token on a runner call is 400, a header token works.
		s.Do(t, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{}}).Want(t, http.StatusBadRequest)
		s.Do(t, apitest.Request{Method: "POST", Path: "/jobs/request", JSON: map[string]any{"token": "bad"}}).Want(t, http.StatusForbidden)
	}, shortPoll)
}

// A job from pending to success through the protocol: the payload, the
// queue version, log appends and their offsets, state updates, the job
// token's life.
func TestRunnerProtocol_jobLifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lifeowner")
		p := newCIProject(t, s, owner, "life", map[string]string{".gitlab-ci.yml": oneJobCI})
		p.settle(t, 1)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": "SECRET_ONE", "value": "s3cr3t-value", "masked": true}}).Want(t, http.StatusCreated)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/variables", p.ID), Token: owner.Token,
			JSON: map[string]any{"key": "CONF", "value": "x=1", "variable_type": "file"}}).Want(t, http.StatusCreated)
		pl := p.pipelines(t, "source=push")[0]
		r := projectRunner(t, p, nil)

		job := r.take(t)
		if job.JobInfo.Name != "build" || job.JobInfo.Stage != "test" || job.JobInfo.ProjectID != p.ID {
			t.Errorf("job_info %+v", job.JobInfo)
		}
		if !strings.HasPrefix(job.Token, model.JobTokenPrefix) {
			t.Errorf("job token %q", job.Token)
		}
		gi := job.GitInfo
		if gi.SHA != pl.SHA || gi.Ref != "main" || gi.RefType != "branch" || gi.Depth != 20 ||
			!strings.Contains(gi.RepoURL, "gitlab-ci-token:"+job.Token+"@") || !strings.HasSuffix(gi.RepoURL, "/"+p.Path+".git") {
			t.Errorf("git_info %+v", gi)
		}
		wantRefspecs := []string{fmt.Sprintf("+refs/pipelines/%d:refs/pipelines/%d", pl.ID, pl.ID), "+refs/heads/main:refs/remotes/origin/main"}
		if strings.Join(gi.Refspecs, " ") != strings.Join(wantRefspecs, " ") {
			t.Errorf("refspecs %v; want %v", gi.Refspecs, wantRefspecs)
		}
		if job.RunnerInfo.Timeout != 3600 {
			t.Errorf("timeout %d", job.RunnerInfo.Timeout)
		}
		if len(job.Steps) != 2 || strings.Join(job.Steps[0].Script, ";") != "echo before;echo build" || job.Steps[0].When != "on_success" ||
			job.Steps[1].Name != "after_script" || job.Steps[1].When != "always" || !job.Steps[1].AllowFailure {
			t.Errorf("steps %+v", job.Steps)
		}
		if len(job.Artifacts) != 2 || job.Artifacts[0].ArtifactType != "archive" || job.Artifacts[0].Format != "zip" ||
			job.Artifacts[1].ArtifactType != "junit" || job.Artifacts[1].Format != "gzip" || job.Artifacts[1].Name != "junit.xml" {
			t.Errorf("artifacts %+v", job.Artifacts)
		}
		if !job.Features.TraceSections {
			t.Error("features.trace_sections false")
		}
		for key, want := range map[string]string{"CI_JOB_ID": itoa(job.ID), "CI_PIPELINE_ID": itoa(pl.ID), "CI_API_V4_URL": s.URL + "/api/v4",
			"CI_SERVER_URL": s.URL, "CI_COMMIT_SHA": pl.SHA, "CI_PROJECT_PATH": p.Path, "CI_JOB_NAME": "build", "GITLAB_USER_LOGIN": owner.Username,
			"CI_REPOSITORY_URL": gi.RepoURL, "CI_JOB_TOKEN": job.Token, "SECRET_ONE": "s3cr3t-value", "CONF": "x=1"} {
			if v, _, _, ok := job.variable(key); !ok || v != want {
				t.Errorf("variable %s = %q (present %v); want %q", key, v, ok, want)
			}
		}
		if _, masked, public, _ := job.variable("CI_JOB_TOKEN"); !masked || public {
			t.Error("CI_JOB_TOKEN not masked or public")
		}
		if _, masked, public, _ := job.variable("SECRET_ONE"); !masked || public {
			t.Error("a masked project variable is sent unmasked or public")
		}
		for _, v := range job.Variables {
			if v.Key == "CONF" && !v.File {
				t.Error("a file variable is not flagged file")
			}
		}
		if got := p.job(t, pl.ID, "build"); got.Status != "running" {
			t.Errorf("job status %s; want running", got.Status)
		}

		// Nothing else: 204 with the queue version, which a second call
		// with it waits out (long poll) and repeats.
		res := r.request(t, "").Want(t, http.StatusNoContent)
		version := res.Header.Get("X-Gitlab-Last-Update")
		if version == "" || res.Header.Get("X-Service-Last-Update") != version {
			t.Fatalf("queue version headers %v", res.Header)
		}
		start := time.Now()
		res = r.request(t, version).Want(t, http.StatusNoContent)
		if waited := time.Since(start); waited < 250*time.Millisecond {
			t.Errorf("an unchanged queue answered after %v, not after the long poll", waited)
		}
		if res.Header.Get("X-Gitlab-Last-Update") != version {
			t.Error("the queue version changed with nothing queued")
		}

		// The job token clones while the job runs.
		out, err := exec.Command("git", "ls-remote", gi.RepoURL, "refs/pipelines/"+itoa(pl.ID)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), pl.SHA) {
			t.Fatalf("git ls-remote with the job token: %v %s", err, out)
		}
		wrongToken := strings.Replace(gi.RepoURL, job.Token, model.JobTokenPrefix+"wrong", 1)
		if out, err := exec.Command("git", "ls-remote", wrongToken).CombinedOutput(); err == nil {
			t.Errorf("a wrong job token cloned: %s", out)
		}
		// …and answers GET /job in each of its three forms.
		for _, req := range []apitest.Request{
			{Path: "/job", Header: map[string]string{"JOB-TOKEN": job.Token}},
			{Path: "/job", Header: map[string]string{"Authorization": "Bearer " + job.Token}},
			{Path: "/job?job_token=" + job.Token},
		} {
			var got jobJSON
			s.Do(t, req).Want(t, http.StatusOK).JSON(t, &got)
			if got.ID != job.ID || got.Status != "running" {
				t.Errorf("GET /job: %+v", got)
			}
		}
		s.Do(t, apitest.Request{Path: "/job"}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Path: "/job", Token: owner.Token}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Path: "/job", Header: map[string]string{"JOB-TOKEN": "glcbt-nope"}}).Want(t, http.StatusUnauthorized)
		// The token reads its project's jobs as its user.
		s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/jobs", p.ID), Header: map[string]string{"JOB-TOKEN": job.Token}}).Want(t, http.StatusOK)

		// Log appends.
		r.trace(t, job, -1, "x").Want(t, http.StatusBadRequest)
		res = r.trace(t, job, 5, "late").Want(t, http.StatusRequestedRangeNotSatisfiable)
		if res.Header.Get("Range") != "0-0" {
			t.Errorf("416 Range %q; want 0-0", res.Header.Get("Range"))
		}
		res = r.trace(t, job, 0, "hello ").Want(t, http.StatusAccepted)
		if res.Header.Get("Range") != "0-6" || res.Header.Get("Job-Status") != "running" || res.Header.Get("X-Gitlab-Trace-Update-Interval") == "" {
			t.Errorf("202 headers %v", res.Header)
		}
		r.trace(t, job, 6, "world\n").Want(t, http.StatusAccepted)
		// The log is served while the job runs.
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).WantText(t, "hello world\n")
		// A resend from an earlier offset replaces what followed it.
		r.trace(t, job, 6, "there\n").Want(t, http.StatusAccepted)
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).WantText(t, "hello there\n")

		// State updates.
		r.update(t, job, map[string]any{"token": "glcbt-wrong", "state": "success"}).Want(t, http.StatusForbidden)
		r.update(t, job, map[string]any{"state": "bogus"}).Want(t, http.StatusBadRequest)
		r.update(t, job, map[string]any{"state": "running"}).Want(t, http.StatusOK)
		r.update(t, job, map[string]any{"state": "success", "output": map[string]any{"checksum": "crc32:00000000", "bytesize": 12}}).
			Want(t, http.StatusOK).WantText(t, "200")
		res = r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusForbidden)
		if res.Header.Get("Job-Status") != "success" {
			t.Errorf("Job-Status %q after the job ended", res.Header.Get("Job-Status"))
		}
		if res := r.trace(t, job, 12, "more"); res.Status != http.StatusForbidden || res.Header.Get("Job-Status") != "success" {
			t.Errorf("append after the end: %d %v", res.Status, res.Header)
		}
		if got := p.job(t, pl.ID, "build"); got.Status != "success" {
			t.Errorf("job status %s", got.Status)
		}
		// The token died with the job.
		s.Do(t, apitest.Request{Path: "/job", Header: map[string]string{"JOB-TOKEN": job.Token}}).Want(t, http.StatusUnauthorized)
		if out, err := exec.Command("git", "ls-remote", gi.RepoURL).CombinedOutput(); err == nil {
			t.Errorf("a finished job's token cloned: %s", out)
		}
	}, shortPoll)
}

// Matching: tags, run_untagged, paused, ref_protected; a failure with
// its reason and exit code; a cancel the runner learns of.
func TestRunnerProtocol_matching(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "matchowner")
		p := newCIProject(t, s, owner, "match", map[string]string{".gitlab-ci.yml": `
tagged:
  tags: [linux]
  script: [exit 3]
plain:
  script: [sleep 100]
`})
		p.settle(t, 1)
		pl := p.pipelines(t, "source=push")[0]
		paused := projectRunner(t, p, map[string]any{"paused": true})
		paused.request(t, "").Want(t, http.StatusNoContent)
		protected := projectRunner(t, p, map[string]any{"access_level": "ref_protected", "tag_list": []string{"linux"}})
		tagsOnly := projectRunner(t, p, map[string]any{"run_untagged": false, "tag_list": []string{"linux"}})
		untagged := projectRunner(t, p, map[string]any{"run_untagged": true})

		// main is protected (the default branch): the protected runner may
		// take the tagged job.
		j1 := protected.take(t)
		if j1.JobInfo.Name != "tagged" {
			t.Fatalf("protected runner got %s", j1.JobInfo.Name)
		}
		tagsOnly.request(t, "").Want(t, http.StatusNoContent) // only the untagged job is left
		j2 := untagged.take(t)
		if j2.JobInfo.Name != "plain" {
			t.Fatalf("untagged runner got %s", j2.JobInfo.Name)
		}
		// A failure with its reason and exit code.
		protected.update(t, j1, map[string]any{"state": "failed", "failure_reason": "script_failure", "exit_code": 3}).Want(t, http.StatusOK)
		var failed struct {
			Status        string `json:"status"`
			FailureReason string `json:"failure_reason"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, j1.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &failed)
		if failed.Status != "failed" || failed.FailureReason != "script_failure" {
			t.Errorf("failed job %+v", failed)
		}
		// Cancel: the runner's next append and update are refused with the
		// job's status.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/cancel", p.ID, j2.ID), Token: owner.Token}).
			Want(t, http.StatusCreated)
		res := untagged.trace(t, j2, 0, "x")
		if res.Status != http.StatusForbidden || res.Header.Get("Job-Status") != "canceled" {
			t.Errorf("append after cancel: %d Job-Status %q", res.Status, res.Header.Get("Job-Status"))
		}
		res = untagged.update(t, j2, map[string]any{"state": "success"})
		if res.Status != http.StatusForbidden || res.Header.Get("Job-Status") != "canceled" {
			t.Errorf("update after cancel: %d Job-Status %q", res.Status, res.Header.Get("Job-Status"))
		}
		if st := p.pipeline(t, pl.ID).Status; st != "canceled" && st != "failed" {
			t.Errorf("pipeline %s", st)
		}
	}, shortPoll)
}

// Two runners racing for one job: exactly one gets it, every time.
func TestRunnerProtocol_race(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "raceowner")
		p := newCIProject(t, s, owner, "race", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		p.settle(t, 1)
		runners := []protoRunner{projectRunner(t, p, nil), projectRunner(t, p, nil), projectRunner(t, p, nil), projectRunner(t, p, nil)}
		for round := range 5 {
			if round > 0 {
				p.createPipeline(t, "main")
			}
			var wg sync.WaitGroup
			codes := make([]int, len(runners))
			for i, r := range runners {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[i] = r.request(t, "").Status
				}()
			}
			wg.Wait()
			got := 0
			for _, c := range codes {
				switch c {
				case http.StatusCreated:
					got++
				case http.StatusNoContent, http.StatusConflict:
				default:
					t.Errorf("round %d: status %d", round, c)
				}
			}
			if got != 1 {
				t.Fatalf("round %d: %d runners got the job (%v)", round, got, codes)
			}
		}
	}, shortPoll)
}

// buildZip makes a zip archive of files.
func buildZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Artifacts: uploads (and the size limit), the job JSON, downloads by
// job and by ref (whole and one file), dependencies fetched with the job
// token, keep and delete.
func TestRunnerProtocol_artifacts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "artowner")
		p := newCIProject(t, s, owner, "art", map[string]string{".gitlab-ci.yml": `
stages: [build, test]
build:
  stage: build
  script: [make]
  artifacts:
    paths: [out/]
test:
  stage: test
  script: [test]
`})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		build := r.take(t)
		upload := func(job payloadJSON, query string, name string, content []byte) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/jobs/%d/artifacts?%s", job.ID, query),
				Header: map[string]string{"JOB-TOKEN": job.Token}, Files: map[string]apitest.File{"file": {Name: name, Content: content}}})
		}
		archive := buildZip(t, map[string]string{"out/a.txt": "artifact A", "out/sub/b.txt": "artifact B"})
		upload(payloadJSON{ID: build.ID, Token: "glcbt-wrong"}, "artifact_type=archive", "artifacts.zip", archive).Want(t, http.StatusForbidden)
		upload(build, "artifact_type=bogus", "x", []byte("x")).Want(t, http.StatusBadRequest)
		upload(build, "artifact_type=archive&artifact_format=zip&expire_in=1+week", "artifacts.zip", archive).Want(t, http.StatusCreated)
		upload(build, "artifact_type=archive&artifact_format=zip", "artifacts.zip", archive).Want(t, http.StatusBadRequest)
		// Over the instance's limit: 413, nothing kept.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"max_artifacts_size": 1}}).Want(t, http.StatusOK)
		upload(build, "artifact_type=junit&artifact_format=gzip", "junit.xml.gz", bytes.Repeat([]byte("x"), 2<<20)).
			Want(t, http.StatusRequestEntityTooLarge)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/jobs/%d/artifacts/authorize?filesize=%d", build.ID, 2<<20),
			Header: map[string]string{"JOB-TOKEN": build.Token}}).Want(t, http.StatusRequestEntityTooLarge)
		r.update(t, build, map[string]any{"state": "success"}).Want(t, http.StatusOK)

		var j struct {
			ArtifactsFile *struct {
				Filename string `json:"filename"`
				Size     int64  `json:"size"`
			} `json:"artifacts_file"`
			ArtifactsExpireAt *string `json:"artifacts_expire_at"`
			Artifacts         []struct {
				FileType string `json:"file_type"`
			} `json:"artifacts"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, build.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &j)
		if j.ArtifactsFile == nil || j.ArtifactsFile.Filename != "artifacts.zip" || j.ArtifactsFile.Size != int64(len(archive)) ||
			j.ArtifactsExpireAt == nil || len(j.Artifacts) != 1 {
			t.Fatalf("job artifacts fields %+v", j)
		}

		// The next job depends on it and downloads it with its own token.
		test := r.take(t)
		if len(test.Dependencies) != 1 || test.Dependencies[0].ID != build.ID || test.Dependencies[0].Token != test.Token ||
			test.Dependencies[0].ArtifactsFile == nil || test.Dependencies[0].ArtifactsFile.Size != int64(len(archive)) {
			t.Fatalf("dependencies %+v", test.Dependencies)
		}
		got := s.Do(t, apitest.Request{Path: fmt.Sprintf("/jobs/%d/artifacts", build.ID), Header: map[string]string{"JOB-TOKEN": test.Token}}).
			Want(t, http.StatusOK)
		if !bytes.Equal(got.Body, archive) {
			t.Error("the dependency archive differs from the upload")
		}
		s.Do(t, apitest.Request{Path: fmt.Sprintf("/jobs/%d/artifacts", build.ID), Header: map[string]string{"JOB-TOKEN": "glcbt-x"}}).
			Want(t, http.StatusForbidden)
		// A job token downloads through the API as its user too.
		s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/jobs/%d/artifacts", p.ID, build.ID),
			Header: map[string]string{"JOB-TOKEN": test.Token}}).Want(t, http.StatusOK)
		r.update(t, test, map[string]any{"state": "success"}).Want(t, http.StatusOK)

		// Downloads.
		base := fmt.Sprintf("/projects/%d/jobs", p.ID)
		res := s.Get(t, fmt.Sprintf("%s/%d/artifacts", base, build.ID), owner.Token).Want(t, http.StatusOK)
		if !bytes.Equal(res.Body, archive) || !strings.Contains(res.Header.Get("Content-Disposition"), "artifacts.zip") {
			t.Error("archive download differs")
		}
		s.Get(t, fmt.Sprintf("%s/%d/artifacts/out/sub/b.txt", base, build.ID), owner.Token).Want(t, http.StatusOK).WantText(t, "artifact B")
		s.Get(t, fmt.Sprintf("%s/%d/artifacts/out/missing.txt", base, build.ID), owner.Token).Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("%s/%d/artifacts/../etc/passwd", base, build.ID), owner.Token).Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("%s/artifacts/main/download?job=build", base), owner.Token).Want(t, http.StatusOK)
		s.Get(t, fmt.Sprintf("%s/artifacts/main/raw/out/a.txt?job=build", base), owner.Token).Want(t, http.StatusOK).WantText(t, "artifact A")
		s.Get(t, fmt.Sprintf("%s/artifacts/main/download?job=test", base), owner.Token).Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("%s/artifacts/nope/download?job=build", base), owner.Token).Want(t, http.StatusNotFound)
		s.Get(t, fmt.Sprintf("%s/artifacts/main/download", base), owner.Token).Want(t, http.StatusBadRequest)
		s.Get(t, fmt.Sprintf("%s/%d/artifacts", base, test.ID), owner.Token).Want(t, http.StatusNotFound)
		stranger := s.NewUser(t, "artstranger")
		s.Get(t, fmt.Sprintf("%s/%d/artifacts", base, build.ID), stranger.Token).Want(t, http.StatusNotFound)

		// Keep, then delete.
		var kept struct {
			ArtifactsExpireAt *string `json:"artifacts_expire_at"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("%s/%d/artifacts/keep", base, build.ID), Token: owner.Token}).
			Want(t, http.StatusOK).JSON(t, &kept)
		if kept.ArtifactsExpireAt != nil {
			t.Error("kept artifacts still expire")
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d/artifacts", base, build.ID), Token: owner.Token}).Want(t, http.StatusNoContent)
		s.Get(t, fmt.Sprintf("%s/%d/artifacts", base, build.ID), owner.Token).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%d/artifacts", base, build.ID), Token: owner.Token}).Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/artifacts", p.ID), Token: owner.Token}).Want(t, http.StatusAccepted)
	}, shortPoll)
}

// A running job whose runner goes silent is failed by the sweep.
func TestRunnerProtocol_stuckJobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "stuckowner")
		p := newCIProject(t, s, owner, "stuck", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		job := r.take(t)
		eventually(t, "the silent job failed", func() bool {
			var j jobJSON
			s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &j)
			return j.Status == "failed" && j.FailureReason == "stuck_or_timeout_failure"
		})
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusForbidden)
	}, shortPoll, func(c *config) {
		c.StuckJobsInterval = 200 * time.Millisecond
		c.RunnerSilence = 500 * time.Millisecond
	})
}

// GET /job/allowed_agents with a running job's token: the agents whose
// configuration admits the job's project, with the job, pipeline, project
// and user; other credentials are 401.
func TestRunnerProtocol_allowedAgents(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "agentowner")
		p := newCIProject(t, s, owner, "agented", map[string]string{
			".gitlab-ci.yml":                     "deploy:\n  script: [\"true\"]\n",
			".gitlab/agents/prod/config.yaml":    "ci_access:\n  projects:\n    - id: " + "agentowner/agented" + "\n",
			".gitlab/agents/staging/config.yaml": "ci_access: {}\n",
		})
		p.settle(t, 1)
		for _, name := range []string{"prod", "staging"} {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/cluster_agents", p.ID), Token: owner.Token,
				JSON: map[string]any{"name": name}}).Want(t, http.StatusCreated)
		}
		r := projectRunner(t, p, nil)
		job := r.take(t)
		var got struct {
			AllowedAgents []struct {
				ID            int64 `json:"id"`
				ConfigProject struct {
					ID                int64  `json:"id"`
					PathWithNamespace string `json:"path_with_namespace"`
				} `json:"config_project"`
			} `json:"allowed_agents"`
			Job struct {
				ID          int64  `json:"id"`
				Name        string `json:"name"`
				ProjectName string `json:"project_name"`
			} `json:"job"`
			Pipeline struct {
				ID     int64  `json:"id"`
				WebURL string `json:"web_url"`
			} `json:"pipeline"`
			Project struct {
				ID int64 `json:"id"`
			} `json:"project"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		s.Do(t, apitest.Request{Path: "/job/allowed_agents", Header: map[string]string{"JOB-TOKEN": job.Token}}).Want(t, http.StatusOK).JSON(t, &got)
		// Both are the project's own agents: its own project is always
		// admitted.
		if len(got.AllowedAgents) != 2 || got.AllowedAgents[0].ConfigProject.ID != p.ID || got.Job.ID != job.ID || got.Job.Name != "deploy" ||
			got.Project.ID != p.ID || got.User.Username != owner.Username || !strings.HasSuffix(got.Pipeline.WebURL, fmt.Sprintf("/-/pipelines/%d", got.Pipeline.ID)) {
			t.Errorf("allowed agents %+v", got)
		}
		s.Do(t, apitest.Request{Path: "/job/allowed_agents?job_token=" + job.Token}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: "/job/allowed_agents", Token: owner.Token}).Want(t, http.StatusUnauthorized)
		s.Do(t, apitest.Request{Path: "/job/allowed_agents"}).Want(t, http.StatusUnauthorized)
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: "/job/allowed_agents", Header: map[string]string{"JOB-TOKEN": job.Token}}).Want(t, http.StatusUnauthorized)
	}, shortPoll)
}

// A job token reaches another project only through that project's job
// token scope: the allowlist admits it.
func TestRunnerProtocol_jobTokenScope(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "scopeowner")
		src := newCIProject(t, s, owner, "src", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		dst := newCIProject(t, s, owner, "dst", map[string]string{".gitlab-ci.yml": "job2:\n  script: [\"true\"]\n"})
		src.settle(t, 1)
		r := projectRunner(t, src, nil)
		job := r.take(t)
		read := apitest.Request{Path: fmt.Sprintf("/projects/%d/jobs", dst.ID), Header: map[string]string{"JOB-TOKEN": job.Token}}
		res := s.Do(t, read).Want(t, http.StatusForbidden)
		if !strings.Contains(string(res.Body), "job token not allowed") {
			t.Errorf("refusal %s", res.Body)
		}
		// A pipeline triggered with the job token in another project is
		// refused as well…
		trigger := apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/trigger/pipeline", dst.ID),
			Form: map[string][]string{"token": {job.Token}, "ref": {"main"}}}
		s.Do(t, trigger).Want(t, http.StatusForbidden)
		// …until the target admits the source.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/job_token_scope/allowlist", dst.ID), Token: owner.Token,
			JSON: map[string]any{"target_project_id": src.ID}}).Want(t, http.StatusCreated)
		s.Do(t, read).Want(t, http.StatusOK)
		var pl pipelineJSON
		s.Do(t, trigger).Want(t, http.StatusCreated).JSON(t, &pl)
		if pl.Source != "pipeline" {
			t.Errorf("a pipeline triggered with a job token has source %q; want pipeline", pl.Source)
		}
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		s.Do(t, trigger).Want(t, http.StatusNotFound)
	}, shortPoll)
}

// A registration token longer than any Quarry makes is GitLab's 403 for
// an unknown token, answered before any query (a 60,000-character token
// once made SQLite refuse a LIKE pattern: 500).
func TestRunnerProtocol_longRegistrationToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		for _, token := range []string{strings.Repeat("a", 60000), "GR1348941" + strings.Repeat("%_", 30000), strings.Repeat("x", 256)} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": token}}).
				Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		}
	}, shortPoll)
}

// Registration tokens are reset by who owns them: a project's by its
// maintainers, a group's by its owners, the instance's by administrators;
// the old token stops registering, the new one registers.
func TestRunnerProtocol_resetRegistrationTokens(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "resetowner")
		p := newCIProject(t, s, owner, "reset", nil)
		dev := s.NewUser(t, "resetdev")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		register := func(token string) int {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": token}}).Status
		}
		var proj struct {
			RunnersToken string `json:"runners_token"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &proj)
		path := fmt.Sprintf("/projects/%d/runners/reset_registration_token", p.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: path, Token: dev.Token}).Want(t, http.StatusForbidden)
		var fresh struct {
			Token string `json:"token"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: path, Token: owner.Token}).Want(t, http.StatusCreated).JSON(t, &fresh)
		if fresh.Token == "" || fresh.Token == proj.RunnersToken {
			t.Fatalf("reset gave %q (was %q)", fresh.Token, proj.RunnersToken)
		}
		s.Get(t, fmt.Sprintf("/projects/%d", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &proj)
		if proj.RunnersToken != fresh.Token {
			t.Errorf("project runners_token %q; want the new one", proj.RunnersToken)
		}
		if register(fresh.Token) != http.StatusCreated {
			t.Error("the new project token does not register")
		}

		var g struct {
			ID           int64  `json:"id"`
			RunnersToken string `json:"runners_token"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "resetgrp", "path": "resetgrp"}}).
			Want(t, http.StatusCreated).JSON(t, &g)
		old := g.RunnersToken
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/runners/reset_registration_token", g.ID), Token: dev.Token}).
			Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/runners/reset_registration_token", g.ID), Token: owner.Token}).
			Want(t, http.StatusCreated).JSON(t, &fresh)
		if old != "" && register(old) != http.StatusForbidden {
			t.Error("the old group token still registers")
		}
		if register(fresh.Token) != http.StatusCreated {
			t.Error("the new group token does not register")
		}

		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/reset_registration_token", Token: owner.Token}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners/reset_registration_token", Token: s.RootToken}).
			Want(t, http.StatusCreated).JSON(t, &fresh)
		if register(fresh.Token) != http.StatusCreated {
			t.Error("the new instance token does not register")
		}
		var r struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/runners", JSON: map[string]any{"token": fresh.Token}}).Want(t, http.StatusCreated).JSON(t, &r)
		if got, err := s.App.DB.Runner(ctx(t), r.ID); err != nil || got.Type != "instance_type" {
			t.Errorf("runner of the instance token: %+v %v", got, err)
		}
	}, shortPoll)
}

// A log past the instance's limit fails its job (trace_size_exceeded);
// the runner is told with 403 and Job-Status.
func TestRunnerProtocol_logTooLarge(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "bigowner")
		p := newCIProject(t, s, owner, "biglog", map[string]string{".gitlab-ci.yml": "job1:\n  script: [\"true\"]\n"})
		p.settle(t, 1)
		r := projectRunner(t, p, nil)
		job := r.take(t)
		r.trace(t, job, 0, strings.Repeat("a", 1000)).Want(t, http.StatusAccepted)
		res := r.trace(t, job, 1000, strings.Repeat("b", 100))
		if res.Status != http.StatusForbidden || res.Header.Get("Job-Status") != "failed" {
			t.Fatalf("append past the limit: %d Job-Status %q %s", res.Status, res.Header.Get("Job-Status"), res.Body)
		}
		var j jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &j)
		if j.Status != "failed" || j.FailureReason != "trace_size_exceeded" {
			t.Errorf("job %s (%s)", j.Status, j.FailureReason)
		}
	}, shortPoll, func(c *config) { c.MaxJobLogBytes = 1024 })
}
