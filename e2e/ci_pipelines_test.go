package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

const threeStages = `
stages: [build, test, deploy]
build:
  stage: build
  script: [make]
test:
  stage: test
  script: [make test]
deploy:
  stage: deploy
  script: [make deploy]
`

// TestPipelines_lifecycle: a pipeline made through the API moves through
// its stages as jobs succeed, fail and are retried, with GitLab's
// statuses, times and fields at each step.
func TestPipelines_lifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "life", map[string]string{".gitlab-ci.yml": threeStages})
		p.settle(t, 1)

		pl := p.createPipeline(t, "main")
		if pl.Status != "pending" || pl.Source != "api" || pl.IID != 2 || pl.BeforeSHA != model.ZeroRef || pl.StartedAt != nil ||
			pl.Tag || pl.User == nil || pl.User.ID != owner.ID || pl.Ref != "main" || len(pl.SHA) != 40 ||
			!strings.HasSuffix(pl.WebURL, "/"+p.Path+"/-/pipelines/"+itoa(pl.ID)) {
			t.Fatalf("created pipeline %+v", pl)
		}
		if got := p.statuses(t, pl.ID); got != "build=pending deploy=created test=created | pending" {
			t.Fatalf("after create: %s", got)
		}
		run(t, s, p.job(t, pl.ID, "build").ID, succeed)
		if got := p.statuses(t, pl.ID); got != "build=success deploy=created test=pending | running" {
			t.Fatalf("after build: %s", got)
		}
		if p.pipeline(t, pl.ID).StartedAt == nil {
			t.Fatal("a running pipeline has no started_at")
		}
		test := p.job(t, pl.ID, "test")
		run(t, s, test.ID, failWith(2))
		if got := p.statuses(t, pl.ID); got != "build=success deploy=skipped test=failed | failed" {
			t.Fatalf("after test failed: %s", got)
		}
		failed := p.job(t, pl.ID, "test")
		if failed.FailureReason != "script_failure" || failed.FinishedAt == nil || failed.Duration == nil {
			t.Fatalf("failed job %+v", failed)
		}
		done := p.pipeline(t, pl.ID)
		if done.FinishedAt == nil || done.Duration == nil {
			t.Fatalf("failed pipeline without finish: %+v", done)
		}

		// Retry: a new job; the old one is hidden unless asked for.
		var retried jobJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/retry", p.ID, test.ID), Token: owner.Token}).
			Want(t, http.StatusCreated).JSON(t, &retried)
		if retried.ID == test.ID || retried.Status != "pending" || retried.StartedAt != nil || retried.FinishedAt != nil || retried.Duration != nil {
			t.Fatalf("retried job %+v", retried)
		}
		var visible []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/jobs", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &visible)
		if len(visible) != 3 {
			t.Fatalf("jobs without retried: %d", len(visible))
		}
		if got := p.statuses(t, pl.ID); got != "build=success deploy=created test=pending | running" {
			t.Fatalf("after retry: %s", got)
		}
		run(t, s, retried.ID, succeed)
		run(t, s, p.job(t, pl.ID, "deploy").ID, succeed)
		if got := p.statuses(t, pl.ID); got != "build=success deploy=success test=success | success" {
			t.Fatalf("at the end: %s", got)
		}

		// The official client reads the same pipeline and jobs.
		gp, _, err := s.Client(t, owner.Token).Pipelines.GetPipeline(p.ID, pl.ID)
		if err != nil || gp.Status != "success" || gp.FinishedAt == nil || gp.IID != 2 {
			t.Fatalf("client pipeline %+v, %v", gp, err)
		}
		jobs, _, err := s.Client(t, owner.Token).Jobs.ListPipelineJobs(p.ID, pl.ID, &gitlab.ListJobsOptions{IncludeRetried: gitlab.Ptr(true)})
		if err != nil || len(jobs) != 4 || jobs[0].ID < jobs[1].ID {
			t.Fatalf("client jobs %d (newest first), %v", len(jobs), err)
		}
		if jobs[0].Pipeline.ID != pl.ID || jobs[0].Commit == nil || jobs[0].Commit.ID != pl.SHA || jobs[0].User == nil ||
			jobs[0].User.Username != "owner" || !strings.HasSuffix(jobs[0].WebURL, "/-/jobs/"+itoa(int64(jobs[0].ID))) {
			t.Fatalf("client job %+v", jobs[0])
		}
	})
}

// TestPipelines_createRefused: the creation chain refuses with GitLab's
// messages and stores nothing for the API.
func TestPipelines_createRefused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		guest := s.NewUser(t, "guest")
		stranger := s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "refuse", map[string]string{".gitlab-ci.yml": threeStages})
		p.commit(t, "broken", map[string]string{".gitlab-ci.yml": "build:\n  stage: nowhere\n  script: [x]\n"})
		p.commit(t, "yamlbad", map[string]string{".gitlab-ci.yml": "build: [\n"})
		p.commit(t, "workflow", map[string]string{".gitlab-ci.yml": "workflow:\n  rules:\n    - if: $CI_COMMIT_BRANCH == \"main\"\n" + threeStages})
		p.commit(t, "rules", map[string]string{".gitlab-ci.yml": "build:\n  script: [x]\n  rules:\n    - if: $NOPE\n"})
		p.commit(t, "noconfig", map[string]string{"README.md": "other"})
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/repository/files/.gitlab-ci.yml", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "noconfig", "commit_message": "no ci"}}).Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": guest.ID, "access_level": 10}}).Want(t, http.StatusCreated)
		p.settle(t, 1)
		before := len(p.pipelines(t, "per_page=100"))

		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: token, JSON: body})
		}
		post(owner.Token, map[string]any{}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"ref is missing"}`)
		post(owner.Token, map[string]any{"ref": "nope"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["Reference not found"]}}`)
		post(owner.Token, map[string]any{"ref": "noconfig"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["Missing CI config file"]}}`)
		post(owner.Token, map[string]any{"ref": "broken"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["build job: chosen stage nowhere does not exist; available stages are .pre, build, test, deploy, .post"]}}`)
		if r := post(owner.Token, map[string]any{"ref": "yamlbad"}).Want(t, http.StatusBadRequest); !strings.Contains(string(r.Body), `"base"`) {
			t.Fatalf("invalid YAML: %s", r.Body)
		}
		post(owner.Token, map[string]any{"ref": "workflow"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["Pipeline filtered out by workflow rules."]}}`)
		post(owner.Token, map[string]any{"ref": "rules"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline."]}}`)
		post(owner.Token, map[string]any{"ref": "main", "variables": []map[string]any{{"key": "bad key", "value": "x"}}}).
			Want(t, http.StatusBadRequest)
		post(guest.Token, map[string]any{"ref": "main"}).Want(t, http.StatusForbidden)
		post(stranger.Token, map[string]any{"ref": "main"}).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		post("", map[string]any{"ref": "main"}).Want(t, http.StatusUnauthorized)
		if after := len(p.pipelines(t, "per_page=100")); after != before {
			t.Fatalf("refused creations stored pipelines: %d → %d", before, after)
		}
	})
}
