package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// capiBranchSHA is a branch's head commit.
func capiBranchSHA(t *testing.T, p ciProject, branch string) string {
	t.Helper()
	var b struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	p.s.Get(t, fmt.Sprintf("/projects/%d/repository/branches/%s", p.ID, branch), p.Token).Want(t, http.StatusOK).JSON(t, &b)
	return b.Commit.ID
}

// capiStatus posts a commit status.
func capiStatus(t *testing.T, p ciProject, token, sha string, body map[string]any) *apitest.Response {
	t.Helper()
	return p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/statuses/%s", p.ID, sha), Token: token, JSON: body})
}

// TestCIStatuses_post: an external CI reports statuses of a commit: the
// first makes an external pipeline the list shows with the status, a
// second name joins it, a status moves as GitLab's state machine allows
// (400 with its message otherwise), and a done status is replaced by a
// new one.
func TestCIStatuses_post(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "external", nil)
		sha := capiBranchSHA(t, p, "main")
		// Every status names its ref here (TestCIStatuses_defaultRef
		// covers statuses without one).
		post := func(body map[string]any) *apitest.Response {
			body["ref"] = "main"
			return capiStatus(t, p, owner.Token, sha, body)
		}

		first := post(map[string]any{"state": "pending", "name": "ci/build", "ref": "main", "target_url": "https://ci.example.com/1",
			"description": "queued", "coverage": 42.5}).Want(t, http.StatusCreated).Object(t)
		capiWantTypes(t, "status", first, map[string]string{"id": "number", "sha": "string", "ref": "string", "status": "string",
			"name": "string", "target_url": "string", "description": "string", "created_at": "string", "started_at": "null",
			"finished_at": "null", "allow_failure": "boolean", "coverage": "number", "pipeline_id": "number", "author": "object"})
		capiWantFields(t, "status", first, map[string]any{"sha": sha, "ref": "main", "status": "pending", "name": "ci/build",
			"target_url": "https://ci.example.com/1", "description": "queued", "allow_failure": false, "coverage": 42.5})
		author, _ := first["author"].(map[string]any)
		capiWantFields(t, "author", author, map[string]any{"id": float64(owner.ID), "username": "owner"})
		plID := int64(first["pipeline_id"].(float64))

		// An external pipeline with the status.
		listed := p.pipelines(t, "source=external")
		if len(listed) != 1 || listed[0].ID != plID || listed[0].Status != "pending" || listed[0].SHA != sha || listed[0].Ref != "main" {
			t.Fatalf("external pipelines %+v; want %d pending", listed, plID)
		}
		if pl := p.pipeline(t, plID); pl.Source != "external" || pl.User == nil || pl.User.ID != owner.ID ||
			pl.Coverage == nil || *pl.Coverage != "42.50" {
			t.Errorf("external pipeline %+v; want source external, coverage 42.50", pl)
		}

		// The same name moves on; what is not given is kept.
		running := post(map[string]any{"state": "running", "name": "ci/build"}).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "running status", running, map[string]any{"id": first["id"], "status": "running", "pipeline_id": float64(plID),
			"description": "queued", "target_url": "https://ci.example.com/1", "coverage": 42.5})
		capiWantTypes(t, "running status", running, map[string]string{"started_at": "string", "finished_at": "null"})

		// Another name (context is name's alias) joins the pipeline.
		other := post(map[string]any{"state": "pending", "context": "ci/test"}).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "second status", other, map[string]any{"name": "ci/test", "pipeline_id": float64(plID), "ref": "main",
			"description": nil, "target_url": nil, "coverage": nil})
		if st := p.pipeline(t, plID).Status; st != "running" {
			t.Errorf("pipeline %s; want running", st)
		}

		// Moves the state machine refuses.
		post(map[string]any{"state": "running", "name": "ci/build"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"Cannot transition status via :run from :running (Reason(s): Status cannot transition via \"run\")"}`)
		post(map[string]any{"state": "pending", "name": "ci/test"}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via \"enqueue\")"}`)

		done := post(map[string]any{"state": "success", "name": "ci/build"}).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "finished status", done, map[string]any{"id": first["id"], "status": "success"})
		capiWantTypes(t, "finished status", done, map[string]string{"finished_at": "string"})
		post(map[string]any{"state": "failed", "name": "ci/test"}).Want(t, http.StatusCreated)
		if st := p.pipeline(t, plID).Status; st != "failed" {
			t.Errorf("pipeline %s; want failed", st)
		}
		// A finished status is replaced: a new one, the pipeline follows.
		again := post(map[string]any{"state": "success", "name": "ci/test"}).Want(t, http.StatusCreated).Object(t)
		if again["id"] == other["id"] || again["pipeline_id"] != float64(plID) {
			t.Errorf("replacing status %v; want a new one in pipeline %d", again, plID)
		}
		if st := p.pipeline(t, plID).Status; st != "success" {
			t.Errorf("pipeline %s; want success", st)
		}
		capiWantFields(t, "default name", post(map[string]any{"state": "canceled"}).Want(t, http.StatusCreated).Object(t),
			map[string]any{"name": "default", "status": "canceled"})
		capiWantFields(t, "skipped", post(map[string]any{"state": "skipped", "name": "ci/optional"}).Want(t, http.StatusCreated).Object(t),
			map[string]any{"status": "skipped"})
		if got := p.pipelines(t, "source=external"); len(got) != 1 {
			t.Errorf("external pipelines %+v; want one", got)
		}

		// Refused inputs.
		post(map[string]any{"state": "broken"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"state does not have a valid value"}`)
		post(map[string]any{"name": "x"}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"state is missing"}`)
		capiStatus(t, p, owner.Token, strings.Repeat("ab", 20), map[string]any{"state": "pending"}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Commit Not Found"}`)

		// The official client.
		cs, _, err := s.Client(t, owner.Token).Commits.SetCommitStatus(p.ID, sha, &gitlab.SetCommitStatusOptions{State: gitlab.Running,
			Ref: gitlab.Ptr("main"), Name: gitlab.Ptr("ci/client"), Description: gitlab.Ptr("from go")})
		if err != nil || cs.Status != "running" || cs.PipelineID != plID || cs.Description != "from go" || cs.Author.Username != "owner" {
			t.Errorf("client status %+v, %v", cs, err)
		}
	})
}

// TestCIStatuses_permissions: developers report statuses, but not on a
// protected branch they may not push to (GitLab's update_pipeline);
// reporters may not; strangers do not see the private project.
func TestCIStatuses_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		reporter := s.NewUser(t, "reporter")
		stranger := s.NewUser(t, "stranger")
		p := newCIProject(t, s, owner, "guarded", nil)
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		featureSHA := p.commit(t, "feature", map[string]string{"f.txt": "feature"})
		mainSHA := capiBranchSHA(t, p, "main")

		capiStatus(t, p, reporter.Token, featureSHA, map[string]any{"state": "pending"}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)
		capiStatus(t, p, stranger.Token, featureSHA, map[string]any{"state": "pending"}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Project Not Found"}`)
		capiStatus(t, p, "", featureSHA, map[string]any{"state": "pending"}).Want(t, http.StatusUnauthorized).
			WantBody(t, `{"message":"401 Unauthorized"}`)
		capiWantFields(t, "developer on feature", capiStatus(t, p, dev.Token, featureSHA, map[string]any{"state": "pending",
			"ref": "feature"}).Want(t, http.StatusCreated).Object(t), map[string]any{"ref": "feature", "status": "pending"})
		capiStatus(t, p, dev.Token, mainSHA, map[string]any{"state": "pending", "ref": "main"}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)
		capiStatus(t, p, owner.Token, mainSHA, map[string]any{"state": "pending", "ref": "main"}).Want(t, http.StatusCreated)
	})
}

// TestCIStatuses_joinsPipeline: a status joins the newest pipeline of its
// commit and ref, whatever made it, or the pipeline pipeline_id names;
// a pipeline_id of another commit is 404.
func TestCIStatuses_joinsPipeline(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "joined", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [x]}\n"})
		older := p.createPipeline(t, "main")
		newer := p.createPipeline(t, "main")
		sha := newer.SHA

		st := capiStatus(t, p, owner.Token, sha, map[string]any{"state": "success", "name": "lint", "pipeline_id": older.ID}).
			Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "status for pipeline_id", st, map[string]any{"pipeline_id": float64(older.ID), "status": "success"})
		var listed []map[string]any
		s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/%s/statuses?pipeline_id=%d&name=lint", p.ID, sha, older.ID), owner.Token).
			Want(t, http.StatusOK).JSON(t, &listed)
		if len(listed) != 1 || listed[0]["id"] != st["id"] {
			t.Errorf("lint in the older pipeline: %v", listed)
		}

		st = capiStatus(t, p, owner.Token, sha, map[string]any{"state": "running", "name": "scan", "ref": "main"}).
			Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "status without pipeline_id", st, map[string]any{"pipeline_id": float64(newer.ID)})
		if got := p.pipelines(t, "source=external"); len(got) != 0 {
			t.Errorf("external pipelines %v; want none (the commit's pipeline takes the status)", capiPipelineIDs(got))
		}

		p.commit(t, "main", map[string]string{"next.txt": "next"})
		elsewhere := p.createPipeline(t, "main")
		capiStatus(t, p, owner.Token, sha, map[string]any{"state": "pending", "pipeline_id": elsewhere.ID}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline for pipeline_id, sha and ref Not Found"}`)
	})
}

// TestCIStatuses_list: GET …/commits/:sha/statuses lists the jobs and
// statuses of the commit's pipelines, oldest first, the latest of each
// name unless all, filtered by ref, name, stage and pipeline_id.
func TestCIStatuses_list(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "listed", map[string]string{".gitlab-ci.yml": capiNoPush + `
stages: [build, test]
build: {stage: build, script: [x]}
test: {stage: test, script: [x]}
`})
		pl := p.createPipeline(t, "main")
		sha := pl.SHA
		oldBuild := p.job(t, pl.ID, "build").ID
		run(t, s, oldBuild, fail)
		newBuild := int64(capiJobAction(t, p, owner.Token, oldBuild, "retry", nil).Want(t, http.StatusCreated).Object(t)["id"].(float64))
		test := p.job(t, pl.ID, "test").ID
		lint := int64(capiStatus(t, p, owner.Token, sha, map[string]any{"state": "success", "name": "lint", "pipeline_id": pl.ID}).
			Want(t, http.StatusCreated).Object(t)["id"].(float64))
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/branches", p.ID), Token: owner.Token,
			JSON: map[string]any{"branch": "other", "ref": "main"}}).Want(t, http.StatusCreated)
		deployed := capiStatus(t, p, owner.Token, sha, map[string]any{"state": "running", "name": "deploy", "ref": "other"}).
			Want(t, http.StatusCreated).Object(t)
		deploy := int64(deployed["id"].(float64))
		otherPipeline := int64(deployed["pipeline_id"].(float64))
		if otherPipeline == pl.ID {
			t.Fatalf("the status of ref other joined main's pipeline")
		}

		list := func(query string) []int64 {
			var out []struct {
				ID int64 `json:"id"`
			}
			s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/%s/statuses?per_page=100&%s", p.ID, sha, query), owner.Token).
				Want(t, http.StatusOK).JSON(t, &out)
			ids := make([]int64, len(out))
			for i, o := range out {
				ids[i] = o.ID
			}
			return ids
		}
		for query, want := range map[string][]int64{
			"":                                      {test, newBuild, lint, deploy},
			"all=true":                              {oldBuild, test, newBuild, lint, deploy},
			"ref=other":                             {deploy},
			"ref=main":                              {test, newBuild, lint},
			"name=build":                            {newBuild},
			"name=build&all=true":                   {oldBuild, newBuild},
			"stage=external":                        {lint, deploy},
			"stage=test":                            {test},
			"pipeline_id=" + itoa(otherPipeline):    {deploy},
			"pipeline_id=" + itoa(pl.ID):            {test, newBuild, lint},
			"pipeline_id=" + itoa(pl.ID) + "&ref=x": nil,
			"name=nothing":                          nil,
		} {
			if got := list(query); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q: %v; want %v", query, got, want)
			}
		}
		var all []map[string]any
		s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/%s/statuses?name=deploy", p.ID, sha), owner.Token).Want(t, http.StatusOK).JSON(t, &all)
		if len(all) != 1 {
			t.Fatalf("deploy statuses %v", all)
		}
		capiWantFields(t, "listed status", all[0], map[string]any{"id": float64(deploy), "sha": sha, "ref": "other", "status": "running",
			"name": "deploy", "pipeline_id": float64(otherPipeline)})
		var builds []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/jobs?per_page=100", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &builds)
		if got, want := capiJobIDs(builds), capiDesc([]int64{oldBuild, newBuild, test}); !slices.Equal(got, want) {
			t.Errorf("project jobs %v; want the builds %v without the statuses", got, want)
		}
		s.Get(t, fmt.Sprintf("/projects/%d/repository/commits/%s/statuses", p.ID, strings.Repeat("cd", 20)), owner.Token).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Commit Not Found"}`)

		got, _, err := s.Client(t, owner.Token).Commits.GetCommitStatuses(p.ID, sha, &gitlab.GetCommitStatusesOptions{
			Stage: gitlab.Ptr("external"), All: gitlab.Ptr(true)})
		if err != nil || len(got) != 2 || got[0].ID != lint || got[1].ID != deploy || got[1].Ref != "other" {
			t.Errorf("client statuses %+v, %v", got, err)
		}
	})
}

// TestCIStatuses_defaultRef: a status without a ref takes the ref of the
// commit's newest pipeline, else a branch holding the commit, by its
// name: a later status of the same name without a ref finds the first.
func TestCIStatuses_defaultRef(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "unnamed", nil)
		sha := capiBranchSHA(t, p, "main")
		first := capiStatus(t, p, owner.Token, sha, map[string]any{"state": "pending", "name": "ci"}).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "status without ref", first, map[string]any{"ref": "main"})
		again := capiStatus(t, p, owner.Token, sha, map[string]any{"state": "running", "name": "ci"}).Want(t, http.StatusCreated).Object(t)
		capiWantFields(t, "second status without ref", again, map[string]any{"id": first["id"], "ref": "main", "status": "running",
			"pipeline_id": first["pipeline_id"]})
		if got := p.pipelines(t, "source=external"); len(got) != 1 || got[0].Ref != "main" {
			t.Errorf("external pipelines %+v; want one of main", got)
		}
	})
}
