package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
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
