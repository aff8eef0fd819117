package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

const mrCI = `
mr-check:
  script: ["true"]
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
branch-build:
  script: ["true"]
  rules:
    - if: $CI_PIPELINE_SOURCE == "push"
`

// A merge request runs a merge_request_event pipeline of the jobs whose
// rules ask for one, at its head, with the CI_MERGE_REQUEST_* variables;
// a push to its source branch runs another; its head_pipeline is the
// newest pipeline of its head.
func TestMergeRequests_pipelines(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrpipeowner")
		p := newCIProject(t, s, owner, "mrpipes", map[string]string{".gitlab-ci.yml": mrCI})
		p.commit(t, "topic", map[string]string{"topic.txt": "one\n"})
		p.settle(t, 2) // main and topic push pipelines
		var mr mrJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
			JSON: map[string]any{"source_branch": "topic", "target_branch": "main", "title": "Topic"}}).Want(t, http.StatusCreated).JSON(t, &mr)
		mrPipelines := func() []pipelineJSON { return p.pipelines(t, "source=merge_request_event") }
		list := mrPipelines()
		if len(list) != 1 || list[0].SHA != mr.SHA || list[0].Ref != "topic" {
			t.Fatalf("merge request pipelines %+v", list)
		}
		jobs := p.ownJobs(t, list[0].ID)
		if len(jobs) != 1 || jobs[0].Name != "mr-check" {
			t.Fatalf("merge request pipeline jobs %+v", jobs)
		}
		var got struct {
			HeadPipeline *struct {
				ID     int64  `json:"id"`
				SHA    string `json:"sha"`
				Source string `json:"source"`
			} `json:"head_pipeline"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, mr.IID), owner.Token).Want(t, http.StatusOK).JSON(t, &got)
		if got.HeadPipeline == nil || got.HeadPipeline.ID != list[0].ID || got.HeadPipeline.Source != "merge_request_event" {
			t.Errorf("head_pipeline %+v; want pipeline %d", got.HeadPipeline, list[0].ID)
		}
		// The job sees the merge request.
		r := projectRunner(t, p, nil)
		job := r.take(t)
		for job.JobInfo.Name != "mr-check" { // the push pipelines' jobs come first
			r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
			job = r.take(t)
		}
		for key, want := range map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": itoa(mr.IID),
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "topic", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"} {
			if v, _, _, ok := job.variable(key); !ok || v != want {
				t.Errorf("%s = %q (present %v); want %q", key, v, ok, want)
			}
		}
		r.update(t, job, map[string]any{"state": "success"}).Want(t, http.StatusOK)
		// A push to the source branch runs the merge request's pipeline at
		// the new head.
		head := p.commit(t, "topic", map[string]string{"topic.txt": "two\n"})
		eventually(t, "a merge request pipeline at the new head", func() bool {
			for _, pl := range mrPipelines() {
				if pl.SHA == head {
					return true
				}
			}
			return false
		})
	}, shortPoll)
}
