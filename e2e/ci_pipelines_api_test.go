package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// capiPipelineIDs are the ids of a decoded pipeline list, in order.
func capiPipelineIDs(list []pipelineJSON) []int64 {
	out := make([]int64, len(list))
	for i, p := range list {
		out[i] = p.ID
	}
	return out
}

// capiPipelineRefs lists the persistent refs (refs/pipelines/<id>) of a
// project's repository.
func capiPipelineRefs(t *testing.T, s *apitest.Server, projectID int64) []string {
	t.Helper()
	out := git(t, repoDir(t, s, projectID), "for-each-ref", "--format=%(refname)", "refs/pipelines/")
	return strings.Fields(out)
}

// TestCIPipelines_listFilters: GET /projects/:id/pipelines with every
// filter and order of the spec, on five pipelines of known times, and
// GitLab's 400 for values it does not take.
func TestCIPipelines_listFilters(t *testing.T) {
	start := time.Date(2031, 7, 1, 9, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return start.Add(time.Duration(sec) * time.Second) }
	capiClockedEach(t, start, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		p := newCIProject(t, s, owner, "filters", map[string]string{".gitlab-ci.yml": threeStages})
		capiAddMember(t, s, owner.Token, p.ID, dev.ID, 30)
		p.settle(t, 1)
		onMain := p.pipelines(t, "ref=main")[0]

		clk.Set(at(10))
		featureSHA := p.commit(t, "feature", map[string]string{"f.txt": "feature"})
		p.settle(t, 2)
		clk.Set(at(20))
		p.commit(t, "broken", map[string]string{".gitlab-ci.yml": "build: [\n"})
		p.settle(t, 3)
		clk.Set(at(30))
		var byDev pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: dev.Token,
			JSON: map[string]any{"ref": "feature"}}).Want(t, http.StatusCreated).JSON(t, &byDev)
		clk.Set(at(40))
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/tags", p.ID), Token: owner.Token,
			JSON: map[string]any{"tag_name": "v1", "ref": "main"}}).Want(t, http.StatusCreated)
		p.settle(t, 4)
		clk.Set(at(50))
		if _, err := engine(s).Start(ctx(t), p.job(t, onMain.ID, "build").ID); err != nil {
			t.Fatal(err)
		}
		clk.Set(at(60))
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/cancel", p.ID, byDev.ID),
			Token: owner.Token}).Want(t, http.StatusOK)
		clk.Set(at(70))

		// Name the five pipelines.
		all := p.pipelines(t, "per_page=100")
		if len(all) != 5 {
			t.Fatalf("%d pipelines; want 5: %+v", len(all), all)
		}
		id := map[string]int64{}
		label := map[int64]string{}
		for _, pl := range all {
			var name string
			switch {
			case pl.Ref == "main":
				name = "main"
			case pl.Ref == "feature" && pl.Source == "push":
				name = "feature"
			case pl.Ref == "feature":
				name = "api"
			case pl.Ref == "broken":
				name = "broken"
			case pl.Ref == "v1":
				name = "tag"
			}
			id[name], label[pl.ID] = pl.ID, name
		}
		if len(id) != 5 || id["api"] != byDev.ID || id["main"] != onMain.ID {
			t.Fatalf("pipelines %v; want main, feature, broken, api (by dev) and tag", id)
		}
		mainSHA := onMain.SHA
		want := map[string]string{ // status and updated_at
			"main": "running@" + capiTime(at(50)), "feature": "pending@" + capiTime(at(10)), "broken": "failed@" + capiTime(at(20)),
			"api": "canceled@" + capiTime(at(60)), "tag": "pending@" + capiTime(at(40)),
		}
		var raw []map[string]any
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines?per_page=100", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &raw)
		for _, o := range raw {
			name := label[int64(o["id"].(float64))]
			if got := fmt.Sprintf("%v@%v", o["status"], o["updated_at"]); got != want[name] {
				t.Errorf("pipeline %s: %s; want %s", name, got, want[name])
			}
			capiWantTypes(t, "list item", o, map[string]string{"id": "number", "iid": "number", "project_id": "number", "status": "string",
				"source": "string", "ref": "string", "sha": "string", "web_url": "string", "created_at": "string", "updated_at": "string"})
			for _, full := range []string{"before_sha", "user", "duration", "detailed_status"} {
				if _, ok := o[full]; ok {
					t.Errorf("list item has the full form's %s", full)
				}
			}
		}

		names := func(list []pipelineJSON) string {
			var out []string
			for _, pl := range list {
				out = append(out, label[pl.ID])
			}
			return strings.Join(out, " ")
		}
		for query, wantNames := range map[string]string{
			"":                                   "tag api broken feature main",
			"scope=running":                      "main",
			"scope=pending":                      "tag feature",
			"scope=finished":                     "api broken",
			"scope=branches":                     "api broken main",
			"scope=tags":                         "tag",
			"status=failed":                      "broken",
			"status=canceled":                    "api",
			"status=pending":                     "tag feature",
			"status=success":                     "",
			"source=api":                         "api",
			"source=push":                        "tag broken feature main",
			"source=parent_pipeline":             "",
			"ref=feature":                        "api feature",
			"ref=v1":                             "tag",
			"ref=nowhere":                        "",
			"sha=" + featureSHA:                  "api feature",
			"sha=" + mainSHA:                     "tag main",
			"yaml_errors=true":                   "broken",
			"yaml_errors=false":                  "tag api feature main",
			"username=dev":                       "api",
			"username=owner":                     "tag broken feature main",
			"username=nobody":                    "",
			"updated_after=" + capiTime(at(30)):  "tag api main",
			"updated_after=" + capiTime(at(40)):  "api main",
			"updated_before=" + capiTime(at(40)): "broken feature",
			"updated_after=" + url.QueryEscape(at(40).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)): "api main",
			"updated_after=" + capiTime(at(15)) + "&updated_before=" + capiTime(at(55)):                    "tag broken main",
			"sort=asc":                            "main feature broken api tag",
			"order_by=id&sort=desc":               "tag api broken feature main",
			"order_by=updated_at":                 "api main tag broken feature",
			"order_by=updated_at&sort=asc":        "feature broken tag main api",
			"scope=pending&ref=feature":           "feature",
			"source=push&status=pending&sort=asc": "feature tag",
		} {
			if got := names(p.pipelines(t, "per_page=100&"+query)); got != wantNames {
				t.Errorf("%s: %q; want %q", query, got, wantNames)
			}
		}

		// Orders with ties compare the sort keys only (GitLab breaks no
		// ties).
		keys := func(query string, key func(pl pipelineJSON) string) string {
			var out []string
			for _, pl := range p.pipelines(t, "per_page=100&"+query) {
				out = append(out, key(pl))
			}
			return strings.Join(out, " ")
		}
		status := func(pl pipelineJSON) string { return pl.Status }
		ref := func(pl pipelineJSON) string { return pl.Ref }
		for query, want := range map[string]string{
			"order_by=status&sort=asc":  "canceled failed pending pending running",
			"order_by=status":           "running pending pending failed canceled",
			"order_by=ref&sort=asc":     "broken feature feature main v1",
			"order_by=ref&sort=desc":    "v1 main feature feature broken",
			"order_by=user_id&sort=asc": "owner owner owner owner dev",
			"order_by=user_id":          "dev owner owner owner owner",
		} {
			key := status
			switch {
			case strings.Contains(query, "ref"):
				key = ref
			case strings.Contains(query, "user_id"):
				key = func(pl pipelineJSON) string {
					if pl.ID == id["api"] {
						return "dev"
					}
					return "owner"
				}
			}
			if got := keys(query, key); got != want {
				t.Errorf("%s: %s; want %s", query, got, want)
			}
		}

		// Offset pages count.
		r := s.Get(t, fmt.Sprintf("/projects/%d/pipelines?per_page=2&page=3", p.ID), owner.Token).Want(t, http.StatusOK)
		if r.Header.Get("X-Total") != "5" || r.Header.Get("X-Total-Pages") != "3" || r.Header.Get("X-Next-Page") != "" {
			t.Errorf("page 3 of 2: %v", r.Header)
		}

		// scope=branches takes the branches the repository has: a deleted
		// branch's pipelines drop out.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/repository/branches/broken", p.ID),
			Token: owner.Token}).Want(t, http.StatusNoContent)
		if got := names(p.pipelines(t, "scope=branches")); got != "api main" {
			t.Errorf("scope=branches after deleting broken: %q; want \"api main\"", got)
		}

		// Values GitLab does not take.
		for query, body := range map[string]string{
			"scope=everything":            `{"error":"scope does not have a valid value"}`,
			"status=broken":               `{"error":"status does not have a valid value"}`,
			"source=carrier_pigeon":       `{"error":"source does not have a valid value"}`,
			"order_by=name":               `{"error":"order_by does not have a valid value"}`,
			"sort=up":                     `{"error":"sort does not have a valid value"}`,
			"yaml_errors=maybe":           `{"error":"yaml_errors is invalid"}`,
			"updated_after=last+tuesday":  `{"error":"updated_after is invalid"}`,
			"updated_before=soon":         `{"error":"updated_before is invalid"}`,
			"scope=everything&sort=up":    `{"error":"scope does not have a valid value, sort does not have a valid value"}`,
			"status=Running&order_by=iid": `{"error":"status does not have a valid value, order_by does not have a valid value"}`,
		} {
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines?%s", p.ID, query), owner.Token).Want(t, http.StatusBadRequest).WantBody(t, body)
		}
	})
}

// TestCIPipelines_children: a child pipeline is left out of the list
// (whatever the filters) but read by id, with source parent_pipeline.
func TestCIPipelines_children(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "children", map[string]string{".gitlab-ci.yml": capiNoPush + capiParentChild,
			"child.yml": "inner: {script: [x]}\n"})
		pl := p.createPipeline(t, "main")
		run(t, s, p.job(t, pl.ID, "build").ID, succeed)
		run(t, s, p.job(t, pl.ID, "test").ID, succeed)
		var childID int64
		eventually(t, "the child pipeline", func() bool {
			if b := p.bridges(t, pl.ID); len(b) == 1 && b[0].DownstreamPipeline != nil {
				childID = b[0].DownstreamPipeline.ID
			}
			return childID != 0
		})
		for _, query := range []string{"", "source=parent_pipeline", "ref=main", "scope=running", "sha=" + pl.SHA} {
			if got := capiPipelineIDs(p.pipelines(t, query)); slices.Contains(got, childID) {
				t.Errorf("%q lists the child %d: %v", query, childID, got)
			}
		}
		child := p.pipeline(t, childID)
		if child.Source != "parent_pipeline" || child.SHA != pl.SHA || child.Ref != "main" || child.Status != "pending" {
			t.Errorf("child %+v", child)
		}
		if got := capiPipelineIDs(p.pipelines(t, "")); !slices.Equal(got, []int64{pl.ID}) {
			t.Errorf("pipelines %v; want only the parent %d", got, pl.ID)
		}
	})
}

// TestCIPipelines_latest: GET /pipelines/latest is the newest pipeline of
// the ref's head commit (the default branch when no ref is given), 404
// when it has none.
func TestCIPipelines_latest(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "latest", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [x]}\n"})
		latest := func(query string) *apitest.Response {
			return s.Get(t, fmt.Sprintf("/projects/%d/pipelines/latest%s", p.ID, query), owner.Token)
		}
		none := `{"message":"404 Pipeline Not Found"}`
		latest("").Want(t, http.StatusNotFound).WantBody(t, none)

		p.createPipeline(t, "main")
		second := p.createPipeline(t, "main")
		p.commit(t, "feature", map[string]string{"f.txt": "x"})
		latest("?ref=feature").Want(t, http.StatusNotFound).WantBody(t, none)
		onFeature := p.createPipeline(t, "feature")

		got := latest("").Want(t, http.StatusOK).Object(t)
		capiWantFields(t, "latest", got, map[string]any{"id": float64(second.ID), "ref": "main", "before_sha": model.ZeroRef})
		capiWantTypes(t, "latest", got, map[string]string{"detailed_status": "object", "user": "object", "queued_duration": "number|null"})
		capiWantFields(t, "latest of feature", latest("?ref=feature").Want(t, http.StatusOK).Object(t), map[string]any{"id": float64(onFeature.ID)})
		latest("?ref=nowhere").Want(t, http.StatusNotFound).WantBody(t, none)
		gp, _, err := s.Client(t, owner.Token).Pipelines.GetLatestPipeline(p.ID, &gitlab.GetLatestPipelineOptions{Ref: gitlab.Ptr("feature")})
		if err != nil || gp.ID != onFeature.ID {
			t.Errorf("client latest: %+v, %v", gp, err)
		}

		// A new commit on main without a pipeline: main's head has none.
		p.commit(t, "main", map[string]string{"more.txt": "more"})
		latest("").Want(t, http.StatusNotFound).WantBody(t, none)
	})
}

// TestCIPipelines_getFull: GET /pipelines/:id is the full form with the
// spec's fields and types, its times and durations set as it runs.
func TestCIPipelines_getFull(t *testing.T) {
	start := time.Date(2031, 8, 9, 12, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return start.Add(time.Duration(sec) * time.Second) }
	capiClockedEach(t, start, func(t *testing.T, s *apitest.Server, clk *testClock) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "full", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [x]}\n"})
		pl := p.createPipeline(t, "main")
		get := func() map[string]any {
			return s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID), owner.Token).Want(t, http.StatusOK).Object(t)
		}
		o := get()
		capiWantTypes(t, "pipeline", o, map[string]string{
			"id": "number", "iid": "number", "project_id": "number", "status": "string", "source": "string", "ref": "string",
			"sha": "string", "web_url": "string", "created_at": "string", "updated_at": "string", "before_sha": "string", "tag": "boolean",
			"yaml_errors": "null", "user": "object", "started_at": "null", "finished_at": "null", "committed_at": "string|null",
			"duration": "null", "queued_duration": "null", "coverage": "null", "detailed_status": "object",
		})
		capiWantFields(t, "created pipeline", o, map[string]any{"id": float64(pl.ID), "iid": float64(1), "project_id": float64(p.ID),
			"status": "pending", "source": "api", "ref": "main", "sha": pl.SHA, "before_sha": model.ZeroRef, "tag": false,
			"created_at": capiTime(start), "updated_at": capiTime(start),
			"web_url": s.URL + "/" + p.Path + "/-/pipelines/" + itoa(pl.ID)})
		user, _ := o["user"].(map[string]any)
		capiWantTypes(t, "pipeline user", user, map[string]string{"id": "number", "name": "string", "username": "string", "state": "string",
			"avatar_url": "string|null", "web_url": "string"})
		capiWantFields(t, "pipeline user", user, map[string]any{"id": float64(owner.ID), "username": "owner", "name": "Owner",
			"state": "active", "web_url": s.URL + "/owner"})
		ds, _ := o["detailed_status"].(map[string]any)
		capiWantFields(t, "detailed_status", ds, map[string]any{"icon": "status_pending", "text": "Pending", "label": "pending",
			"group": "pending", "has_details": true, "details_path": "/" + p.Path + "/-/pipelines/" + itoa(pl.ID),
			"favicon": "/assets/ci_favicons/favicon_status_pending.png"})

		clk.Set(at(4))
		id := p.job(t, pl.ID, "build").ID
		if _, err := engine(s).Start(ctx(t), id); err != nil {
			t.Fatal(err)
		}
		capiWantFields(t, "running pipeline", get(), map[string]any{"status": "running", "started_at": capiTime(at(4)),
			"queued_duration": float64(4), "finished_at": nil, "duration": nil, "updated_at": capiTime(at(4))})
		clk.Set(at(10))
		if _, err := engine(s).Finish(ctx(t), id, succeed); err != nil {
			t.Fatal(err)
		}
		clk.Set(at(30))
		o = get()
		capiWantFields(t, "finished pipeline", o, map[string]any{"status": "success", "started_at": capiTime(at(4)),
			"finished_at": capiTime(at(10)), "duration": float64(6), "queued_duration": float64(4), "coverage": nil})
		ds, _ = o["detailed_status"].(map[string]any)
		capiWantFields(t, "detailed_status", ds, map[string]any{"icon": "status_success", "text": "Passed", "group": "success"})

		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		other := newCIProject(t, s, owner, "other", nil)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", other.ID, pl.ID), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID), "").Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Project Not Found"}`)
	})
}

// TestCIPipelines_pushFields: a push pipeline records the commit before
// the push, a tag pipeline tag true, and a push of an invalid
// configuration a failed pipeline with yaml_errors and no jobs.
func TestCIPipelines_pushFields(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "pushes", map[string]string{".gitlab-ci.yml": threeStages})
		p.settle(t, 1)
		first := p.pipelines(t, "ref=main")[0]
		p.commit(t, "main", map[string]string{"next.txt": "next"})
		p.settle(t, 2)
		second := p.pipeline(t, p.pipelines(t, "ref=main")[0].ID)
		if second.Source != "push" || second.BeforeSHA != first.SHA || second.Tag || second.YAMLErrors != nil ||
			second.User == nil || second.User.ID != owner.ID {
			t.Errorf("second push pipeline %+v; want before_sha %s", second, first.SHA)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/tags", p.ID), Token: owner.Token,
			JSON: map[string]any{"tag_name": "v2", "ref": "main"}}).Want(t, http.StatusCreated)
		p.settle(t, 3)
		tag := p.pipeline(t, p.pipelines(t, "ref=v2")[0].ID)
		if !tag.Tag || tag.SHA != second.SHA || tag.BeforeSHA != model.ZeroRef {
			t.Errorf("tag pipeline %+v", tag)
		}

		p.commit(t, "broken", map[string]string{".gitlab-ci.yml": "build:\n  stage: nowhere\n  script: [x]\n"})
		p.settle(t, 4)
		broken := p.pipeline(t, p.pipelines(t, "ref=broken")[0].ID)
		if broken.Status != "failed" || broken.YAMLErrors == nil || broken.StartedAt != nil || broken.FinishedAt == nil ||
			broken.Duration != nil {
			t.Errorf("invalid configuration's pipeline %+v", broken)
		}
		if *broken.YAMLErrors != "build job: chosen stage nowhere does not exist; available stages are .pre, build, test, deploy, .post" {
			t.Errorf("yaml_errors %q", *broken.YAMLErrors)
		}
		if jobs := p.jobs(t, broken.ID); len(jobs) != 0 {
			t.Errorf("invalid configuration's pipeline has jobs %+v", jobs)
		}
	})
}

// TestCIPipelines_variables: GET /pipelines/:id/variables answers the
// variables given at creation, in order, with their types; developers
// only.
func TestCIPipelines_variables(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		reporter := s.NewUser(t, "reporter")
		p := newCIProject(t, s, owner, "vars", map[string]string{".gitlab-ci.yml": capiNoPush + "build: {script: [x]}\n"})
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		var pl pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
			JSON: map[string]any{"ref": "main", "variables": []map[string]any{
				{"key": "ZETA", "value": "last letter"},
				{"key": "CONFIG", "value": "a: 1\nb: 2\n", "variable_type": "file"},
				{"key": "EMPTY", "value": ""},
			}}}).Want(t, http.StatusCreated).JSON(t, &pl)
		path := fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, pl.ID)
		s.Get(t, path, owner.Token).Want(t, http.StatusOK).WantBody(t, `[
			{"key":"ZETA","variable_type":"env_var","value":"last letter"},
			{"key":"CONFIG","variable_type":"file","value":"a: 1\nb: 2\n"},
			{"key":"EMPTY","variable_type":"env_var","value":""}]`)
		s.Get(t, path, reporter.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)

		plain := p.createPipeline(t, "main")
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, plain.ID), owner.Token).Want(t, http.StatusOK).WantBody(t, `[]`)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, s.AbsentID(t)), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)

		// The form's variables[][key] entries.
		var formed pipelineJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
			Form: map[string][]string{"ref": {"main"}, "variables[][key]": {"A", "B"}, "variables[][value]": {"1", "2"},
				"variables[][variable_type]": {"env_var", "file"}}}).Want(t, http.StatusCreated).JSON(t, &formed)
		s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d/variables", p.ID, formed.ID), owner.Token).Want(t, http.StatusOK).
			WantBody(t, `[{"key":"A","variable_type":"env_var","value":"1"},{"key":"B","variable_type":"file","value":"2"}]`)
	})
}

// TestCIPipelines_retryCancel: retry answers 201 and retries the failed
// and canceled jobs; cancel answers 200 with the pipeline canceled and
// its jobs canceled; reporters may do neither.
func TestCIPipelines_retryCancel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		reporter := s.NewUser(t, "reporter")
		p := newCIProject(t, s, owner, "again", map[string]string{".gitlab-ci.yml": capiNoPush + "a: {script: [x]}\nb: {script: [x]}\n"})
		capiAddMember(t, s, owner.Token, p.ID, reporter.ID, 20)
		pl := p.createPipeline(t, "main")
		post := func(token, action string, id int64) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipelines/%d/%s", p.ID, id, action), Token: token})
		}
		failedA := p.job(t, pl.ID, "a").ID
		run(t, s, failedA, fail)
		run(t, s, p.job(t, pl.ID, "b").ID, succeed)
		if got := p.statuses(t, pl.ID); got != "a=failed b=success | failed" {
			t.Fatalf("before retry: %s", got)
		}
		post(reporter.Token, "retry", pl.ID).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		var got pipelineJSON
		post(owner.Token, "retry", pl.ID).Want(t, http.StatusCreated).JSON(t, &got)
		if got.ID != pl.ID || got.Status != "running" || got.FinishedAt != nil {
			t.Errorf("retried pipeline %+v; want running", got)
		}
		if st := p.statuses(t, pl.ID); st != "a=pending b=success | running" {
			t.Errorf("after retry: %s", st)
		}
		if a := p.job(t, pl.ID, "a").ID; a == failedA {
			t.Errorf("retry reused job %d", a)
		}

		post(reporter.Token, "cancel", pl.ID).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		post(owner.Token, "cancel", pl.ID).Want(t, http.StatusOK).JSON(t, &got)
		if got.Status != "canceled" {
			t.Errorf("canceled pipeline %+v", got)
		}
		if st := p.statuses(t, pl.ID); st != "a=canceled b=success | canceled" {
			t.Errorf("after cancel: %s", st)
		}
		// A canceled job is retried too; canceling a finished pipeline
		// changes nothing.
		post(owner.Token, "retry", pl.ID).Want(t, http.StatusCreated).JSON(t, &got)
		if st := p.statuses(t, pl.ID); st != "a=pending b=success | running" {
			t.Errorf("after the second retry: %s", st)
		}
		run(t, s, p.job(t, pl.ID, "a").ID, succeed)
		post(owner.Token, "cancel", pl.ID).Want(t, http.StatusOK).JSON(t, &got)
		if got.Status != "success" {
			t.Errorf("cancel of a finished pipeline: %+v", got)
		}
		for _, action := range []string{"retry", "cancel"} {
			post(owner.Token, action, s.AbsentID(t)).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Pipeline Not Found"}`)
			post("", action, pl.ID).Want(t, http.StatusUnauthorized).WantBody(t, `{"message":"401 Unauthorized"}`)
		}
	})
}

// TestCIPipelines_delete: only owners delete a pipeline (204); its jobs,
// logs, child pipelines and persistent refs go with it.
func TestCIPipelines_delete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		maintainer := s.NewUser(t, "maintainer")
		p := newCIProject(t, s, owner, "delete", map[string]string{".gitlab-ci.yml": capiNoPush + capiParentChild,
			"child.yml": "inner: {script: [x]}\n"})
		capiAddMember(t, s, owner.Token, p.ID, maintainer.ID, 40)
		pl := p.createPipeline(t, "main")
		keep := p.createPipeline(t, "main")
		build := p.job(t, pl.ID, "build").ID
		capiAppendLog(t, s, build, 0, "log\n")
		run(t, s, build, succeed)
		run(t, s, p.job(t, pl.ID, "test").ID, succeed)
		var childID int64
		eventually(t, "the child pipeline", func() bool {
			if b := p.bridges(t, pl.ID); len(b) == 1 && b[0].DownstreamPipeline != nil {
				childID = b[0].DownstreamPipeline.ID
			}
			return childID != 0
		})
		inner := p.job(t, childID, "inner").ID
		refs := capiPipelineRefs(t, s, p.ID)
		for _, id := range []int64{pl.ID, keep.ID} {
			if !slices.Contains(refs, "refs/pipelines/"+itoa(id)) {
				t.Fatalf("refs %v; want refs/pipelines/%d", refs, id)
			}
		}

		path := fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, pl.ID)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: maintainer.Token}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":"403 Forbidden"}`)
		r := s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: owner.Token}).Want(t, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("204 with body %q", r.Body)
		}
		for _, id := range []int64{pl.ID, childID} {
			s.Get(t, fmt.Sprintf("/projects/%d/pipelines/%d", p.ID, id), owner.Token).Want(t, http.StatusNotFound).
				WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		}
		for _, id := range []int64{build, inner} {
			s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, id), owner.Token).Want(t, http.StatusNotFound).
				WantBody(t, `{"message":"404 Not found"}`)
			s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token).Want(t, http.StatusNotFound)
		}
		if got := capiPipelineIDs(p.pipelines(t, "")); !slices.Equal(got, []int64{keep.ID}) {
			t.Errorf("pipelines after delete %v; want %d", got, keep.ID)
		}
		var jobs []jobJSON
		s.Get(t, fmt.Sprintf("/projects/%d/jobs?per_page=100", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &jobs)
		for _, j := range jobs {
			if j.Pipeline.ID != keep.ID {
				t.Errorf("job %d of pipeline %d left behind", j.ID, j.Pipeline.ID)
			}
		}
		refs = capiPipelineRefs(t, s, p.ID)
		if !slices.Equal(refs, []string{"refs/pipelines/" + itoa(keep.ID)}) {
			t.Errorf("refs after delete %v; want only refs/pipelines/%d", refs, keep.ID)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: owner.Token}).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Pipeline Not Found"}`)
		if _, err := s.Client(t, owner.Token).Pipelines.DeletePipeline(p.ID, keep.ID); err != nil {
			t.Errorf("client delete: %v", err)
		}
		if refs := capiPipelineRefs(t, s, p.ID); len(refs) != 0 {
			t.Errorf("refs after the last delete %v", refs)
		}
	})
}

// TestCIPipelines_client: the official Go client drives the pipelines
// and jobs endpoints end to end.
func TestCIPipelines_client(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "client", map[string]string{".gitlab-ci.yml": capiNoPush + `
stages: [build, test, trigger]
build: {stage: build, script: [x]}
test: {stage: test, script: [x]}
manual: {stage: test, script: [x], when: manual}
child:
  stage: trigger
  trigger:
    include: child.yml
`, "child.yml": "inner: {script: [x]}\n"})
		c := s.Client(t, owner.Token)
		pl, _, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("main"),
			Variables: &[]*gitlab.PipelineVariableOptions{
				{Key: gitlab.Ptr("GREETING"), Value: gitlab.Ptr("hello")},
				{Key: gitlab.Ptr("CERT"), Value: gitlab.Ptr("pem"), VariableType: gitlab.Ptr(gitlab.FileVariableType)}}})
		if err != nil || pl.Status != "pending" || pl.Source != "api" || pl.BeforeSHA != model.ZeroRef || pl.User == nil {
			t.Fatalf("create: %+v, %v", pl, err)
		}
		vars, _, err := c.Pipelines.GetPipelineVariables(p.ID, pl.ID)
		if err != nil || len(vars) != 2 || vars[0].Key != "GREETING" || vars[1].VariableType != gitlab.FileVariableType || vars[1].Value != "pem" {
			t.Errorf("variables %+v, %v", vars, err)
		}
		list, resp, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Status: gitlab.Ptr(gitlab.Pending),
			Ref: gitlab.Ptr("main"), OrderBy: gitlab.Ptr("id"), Sort: gitlab.Ptr("asc")})
		if err != nil || len(list) != 1 || list[0].ID != pl.ID || resp.TotalItems != 1 {
			t.Errorf("list %+v, %v", list, err)
		}
		got, _, err := c.Pipelines.GetPipeline(p.ID, pl.ID)
		if err != nil || got.ID != pl.ID || got.DetailedStatus == nil || got.DetailedStatus.Group != "pending" || got.WebURL != pl.WebURL {
			t.Errorf("get %+v, %v", got, err)
		}

		jobs, _, err := c.Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{})
		if err != nil || len(jobs) != 3 {
			t.Fatalf("jobs %d, %v", len(jobs), err)
		}
		byName := map[string]*gitlab.Job{}
		for _, j := range jobs {
			byName[j.Name] = j
		}
		build := byName["build"]
		job, _, err := c.Jobs.GetJob(p.ID, build.ID)
		if err != nil || job.Status != "pending" || job.Pipeline.ID != pl.ID || job.Commit == nil || job.Commit.ID != pl.SHA ||
			job.User == nil || job.User.Username != "owner" || len(job.Artifacts) != 0 || job.WebURL != s.URL+"/"+p.Path+"/-/jobs/"+itoa(build.ID) {
			t.Errorf("get job %+v, %v", job, err)
		}
		capiAppendLog(t, s, build.ID, 0, "building\n")
		run(t, s, build.ID, fail)
		rd, _, err := c.Jobs.GetTraceFile(p.ID, build.ID)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(rd); string(b) != "building\n" {
			t.Errorf("trace %q", b)
		}
		retried, _, err := c.Jobs.RetryJob(p.ID, build.ID)
		if err != nil || retried.Status != "pending" || retried.ID == build.ID {
			t.Fatalf("retry job %+v, %v", retried, err)
		}
		erased, _, err := c.Jobs.EraseJob(p.ID, build.ID)
		if err != nil || erased.ErasedAt == nil {
			t.Errorf("erase job %+v, %v", erased, err)
		}
		canceled, _, err := c.Jobs.CancelJob(p.ID, retried.ID)
		if err != nil || canceled.Status != "canceled" {
			t.Errorf("cancel job %+v, %v", canceled, err)
		}
		again, _, err := c.Pipelines.RetryPipelineBuild(p.ID, pl.ID)
		if err != nil || again.Status != "pending" {
			t.Errorf("retry pipeline %+v, %v", again, err)
		}
		run(t, s, p.job(t, pl.ID, "build").ID, succeed)
		played, _, err := c.Jobs.PlayJob(p.ID, byName["manual"].ID, &gitlab.PlayJobOptions{})
		if err != nil || played.Status != "pending" {
			t.Errorf("play %+v, %v", played, err)
		}
		run(t, s, p.job(t, pl.ID, "test").ID, succeed)
		run(t, s, p.job(t, pl.ID, "manual").ID, succeed)
		var bridges []*gitlab.Bridge
		eventually(t, "the bridge's child pipeline", func() bool {
			bridges, _, err = c.Jobs.ListPipelineBridges(p.ID, pl.ID, &gitlab.ListJobsOptions{})
			return err == nil && len(bridges) == 1 && bridges[0].DownstreamPipeline != nil
		})
		if b := bridges[0]; b.Name != "child" || b.Pipeline.ID != pl.ID || b.DownstreamPipeline.SHA != pl.SHA {
			t.Errorf("bridge %+v", b)
		}
		// Canceling the finished parent cancels its child's jobs.
		stopped, _, err := c.Pipelines.CancelPipelineBuild(p.ID, pl.ID)
		if err != nil || stopped.ID != pl.ID || stopped.Status != "success" {
			t.Errorf("cancel pipeline %+v, %v", stopped, err)
		}
		if inner := p.job(t, bridges[0].DownstreamPipeline.ID, "inner"); inner.Status != "canceled" {
			t.Errorf("child job after cancel %+v", inner)
		}
		if _, err := c.Pipelines.DeletePipeline(p.ID, pl.ID); err != nil {
			t.Errorf("delete pipeline: %v", err)
		}
		if _, resp, err := c.Pipelines.GetPipeline(p.ID, pl.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted pipeline read: %v", err)
		}
	})
}
