package e2e

import (
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// A pipeline of a protected tag is protected: its jobs get protected
// variables and protected runners take them; an unprotected tag's
// pipeline gets neither. Only those who may create a protected tag run
// pipelines for it.
func TestProtectedTags_pipelines(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		// Push pipelines are left out: the test makes its pipelines itself.
		p := newCIProject(t, s, owner, "tagpipes", map[string]string{".gitlab-ci.yml": "job:\n  script: [echo]\n  rules:\n    - if: $CI_PIPELINE_SOURCE != \"push\"\n"})
		base := "/projects/" + itoa(p.ID)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/protected_tags", Token: owner.Token, JSON: map[string]any{"name": "v*"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/variables", Token: owner.Token,
			JSON: map[string]any{"key": "DEPLOY_SECRET", "value": "s3cr3t-value", "protected": true}}).Want(t, 201)
		for _, tag := range []string{"v1", "x1"} {
			s.Do(t, apitest.Request{Method: "POST", Path: base + "/repository/tags", Token: owner.Token, JSON: map[string]any{"tag_name": tag, "ref": "main"}}).Want(t, 201)
		}
		// The developer may not run the protected tag's pipeline.
		s.Do(t, apitest.Request{Method: "POST", Path: base + "/pipeline", Token: dev.Token, JSON: map[string]any{"ref": "v1"}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"base":["Insufficient permissions for protected ref"]}}`)
		unprotected := p.createPipeline(t, "x1")
		protected := p.createPipeline(t, "v1")
		if unprotected.ID == 0 || protected.ID == 0 {
			t.Fatalf("pipelines %d %d", unprotected.ID, protected.ID)
		}
		// A protected runner passes over x1's job and takes v1's.
		job := projectRunner(t, p, map[string]any{"access_level": "ref_protected"}).take(t)
		if job.GitInfo.Ref != "v1" || job.GitInfo.RefType != "tag" {
			t.Fatalf("protected runner took %s (%s)", job.GitInfo.Ref, job.GitInfo.RefType)
		}
		if v, _, _, ok := job.variable("DEPLOY_SECRET"); !ok || v != "s3cr3t-value" {
			t.Errorf("protected tag's job: DEPLOY_SECRET %q %v", v, ok)
		}
		if v, _, _, _ := job.variable("CI_COMMIT_REF_PROTECTED"); v != "true" {
			t.Errorf("protected tag's job: CI_COMMIT_REF_PROTECTED %q", v)
		}
		job = projectRunner(t, p, nil).take(t)
		if job.GitInfo.Ref != "x1" {
			t.Fatalf("open runner took %s", job.GitInfo.Ref)
		}
		if v, _, _, ok := job.variable("DEPLOY_SECRET"); ok {
			t.Errorf("unprotected tag's job has DEPLOY_SECRET %q", v)
		}
		if v, _, _, _ := job.variable("CI_COMMIT_REF_PROTECTED"); v != "false" {
			t.Errorf("unprotected tag's job: CI_COMMIT_REF_PROTECTED %q", v)
		}
	})
}
