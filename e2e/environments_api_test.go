package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// TestEnvironments_client round-trips the official client's Environments
// and Deployments services: create, read, list, edit, stop (force),
// delete; external deployments reported, updated and deleted.
func TestEnvironments_client(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "envclient")
		p := newCIProject(t, s, owner, "envclient", nil)
		c := s.Client(t, owner.Token)
		env, resp, err := c.Environments.CreateEnvironment(p.ID, &gitlab.CreateEnvironmentOptions{Name: gitlab.Ptr("review/fix-foo"),
			ExternalURL: gitlab.Ptr("https://fix-foo.example.com"), Description: gitlab.Ptr("a review app")})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %v", err)
		}
		if env.Name != "review/fix-foo" || !strings.HasPrefix(env.Slug, "review-fix-foo-") || len(env.Slug) != 21 ||
			env.State != "available" || env.Tier != "development" || env.ExternalURL != "https://fix-foo.example.com" ||
			env.Description != "a review app" || env.CreatedAt == nil || env.AutoStopAt != nil {
			t.Errorf("created %+v", env)
		}
		got, _, err := c.Environments.GetEnvironment(p.ID, env.ID)
		if err != nil || got.Slug != env.Slug || got.LastDeployment != nil {
			t.Errorf("get %+v, %v", got, err)
		}
		edited, _, err := c.Environments.EditEnvironment(p.ID, env.ID, &gitlab.EditEnvironmentOptions{Tier: gitlab.Ptr("testing"),
			ExternalURL: gitlab.Ptr("https://other.example.com")})
		if err != nil || edited.Tier != "testing" || edited.ExternalURL != "https://other.example.com" || edited.Name != env.Name {
			t.Errorf("edit %+v, %v", edited, err)
		}
		list, _, err := c.Environments.ListEnvironments(p.ID, &gitlab.ListEnvironmentsOptions{Search: gitlab.Ptr("fix")})
		if err != nil || len(list) != 1 || list[0].ID != env.ID {
			t.Errorf("list %+v, %v", list, err)
		}

		// External deployments to production.
		sha := p.commit(t, "main", map[string]string{"a.txt": "a"})
		dep, resp, err := c.Deployments.CreateProjectDeployment(p.ID, &gitlab.CreateProjectDeploymentOptions{Environment: gitlab.Ptr("production"),
			Ref: gitlab.Ptr("main"), SHA: gitlab.Ptr(sha), Tag: gitlab.Ptr(false), Status: gitlab.Ptr(gitlab.DeploymentStatusRunning)})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("create deployment: %v", err)
		}
		if dep.IID != 1 || dep.Status != "running" || dep.SHA != sha || dep.Ref != "main" || dep.Environment == nil ||
			dep.Environment.Name != "production" || dep.User == nil || dep.User.Username != "envclient" || dep.Deployable.ID != 0 {
			t.Errorf("deployment %+v", dep)
		}
		dep, _, err = c.Deployments.UpdateProjectDeployment(p.ID, dep.ID, &gitlab.UpdateProjectDeploymentOptions{
			Status: gitlab.Ptr(gitlab.DeploymentStatusSuccess)})
		if err != nil || dep.Status != "success" {
			t.Errorf("update %+v, %v", dep, err)
		}
		// A finished deployment does not move again.
		if _, resp, err := c.Deployments.UpdateProjectDeployment(p.ID, dep.ID, &gitlab.UpdateProjectDeploymentOptions{
			Status: gitlab.Ptr(gitlab.DeploymentStatusRunning)}); err == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("success → running: %v", err)
		}
		second, _, err := c.Deployments.CreateProjectDeployment(p.ID, &gitlab.CreateProjectDeploymentOptions{Environment: gitlab.Ptr("production"),
			Ref: gitlab.Ptr("main"), SHA: gitlab.Ptr(sha), Tag: gitlab.Ptr(false), Status: gitlab.Ptr(gitlab.DeploymentStatusFailed)})
		if err != nil || second.IID != 2 || second.Status != "failed" {
			t.Fatalf("second deployment %+v, %v", second, err)
		}
		deps, _, err := c.Deployments.ListProjectDeployments(p.ID, &gitlab.ListProjectDeploymentsOptions{OrderBy: gitlab.Ptr("iid"),
			Sort: gitlab.Ptr("desc"), Environment: gitlab.Ptr("production")})
		if err != nil || len(deps) != 2 || deps[0].ID != second.ID || deps[1].ID != dep.ID {
			t.Errorf("list deployments %+v, %v", deps, err)
		}
		one, _, err := c.Deployments.GetProjectDeployment(p.ID, dep.ID)
		if err != nil || one.ID != dep.ID || one.Status != "success" {
			t.Errorf("get deployment %+v, %v", one, err)
		}
		prod, _, err := c.Environments.ListEnvironments(p.ID, &gitlab.ListEnvironmentsOptions{Name: gitlab.Ptr("production")})
		if err != nil || len(prod) != 1 || prod[0].Tier != "production" || prod[0].State != "available" {
			t.Fatalf("production %+v, %v", prod, err)
		}
		// The last deployment is the last successful one (GitLab's).
		pe, _, err := c.Environments.GetEnvironment(p.ID, prod[0].ID)
		if err != nil || pe.LastDeployment == nil || pe.LastDeployment.ID != dep.ID {
			t.Errorf("production's last deployment %+v, %v", pe, err)
		}
		// It stays; the failed one after it goes.
		if resp, err := c.Deployments.DeleteProjectDeployment(p.ID, dep.ID); err == nil || resp.StatusCode != http.StatusBadRequest ||
			!strings.Contains(err.Error(), "Deployment currently deployed to environment") {
			t.Errorf("delete the last deployment: %v", err)
		}
		if _, err := c.Deployments.DeleteProjectDeployment(p.ID, second.ID); err != nil {
			t.Errorf("delete: %v", err)
		}
		if _, resp, err := c.Deployments.GetProjectDeployment(p.ID, second.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted deployment: %v", err)
		}

		// Stop (no stop job: at once), then delete.
		stopped, _, err := c.Environments.StopEnvironment(p.ID, env.ID, &gitlab.StopEnvironmentOptions{Force: gitlab.Ptr(true)})
		if err != nil || stopped.State != "stopped" {
			t.Errorf("stop %+v, %v", stopped, err)
		}
		if _, err := c.Environments.DeleteEnvironment(p.ID, env.ID); err != nil {
			t.Errorf("delete environment: %v", err)
		}
		if _, resp, err := c.Environments.GetEnvironment(p.ID, env.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted environment: %v", err)
		}
	})
}

// TestEnvironments_badInput: GitLab's 400s, 404s and 403s.
func TestEnvironments_badInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "envbad")
		reporter := s.NewUser(t, "envreporter")
		developer := s.NewUser(t, "envdev")
		stranger := s.NewUser(t, "envstranger")
		p := newCIProject(t, s, owner, "envbad", nil)
		for _, m := range []struct {
			u     apitest.User
			level int
		}{{reporter, 20}, {developer, 30}} {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
				JSON: map[string]any{"user_id": m.u.ID, "access_level": m.level}}).Want(t, http.StatusCreated)
		}
		base := fmt.Sprintf("/projects/%d/environments", p.ID)
		deps := fmt.Sprintf("/projects/%d/deployments", p.ID)
		do := func(method, path, token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: path, Token: token, JSON: body})
		}
		env := do("POST", base, owner.Token, map[string]any{"name": "staging"}).Want(t, http.StatusCreated).Object(t)
		mainSHA := p.commit(t, "main", map[string]string{"m.txt": "m"})
		envPath := fmt.Sprintf("%s/%v", base, env["id"])
		cases := []struct {
			name, method, path, token string
			body                      map[string]any
			status                    int
			body2                     string
		}{
			{"no name", "POST", base, owner.Token, map[string]any{"external_url": "https://x.test"}, 400, `{"error":"name is missing"}`},
			{"bad tier", "POST", base, owner.Token, map[string]any{"name": "x", "tier": "prod"}, 400, `{"error":"tier does not have a valid value"}`},
			{"slug given", "POST", base, owner.Token, map[string]any{"name": "x", "slug": "x"}, 400, `{"error":"slug is automatically generated and cannot be changed"}`},
			{"taken", "POST", base, owner.Token, map[string]any{"name": "staging"}, 400, `{"message":{"name":["has already been taken"]}}`},
			{"bad name", "POST", base, owner.Token, map[string]any{"name": "bad!name"}, 400, ""},
			{"bad url", "POST", base, owner.Token, map[string]any{"name": "y", "external_url": "ftp://x"}, 400, ""},
			{"short search", "GET", base + "?search=ab", owner.Token, nil, 400, `{"message":"400 Bad request - Search query is less than 3 characters"}`},
			{"name and search", "GET", base + "?search=abc&name=x", owner.Token, nil, 400, `{"error":"name, search cannot be used together"}`},
			{"bad state", "GET", base + "?states=gone", owner.Token, nil, 400, `{"error":"states does not have a valid value"}`},
			{"unknown", "GET", base + "/999999", owner.Token, nil, 404, `{"message":"404 Not found"}`},
			{"not an id", "GET", base + "/abc", owner.Token, nil, 404, ""},
			{"stranger", "GET", base, stranger.Token, nil, 404, `{"message":"404 Project Not Found"}`},
			{"reporter reads", "GET", envPath, reporter.Token, nil, 200, ""},
			{"reporter creates", "POST", base, reporter.Token, map[string]any{"name": "r"}, 403, ""},
			// GitLab's StopService refuses quietly: 200, still available.
			{"reporter stops", "POST", envPath + "/stop", reporter.Token, nil, 200, ""},
			{"developer edits", "PUT", envPath, developer.Token, map[string]any{"external_url": "https://s.test"}, 200, ""},
			{"available env delete", "DELETE", envPath, owner.Token, nil, 403, ""},
			{"stop_stale no before", "POST", base + "/stop_stale", owner.Token, nil, 400, `{"error":"before is missing"}`},
			{"stop_stale too recent", "POST", base + "/stop_stale", owner.Token, map[string]any{"before": time.Now().Format(time.RFC3339)}, 400,
				`{"message":"400 Bad request - Invalid Date"}`},
			{"stop_stale bad date", "POST", base + "/stop_stale", owner.Token, map[string]any{"before": "yesterday"}, 400, `{"error":"before is invalid"}`},
			{"review_apps limit", "DELETE", base + "/review_apps?limit=5000", owner.Token, nil, 400, `{"error":"limit does not have a valid value"}`},
			{"review_apps reporter", "DELETE", base + "/review_apps", reporter.Token, nil, 401,
				`{"message":{"message":"You do not have permission to destroy environments in this project","scheduled_entries":[],"unprocessable_entries":[]}}`},
			{"review_apps none", "DELETE", base + "/review_apps", owner.Token, nil, 400, ""},
			{"deployment missing fields", "POST", deps, owner.Token, map[string]any{"environment": "production"}, 400,
				`{"error":"sha is missing, ref is missing, tag is missing, status is missing"}`},
			{"deployment bad status", "POST", deps, owner.Token, map[string]any{"environment": "production", "sha": strings.Repeat("a", 40),
				"ref": "main", "tag": false, "status": "created"}, 400, `{"error":"status does not have a valid value"}`},
			{"deployment bad sha", "POST", deps, owner.Token, map[string]any{"environment": "production", "sha": "xyz",
				"ref": "main", "tag": false, "status": "success"}, 400, `{"message":{"sha":["is invalid"]}}`},
			{"deployment unknown sha", "POST", deps, owner.Token, map[string]any{"environment": "production", "sha": strings.Repeat("a", 40),
				"ref": "main", "tag": false, "status": "success"}, 400, `{"message":{"sha":["The commit does not exist"]}}`},
			{"deployment unknown ref", "POST", deps, owner.Token, map[string]any{"environment": "production", "sha": mainSHA,
				"ref": "nope", "tag": false, "status": "success"}, 400, `{"message":{"ref":["The branch or tag does not exist"]}}`},
			{"deployment ref as tag", "POST", deps, owner.Token, map[string]any{"environment": "production", "sha": mainSHA,
				"ref": "main", "tag": true, "status": "success"}, 400, `{"message":{"ref":["The branch or tag does not exist"]}}`},
			{"deployment reporter", "POST", deps, reporter.Token, map[string]any{"environment": "production", "sha": strings.Repeat("a", 40),
				"ref": "main", "tag": false, "status": "success"}, 403, ""},
			{"deployments bad order", "GET", deps + "?order_by=sha", owner.Token, nil, 400, `{"error":"order_by does not have a valid value"}`},
			{"deployments finished without sort", "GET", deps + "?finished_after=2020-01-01T00:00:00Z", owner.Token, nil, 400, ""},
			{"deployments bad status", "GET", deps + "?status=done", owner.Token, nil, 400, `{"error":"status does not have a valid value"}`},
			{"deployment unknown", "GET", deps + "/999999", owner.Token, nil, 404, `{"message":"404 Not found"}`},
			{"deployments reporter", "GET", deps, reporter.Token, nil, 200, ""},
			{"deployments stranger", "GET", deps, stranger.Token, nil, 404, ""},
		}
		for _, c := range cases {
			res := do(c.method, c.path, c.token, c.body)
			if res.Status != c.status {
				t.Errorf("%s: %s %s = %d; want %d: %s", c.name, c.method, c.path, res.Status, c.status, res.Body)
				continue
			}
			if c.body2 != "" && strings.TrimSpace(string(res.Body)) != c.body2 {
				t.Errorf("%s: body %s; want %s", c.name, res.Body, c.body2)
			}
		}

		if st := do("GET", envPath, owner.Token, nil).Want(t, http.StatusOK).Object(t)["state"]; st != "available" {
			t.Errorf("after a reporter's stop: %v", st)
		}

		// A developer may not delete a deployment (maintainers may).
		sha := p.commit(t, "main", map[string]string{"b.txt": "b"})
		mk := func() int64 {
			d := do("POST", deps, developer.Token, map[string]any{"environment": "production", "sha": sha, "ref": "main", "tag": false,
				"status": "success"}).Want(t, http.StatusCreated).Object(t)
			return int64(d["id"].(float64))
		}
		first, last := mk(), mk()
		do("DELETE", fmt.Sprintf("%s/%d", deps, last), owner.Token, nil).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"Deployment currently deployed to environment"}`)
		do("DELETE", fmt.Sprintf("%s/%d", deps, first), developer.Token, nil).Want(t, http.StatusForbidden)
		do("DELETE", fmt.Sprintf("%s/%d", deps, first), owner.Token, nil).Want(t, http.StatusNoContent)
		// A running deployment stays.
		running := do("POST", deps, owner.Token, map[string]any{"environment": "production", "sha": sha, "ref": "main", "tag": false,
			"status": "running"}).Want(t, http.StatusCreated).Object(t)
		do("DELETE", fmt.Sprintf("%s/%v", deps, running["id"]), owner.Token, nil).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":"Cannot destroy running deployment"}`)

		// review_apps: a dry run lists the stopped review apps; the real
		// run deletes them.
		ra := do("POST", base, owner.Token, map[string]any{"name": "review/old"}).Want(t, http.StatusCreated).Object(t)
		do("POST", fmt.Sprintf("%s/%v/stop", base, ra["id"]), owner.Token, nil).Want(t, http.StatusOK)
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		dry := do("DELETE", base+"/review_apps?before="+future, owner.Token, nil).Want(t, http.StatusOK).Object(t)
		if l, _ := dry["scheduled_entries"].([]any); len(l) != 1 {
			t.Errorf("dry run %v", dry)
		}
		real := do("DELETE", base+"/review_apps?dry_run=false&before="+future, owner.Token, nil).Want(t, http.StatusOK).Object(t)
		if l, _ := real["scheduled_entries"].([]any); len(l) != 1 || fmt.Sprint(l[0].(map[string]any)["name"]) != "review/old" {
			t.Errorf("review_apps %v", real)
		}
		do("GET", fmt.Sprintf("%s/%v", base, ra["id"]), owner.Token, nil).Want(t, http.StatusNotFound)
	})
}

// TestEnvironments_jobToken: a job's token reads environments and
// deployments and reports deployments of its own project, not of
// another, and deletes nothing.
func TestEnvironments_jobToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "envjob")
		p := newCIProject(t, s, owner, "envjob", map[string]string{".gitlab-ci.yml": "build:\n  script: [echo hi]\n"})
		p.settle(t, 1)
		other := newCIProject(t, s, owner, "envother", nil)
		job := projectRunner(t, p, nil).take(t)
		jt := map[string]string{"JOB-TOKEN": job.Token}
		deps := fmt.Sprintf("/projects/%d/deployments", p.ID)
		d := s.Do(t, apitest.Request{Method: "POST", Path: deps, Header: jt, JSON: map[string]any{"environment": "ci-env",
			"sha": job.GitInfo.SHA, "ref": "main", "tag": false, "status": "running"}}).Want(t, http.StatusCreated).Object(t)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("%s/%v", deps, d["id"]), Header: jt,
			JSON: map[string]any{"status": "success"}}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: deps, Header: jt}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: fmt.Sprintf("/projects/%d/environments", p.ID), Header: jt}).Want(t, http.StatusOK)
		if res := s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("%s/%v", deps, d["id"]), Header: jt}); res.Status < 400 {
			t.Errorf("a job token deleted a deployment: %d", res.Status)
		}
		if res := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/deployments", other.ID), Header: jt,
			JSON: map[string]any{"environment": "x", "sha": job.GitInfo.SHA, "ref": "main", "tag": false, "status": "success"}}); res.Status < 400 {
			t.Errorf("a job token deployed to another project: %d", res.Status)
		}
	})
}

// TestEnvironments_deploymentMergeRequests: a successful deployment of a
// branch links the merge requests merged into it that no earlier
// deployment to the environment shipped.
func TestEnvironments_deploymentMergeRequests(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "envmr")
		p := newCIProject(t, s, owner, "envmr", nil)
		c := s.Client(t, owner.Token)
		p.commit(t, "feature", map[string]string{"f.txt": "f"})
		mr, _, err := c.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("feature"),
			SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("main")})
		if err != nil {
			t.Fatal(err)
		}
		var merged *gitlab.MergeRequest
		eventuallyFor(t, 30*time.Second, "the merge", func() bool {
			merged, _, err = c.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, nil)
			var er *gitlab.ErrorResponse
			if errors.As(err, &er) && er.Response.StatusCode == http.StatusMethodNotAllowed {
				return false // not mergeable yet
			}
			if err != nil {
				t.Fatal(err)
			}
			return true
		})
		if merged.State != "merged" {
			t.Fatalf("merge request %s", merged.State)
		}
		head, _, err := c.Branches.GetBranch(p.ID, "main")
		if err != nil {
			t.Fatal(err)
		}
		mk := func(env string) int64 {
			d, _, err := c.Deployments.CreateProjectDeployment(p.ID, &gitlab.CreateProjectDeploymentOptions{Environment: gitlab.Ptr(env),
				Ref: gitlab.Ptr("main"), SHA: gitlab.Ptr(head.Commit.ID), Tag: gitlab.Ptr(false), Status: gitlab.Ptr(gitlab.DeploymentStatusSuccess)})
			if err != nil {
				t.Fatal(err)
			}
			return d.ID
		}
		first, again := mk("production"), mk("production")
		list, _, err := c.DeploymentMergeRequests.ListDeploymentMergeRequests(p.ID, first, nil)
		if err != nil || len(list) != 1 || list[0].IID != mr.IID {
			t.Errorf("first deployment's merge requests %+v, %v", list, err)
		}
		if list, _, err := c.DeploymentMergeRequests.ListDeploymentMergeRequests(p.ID, again, nil); err != nil || len(list) != 0 {
			t.Errorf("a later deployment shipped it again: %+v, %v", list, err)
		}
	})
}
