package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/ci"
	cfgpkg "quarry/internal/config"
	"quarry/internal/storetest"
)

// putSettings changes the instance's settings as root.
func putSettings(t *testing.T, s *apitest.Server, body map[string]any) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: body}).Want(t, http.StatusOK)
}

func TestSettingsEffect_defaultVisibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		putSettings(t, s, map[string]any{"default_project_visibility": "internal", "default_group_visibility": "public"})
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "plain"}}).
			Want(t, http.StatusCreated).Object(t)
		if p["visibility"] != "internal" {
			t.Errorf("project visibility %v; want internal", p["visibility"])
		}
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "team", "path": "team"}}).
			Want(t, http.StatusCreated).Object(t)
		if g["visibility"] != "public" {
			t.Errorf("group visibility %v; want public", g["visibility"])
		}
		// An explicit level still wins.
		p = s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "own", "visibility": "private"}}).
			Want(t, http.StatusCreated).Object(t)
		if p["visibility"] != "private" {
			t.Errorf("explicit visibility %v; want private", p["visibility"])
		}
	})
}

func TestSettingsEffect_restrictedVisibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		putSettings(t, s, map[string]any{"restricted_visibility_levels": []string{"public"}})
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "open", "visibility": "public"}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"visibility_level":["public has been restricted by your GitLab administrator"]}}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "g", "path": "g", "visibility": "public"}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"Failed to save group {:visibility_level=>[\"public has been restricted by your GitLab administrator\"]}"}`)
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "closed"}}).
			Want(t, http.StatusCreated).Object(t)
		id := itoa(int64(p["id"].(float64)))
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + id, Token: alice.Token, JSON: map[string]any{"visibility": "public"}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"visibility_level":["public has been restricted by your GitLab administrator"]}}`)
		if v := s.Get(t, "/projects/"+id, alice.Token).Object(t)["visibility"]; v != "private" {
			t.Errorf("visibility after a refused update: %v", v)
		}
		// Administrators may.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + id, Token: s.RootToken, JSON: map[string]any{"visibility": "public"}}).
			Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "admin-open", "visibility": "public"}}).
			Want(t, http.StatusCreated)
		// Lifting the restriction lets everyone choose it again.
		putSettings(t, s, map[string]any{"restricted_visibility_levels": []string{}})
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "open", "visibility": "public"}}).
			Want(t, http.StatusCreated)
	})
}

func TestSettingsEffect_projectsLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		putSettings(t, s, map[string]any{"default_projects_limit": 2, "can_create_group": false})
		bob := s.NewUser(t, "bob")
		u := s.Get(t, "/users/"+itoa(bob.ID), s.RootToken).Object(t)
		if u["projects_limit"] != 2.0 || u["can_create_group"] != false {
			t.Errorf("new user: projects_limit %v, can_create_group %v", u["projects_limit"], u["can_create_group"])
		}
		for _, name := range []string{"one", "two"} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: bob.Token, JSON: map[string]any{"name": name}}).Want(t, http.StatusCreated)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: bob.Token, JSON: map[string]any{"name": "three"}}).
			Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"limit_reached":["Your project limit is 2 projects! Please contact your administrator to increase it"]}}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: bob.Token, JSON: map[string]any{"name": "bg", "path": "bg"}}).
			Want(t, http.StatusForbidden)
		// Existing users keep their limit; a limit of 0 forbids personal
		// projects.
		if v := s.Get(t, "/users/"+itoa(s.RootID(t)), s.RootToken).Object(t)["projects_limit"]; v != 100000.0 {
			t.Errorf("root's limit changed to %v", v)
		}
		putSettings(t, s, map[string]any{"default_projects_limit": 0})
		carol := s.NewUser(t, "carol")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: carol.Token, JSON: map[string]any{"name": "none"}}).
			Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"limit_reached":["Personal project creation is not allowed. Please contact your administrator with questions"]}}`)
	})
}

func TestSettingsEffect_externalByDefault(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		putSettings(t, s, map[string]any{"user_default_external": true, "user_default_internal_regex": `@staff\.example$`})
		outsider := s.NewUser(t, "outsider")
		if v := s.Get(t, "/users/"+itoa(outsider.ID), s.RootToken).Object(t)["external"]; v != true {
			t.Errorf("new user external = %v; want true", v)
		}
		var staff struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{"username": "staffer",
			"name": "Staffer", "email": "staffer@staff.example", "password": "a-long-password-1"}}).Want(t, http.StatusCreated).JSON(t, &staff)
		if v := s.Get(t, "/users/"+itoa(staff.ID), s.RootToken).Object(t)["external"]; v != false {
			t.Errorf("staff user external = %v; want false", v)
		}
	})
}

func TestSettingsEffect_defaultBranchName(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		putSettings(t, s, map[string]any{"default_branch_name": "trunk"})
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "app",
			"initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
		if p["default_branch"] != "trunk" {
			t.Errorf("default_branch %v; want trunk", p["default_branch"])
		}
		id := itoa(int64(p["id"].(float64)))
		s.Get(t, "/projects/"+id+"/repository/branches/trunk", alice.Token).Want(t, http.StatusOK)
		// A new wiki starts on the same branch.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + id + "/wikis", Token: alice.Token,
			JSON: map[string]any{"title": "Home", "content": "hello"}}).Want(t, http.StatusCreated)
		out, err := gitRun(t.TempDir(), "ls-remote", "--symref", cloneURL(s, p["path_with_namespace"].(string)+".wiki", "alice", alice.Token), "HEAD")
		if err != nil || !strings.Contains(out, "ref: refs/heads/trunk\tHEAD") {
			t.Errorf("wiki HEAD: %q, %v", out, err)
		}
	})
}

func TestSettingsEffect_delayedDeletion(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "gone-now"}}).
			Want(t, http.StatusCreated).Object(t)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(int64(p["id"].(float64))), Token: alice.Token}).Want(t, http.StatusAccepted)
		eventually(t, "immediate removal", func() bool {
			return s.Get(t, "/projects/"+itoa(int64(p["id"].(float64))), alice.Token).Status == http.StatusNotFound
		})
		putSettings(t, s, map[string]any{"delayed_project_deletion": true, "delayed_group_deletion": true, "deletion_adjourned_period": 3})
		p = s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "kept"}}).
			Want(t, http.StatusCreated).Object(t)
		id := itoa(int64(p["id"].(float64)))
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + id, Token: alice.Token}).Want(t, http.StatusAccepted)
		got := s.Get(t, "/projects/"+id, alice.Token).Want(t, http.StatusOK).Object(t)
		want := time.Now().UTC().Format("2006-01-02")
		if got["marked_for_deletion_on"] != want {
			t.Errorf("marked_for_deletion_on %v; want %s", got["marked_for_deletion_on"], want)
		}
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "g", "path": "g"}}).
			Want(t, http.StatusCreated).Object(t)
		gid := itoa(int64(g["id"].(float64)))
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + gid, Token: alice.Token}).Want(t, http.StatusAccepted)
		if v := s.Get(t, "/groups/"+gid, alice.Token).Want(t, http.StatusOK).Object(t)["marked_for_deletion_on"]; v == nil {
			t.Errorf("group not marked for deletion")
		}
	})
}

func TestSettingsEffect_tokenPrefix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		putSettings(t, s, map[string]any{"personal_access_token_prefix": "qp-"})
		var tok struct{ Token string }
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(s.RootID(t)) + "/personal_access_tokens", Token: s.RootToken,
			JSON: map[string]any{"name": "prefixed", "scopes": []string{"read_api"}}}).Want(t, http.StatusCreated).JSON(t, &tok)
		if !strings.HasPrefix(tok.Token, "qp-") {
			t.Errorf("token %q; want the qp- prefix", tok.Token)
		}
		s.Get(t, "/user", tok.Token).Want(t, http.StatusOK)
	})
}

func TestSettingsEffect_defaultCIConfigPath(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		putSettings(t, s, map[string]any{"default_ci_config_path": "ci/pipeline.yml"})
		p := newCIProject(t, s, owner, "app", map[string]string{"ci/pipeline.yml": "build:\n  script: [\"true\"]\n"})
		pl := p.createPipeline(t, "main")
		if jobs := p.jobs(t, pl.ID); len(jobs) != 1 || jobs[0].Name != "build" {
			t.Errorf("jobs %+v; want build from ci/pipeline.yml", jobs)
		}
	})
}

func TestSettingsEffect_gitAccessProtocol(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "app",
			"initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
		url := cloneURL(s, p["path_with_namespace"].(string), "alice", alice.Token)
		if _, err := gitRun(t.TempDir(), "ls-remote", url); err != nil {
			t.Fatalf("ls-remote with both protocols: %v", err)
		}
		putSettings(t, s, map[string]any{"enabled_git_access_protocol": "ssh"})
		out, err := gitRun(t.TempDir(), "ls-remote", url)
		if err == nil || !strings.Contains(out, "Git access over HTTP is not allowed") {
			t.Errorf("ls-remote with ssh only: %q, %v", out, err)
		}
		putSettings(t, s, map[string]any{"enabled_git_access_protocol": "http"})
		if _, err := gitRun(t.TempDir(), "ls-remote", url); err != nil {
			t.Errorf("ls-remote with http only: %v", err)
		}
		putSettings(t, s, map[string]any{"enabled_git_access_protocol": "nil"})
		if v := s.Get(t, "/application/settings", s.RootToken).Object(t)["enabled_git_access_protocol"]; v != nil {
			t.Errorf("enabled_git_access_protocol %v; want null for both", v)
		}
	})
}

func TestSettingsEffect_adminMode(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		var plain struct{ Token string }
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(s.RootID(t)) + "/personal_access_tokens", Token: s.RootToken,
			JSON: map[string]any{"name": "no-admin-mode", "scopes": []string{"api"}}}).Want(t, http.StatusCreated).JSON(t, &plain)
		s.Get(t, "/application/settings", plain.Token).Want(t, http.StatusOK)
		putSettings(t, s, map[string]any{"admin_mode": true})
		// Without the admin_mode scope an administrator's token is a
		// regular user's: no settings, no other user's private data.
		s.Get(t, "/application/settings", plain.Token).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: plain.Token, JSON: map[string]any{"username": "x", "name": "X",
			"email": "x@example.com", "password": "a-long-password-1"}}).Want(t, http.StatusForbidden)
		s.Get(t, "/user", plain.Token).Want(t, http.StatusOK)
		// The token with the scope keeps its powers, and can turn it off.
		s.Get(t, "/application/settings", s.RootToken).Want(t, http.StatusOK)
		putSettings(t, s, map[string]any{"admin_mode": false})
		s.Get(t, "/application/settings", plain.Token).Want(t, http.StatusOK)
	})
}

func TestSettingsEffect_branchProtectionAndSharedRunners(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		newProject := func(name string) string {
			p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": name,
				"initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
			return itoa(int64(p["id"].(float64)))
		}
		putSettings(t, s, map[string]any{"default_branch_protection": 0, "shared_runners_enabled": false})
		open := newProject("open")
		if got := s.Get(t, "/projects/"+open+"/protected_branches", alice.Token).Want(t, http.StatusOK).Array(t); len(got) != 0 {
			t.Errorf("protection 0: %v", got)
		}
		if v := s.Get(t, "/projects/"+open, alice.Token).Object(t)["shared_runners_enabled"]; v != false {
			t.Errorf("shared_runners_enabled %v; want false", v)
		}
		putSettings(t, s, map[string]any{"default_branch_protection": 1})
		partial := newProject("partial")
		got := s.Get(t, "/projects/"+partial+"/protected_branches", alice.Token).Want(t, http.StatusOK).Array(t)
		if len(got) != 1 {
			t.Fatalf("protection 1: %v", got)
		}
		push := got[0]["push_access_levels"].([]any)[0].(map[string]any)["access_level"]
		merge := got[0]["merge_access_levels"].([]any)[0].(map[string]any)["access_level"]
		if push != 30.0 || merge != 40.0 {
			t.Errorf("protection 1: push %v merge %v; want 30 and 40", push, merge)
		}
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "g", "path": "g"}}).
			Want(t, http.StatusCreated).Object(t)
		if g["default_branch_protection"] != 1.0 {
			t.Errorf("new group default_branch_protection %v; want 1", g["default_branch_protection"])
		}
	})
}

func TestSettingsEffect_diffLimits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "big", nil)
		before := p.commit(t, "main", map[string]string{"small.txt": "x\n"})
		after := p.commit(t, "main", map[string]string{"big.txt": strings.Repeat("a line of text that is long enough\n", 8000)})
		compare := func() map[string]any {
			got := s.Get(t, "/projects/"+itoa(p.ID)+"/repository/compare?from="+before+"&to="+after, owner.Token).Want(t, http.StatusOK).Object(t)
			diffs := got["diffs"].([]any)
			if len(diffs) != 1 {
				t.Fatalf("diffs %v", diffs)
			}
			return diffs[0].(map[string]any)
		}
		if d := compare(); d["too_large"] != true || d["diff"] != "" {
			t.Errorf("a 280 KB patch under the 200 KiB default: too_large %v, %d bytes", d["too_large"], len(d["diff"].(string)))
		}
		putSettings(t, s, map[string]any{"diff_max_patch_bytes": 500 << 10})
		if d := compare(); d["too_large"] != false || d["diff"] == "" {
			t.Errorf("under a 500 KiB limit: too_large %v", d["too_large"])
		}
		got := s.Get(t, "/projects/"+itoa(p.ID)+"/repository/commits/"+after+"/diff", owner.Token).Want(t, http.StatusOK).Array(t)
		if len(got) != 1 || got[0]["too_large"] != false {
			t.Errorf("commit diff under a 500 KiB limit: %v", got)
		}
	})
}

func TestSettingsEffect_rawBlobLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "rawfiles", map[string]string{"a.txt": "A\n", "b.txt": "B\n"})
		raw := func(path string) *apitest.Response {
			return s.Get(t, "/projects/"+itoa(p.ID)+"/repository/files/"+path+"/raw?ref=main", owner.Token)
		}
		putSettings(t, s, map[string]any{"raw_blob_request_limit": 2})
		raw("a.txt").Want(t, http.StatusOK)
		raw("a.txt").Want(t, http.StatusOK)
		raw("a.txt").Want(t, http.StatusTooManyRequests).
			WantBody(t, `{"message":{"error":"This endpoint has been requested too many times. Try again later."}}`)
		raw("b.txt").Want(t, http.StatusOK) // per path
		putSettings(t, s, map[string]any{"raw_blob_request_limit": 0})
		for range 5 {
			raw("a.txt").Want(t, http.StatusOK)
		}
	})
}

func TestSettingsEffect_archivedJobs(t *testing.T) {
	t.Parallel()
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: time.Now().UTC()}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "old", map[string]string{".gitlab-ci.yml": "build:\n  script: [\"true\"]\ndeploy:\n  script: [\"true\"]\n  when: manual\n"})
		pl := p.createPipeline(t, "main")
		jobs := latest(p.jobs(t, pl.ID))
		run(t, s, jobs["build"].ID, failWith(1))
		putSettings(t, s, map[string]any{"archive_builds_in_human_readable": "1 day"})
		clock.Set(clock.Now().Add(36 * time.Hour))
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/retry", p.ID, jobs["build"].ID), Token: owner.Token}).
			Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden - Job is not retryable"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/play", p.ID, jobs["deploy"].ID), Token: owner.Token}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"400 Bad request - Unplayable Job"}`)
		// Without the setting they are live again.
		putSettings(t, s, map[string]any{"archive_builds_in_human_readable": ""})
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/jobs/%d/retry", p.ID, jobs["build"].ID), Token: owner.Token}).
			Want(t, http.StatusCreated)
	})
}

func TestSettingsEffect_dormantUsers(t *testing.T) {
	t.Parallel()
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: time.Now().UTC()}
		// No task workers: the daily task is run by hand below, so that
		// it cannot run between the clock's move and root's next request.
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now; c.TaskWorkers = 0 })
		idle := s.NewUser(t, "idle")
		busy := s.NewUser(t, "busy")
		putSettings(t, s, map[string]any{"deactivate_dormant_users": true, "deactivate_dormant_users_period": 90})
		clock.Set(clock.Now().Add(100 * 24 * time.Hour))
		s.Get(t, "/user", s.RootToken).Want(t, http.StatusOK)
		s.Get(t, "/user", busy.Token).Want(t, http.StatusOK)
		n, err := s.App.Users.DeactivateDormant(ctx(t))
		if err != nil || n != 1 {
			t.Fatalf("deactivated %d, %v; want 1", n, err)
		}
		for _, c := range []struct {
			id    int64
			state string
		}{{idle.ID, "deactivated"}, {busy.ID, "active"}, {s.RootID(t), "active"}} {
			if v := s.Get(t, "/users/"+itoa(c.id), s.RootToken).Object(t)["state"]; v != c.state {
				t.Errorf("user %d state %v; want %s", c.id, v, c.state)
			}
		}
		s.Get(t, "/user", idle.Token).Want(t, http.StatusForbidden)
		// Off, nothing happens.
		putSettings(t, s, map[string]any{"deactivate_dormant_users": false})
		clock.Set(clock.Now().Add(100 * 24 * time.Hour))
		s.Get(t, "/user", s.RootToken).Want(t, http.StatusOK)
		if n, err := s.App.Users.DeactivateDormant(ctx(t)); err != nil || n != 0 {
			t.Errorf("with the setting off: %d, %v", n, err)
		}
	})
}

func TestSettingsEffect_projectCreationOfNewGroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		putSettings(t, s, map[string]any{"default_project_creation": 0})
		g := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "locked", "path": "locked"}}).
			Want(t, http.StatusCreated).Object(t)
		if g["project_creation_level"] != "noone" {
			t.Errorf("project_creation_level %v; want noone", g["project_creation_level"])
		}
		// The group's owner may not create projects in it; an
		// administrator may.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "p", "namespace_id": g["id"]}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"namespace":["is not valid"]}}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "p", "namespace_id": g["id"]}}).
			Want(t, http.StatusCreated)
		putSettings(t, s, map[string]any{"default_project_creation": 1})
		g = s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "m", "path": "m"}}).
			Want(t, http.StatusCreated).Object(t)
		if g["project_creation_level"] != "maintainer" {
			t.Errorf("project_creation_level %v; want maintainer", g["project_creation_level"])
		}
	})
}

func TestSettingsEffect_artifactsExpireIn(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		p := newCIProject(t, s, owner, "art", map[string]string{".gitlab-ci.yml": "build:\n  script: [\"true\"]\n"})
		pl := p.createPipeline(t, "main")
		job := latest(p.jobs(t, pl.ID))["build"]
		putSettings(t, s, map[string]any{"default_artifacts_expire_in": "2 days"})
		j, err := engine(s).Start(ctx(t), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		if _, err := engine(s).UploadArtifact(ctx(t), j, ci.ArtifactUpload{Type: "archive"}, bytes.NewReader(buildZip(t, map[string]string{"out.txt": "x"}))); err != nil {
			t.Fatal(err)
		}
		var got struct {
			ArtifactsExpireAt *time.Time `json:"artifacts_expire_at"`
		}
		s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d", p.ID, job.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &got)
		want := before.Add(48 * time.Hour)
		if got.ArtifactsExpireAt == nil || got.ArtifactsExpireAt.Before(want.Add(-time.Minute)) || got.ArtifactsExpireAt.After(want.Add(time.Minute)) {
			t.Errorf("artifacts_expire_at %v; want about %v", got.ArtifactsExpireAt, want)
		}
	})
}
