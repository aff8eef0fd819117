package e2e

import (
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// TestPermissions_matrix asserts the exact status of every role × action ×
// visibility for the actions the API has: reading a project and its
// repository, managing members, changing settings, protecting branches and
// deleting. (Pushes and file writes follow auth.PushCode, whose matrix is
// in internal/auth.)
func TestPermissions_matrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "Matrix", "path": "matrix", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		projects := map[string]int64{}
		for _, vis := range []string{"public", "internal", "private"} {
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{
				"name": "p-" + vis, "namespace_id": g.ID, "visibility": vis, "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
			projects[vis] = p.ID
		}
		tokens := map[string]string{"anonymous": "", "owner": owner.Token, "admin": s.RootToken}
		ext := s.NewUser(t, "external")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true}}).Want(t, 200)
		tokens["external"] = ext.Token
		tokens["user"] = s.NewUser(t, "user").Token
		levels := map[string]int{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40, "blocked": 30}
		for role, lvl := range levels {
			u := s.NewUser(t, role)
			tokens[role] = u.Token
			for _, id := range projects {
				s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(id) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": u.ID, "access_level": lvl}}).Want(t, 201)
			}
			if role == "blocked" {
				s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(u.ID) + "/block", Token: s.RootToken}).Want(t, 201)
			}
		}
		target := s.NewUser(t, "target")
		roles := []string{"anonymous", "external", "user", "blocked", "guest", "reporter", "developer", "maintainer", "owner", "admin"}
		type exp map[string][3]int // role → status for public, internal, private
		matrix := map[string]exp{
			"read project": {
				"anonymous": {200, 404, 404}, "external": {200, 404, 404}, "user": {200, 200, 404}, "blocked": {403, 403, 403},
				"guest": {200, 200, 200}, "reporter": {200, 200, 200}, "developer": {200, 200, 200}, "maintainer": {200, 200, 200},
				"owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"read repository": {
				"anonymous": {200, 404, 404}, "external": {200, 404, 404}, "user": {200, 200, 404}, "blocked": {403, 403, 403},
				"guest": {200, 200, 403}, "reporter": {200, 200, 200}, "developer": {200, 200, 200}, "maintainer": {200, 200, 200},
				"owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"manage members": {
				"anonymous": {401, 401, 401}, "external": {403, 404, 404}, "user": {403, 403, 404}, "blocked": {403, 403, 403},
				"guest": {403, 403, 403}, "reporter": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {201, 201, 201},
				"owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"update settings": {
				"anonymous": {401, 401, 401}, "external": {403, 404, 404}, "user": {403, 403, 404}, "blocked": {403, 403, 403},
				"guest": {403, 403, 403}, "reporter": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {200, 200, 200},
				"owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"protect branch": {
				"anonymous": {401, 401, 401}, "external": {403, 404, 404}, "user": {403, 403, 404}, "blocked": {403, 403, 403},
				"guest": {403, 403, 403}, "reporter": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {201, 201, 201},
				"owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"delete project": {
				"anonymous": {401, 401, 401}, "external": {403, 404, 404}, "user": {403, 403, 404}, "blocked": {403, 403, 403},
				"guest": {403, 403, 403}, "reporter": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403},
				"owner": {202, 202, 202}, "admin": {202, 202, 202}},
		}
		act := func(action, token string, id int64) int {
			path := "/projects/" + itoa(id)
			switch action {
			case "read project":
				return s.Get(t, path, token).Status
			case "read repository":
				return s.Get(t, path+"/languages", token).Status
			case "manage members":
				st := s.Do(t, apitest.Request{Method: "POST", Path: path + "/members", Token: token, JSON: map[string]any{"user_id": target.ID, "access_level": 10}}).Status
				if st == http.StatusCreated {
					s.Do(t, apitest.Request{Method: "DELETE", Path: path + "/members/" + itoa(target.ID), Token: owner.Token}).Want(t, 204)
				}
				return st
			case "update settings":
				return s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: token, JSON: map[string]any{"description": "changed"}}).Status
			case "protect branch":
				st := s.Do(t, apitest.Request{Method: "POST", Path: path + "/protected_branches", Token: token, JSON: map[string]any{"name": "rel-*"}}).Status
				if st == http.StatusCreated {
					s.Do(t, apitest.Request{Method: "DELETE", Path: path + "/protected_branches/rel-*", Token: owner.Token}).Want(t, 204)
				}
				return st
			case "delete project":
				st := s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: token}).Status
				if st == http.StatusAccepted {
					s.Do(t, apitest.Request{Method: "POST", Path: path + "/restore", Token: owner.Token}).Want(t, 201)
				}
				return st
			}
			panic(action)
		}
		for action, want := range matrix {
			for _, role := range roles {
				for i, vis := range []string{"public", "internal", "private"} {
					if got := act(action, tokens[role], projects[vis]); got != want[role][i] {
						t.Errorf("%s as %s on %s project: %d; want %d", action, role, vis, got, want[role][i])
					}
				}
			}
		}
	}, apitest.DelayedDeletion)
}

// TestPermissions_groupMatrix does the same for groups: reading, managing
// members, changing settings, creating subgroups and deleting.
func TestPermissions_groupMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		groups := map[string]int64{}
		for _, vis := range []string{"public", "internal", "private"} {
			var g struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": "g-" + vis, "path": "g-" + vis, "visibility": vis}}).Want(t, 201).JSON(t, &g)
			groups[vis] = g.ID
		}
		tokens := map[string]string{"anonymous": "", "owner": owner.Token, "admin": s.RootToken, "user": s.NewUser(t, "user").Token}
		for role, lvl := range map[string]int{"guest": 10, "developer": 30, "maintainer": 40} {
			u := s.NewUser(t, role)
			tokens[role] = u.Token
			for _, id := range groups {
				s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(id) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": u.ID, "access_level": lvl}}).Want(t, 201)
			}
		}
		target := s.NewUser(t, "target")
		roles := []string{"anonymous", "user", "guest", "developer", "maintainer", "owner", "admin"}
		matrix := map[string]map[string][3]int{
			"read group":      {"anonymous": {200, 404, 404}, "user": {200, 200, 404}, "guest": {200, 200, 200}, "developer": {200, 200, 200}, "maintainer": {200, 200, 200}, "owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"manage members":  {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"update settings": {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {200, 200, 200}, "admin": {200, 200, 200}},
			"create subgroup": {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"create project":  {"anonymous": {401, 401, 401}, "user": {400, 400, 404}, "guest": {400, 400, 400}, "developer": {201, 201, 201}, "maintainer": {201, 201, 201}, "owner": {201, 201, 201}, "admin": {201, 201, 201}},
			"delete group":    {"anonymous": {401, 401, 401}, "user": {403, 403, 404}, "guest": {403, 403, 403}, "developer": {403, 403, 403}, "maintainer": {403, 403, 403}, "owner": {202, 202, 202}, "admin": {202, 202, 202}},
		}
		n := 0
		act := func(action, token string, id int64) int {
			path := "/groups/" + itoa(id)
			n++
			switch action {
			case "read group":
				return s.Get(t, path, token).Status
			case "manage members":
				st := s.Do(t, apitest.Request{Method: "POST", Path: path + "/members", Token: token, JSON: map[string]any{"user_id": target.ID, "access_level": 10}}).Status
				if st == http.StatusCreated {
					s.Do(t, apitest.Request{Method: "DELETE", Path: path + "/members/" + itoa(target.ID), Token: owner.Token}).Want(t, 204)
				}
				return st
			case "update settings":
				return s.Do(t, apitest.Request{Method: "PUT", Path: path, Token: token, JSON: map[string]any{"description": "changed"}}).Status
			case "create subgroup":
				p := "sub" + itoa(int64(n))
				return s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: map[string]any{"name": p, "path": p, "parent_id": id, "visibility": "private"}}).Status
			case "create project":
				p := "proj" + itoa(int64(n))
				return s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: map[string]any{"name": p, "namespace_id": id, "visibility": "private"}}).Status
			case "delete group":
				st := s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: token}).Status
				if st == http.StatusAccepted {
					s.Do(t, apitest.Request{Method: "POST", Path: path + "/restore", Token: owner.Token}).Want(t, 201)
				}
				return st
			}
			panic(action)
		}
		for action, want := range matrix {
			for _, role := range roles {
				for i, vis := range []string{"public", "internal", "private"} {
					if got := act(action, tokens[role], groups[vis]); got != want[role][i] {
						t.Errorf("%s as %s on %s group: %d; want %d", action, role, vis, got, want[role][i])
					}
				}
			}
		}
	}, apitest.DelayedDeletion)
}
