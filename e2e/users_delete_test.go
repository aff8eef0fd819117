package e2e

import (
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// TestUsers_Delete_withPersonalProjects: deleting a user who owns personal
// projects removes the user and those projects, repositories included
// (204), with or without hard_delete; only the sole owner of a group is
// refused without hard_delete, which removes the group too.
func TestUsers_Delete_withPersonalProjects(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		for _, hard := range []bool{false, true} {
			name := map[bool]string{false: "soft", true: "hard"}[hard]
			u := s.NewUser(t, "owner-"+name)
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, JSON: map[string]any{"name": "mine", "initialize_with_readme": true}}).
				Want(t, http.StatusCreated).JSON(t, &p)
			repo := repoDir(t, s, p.ID)
			path := "/users/" + itoa(u.ID)
			if hard {
				path += "?hard_delete=true"
			}
			s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: s.RootToken}).Want(t, http.StatusNoContent)
			s.Get(t, "/users/"+itoa(u.ID), s.RootToken).Want(t, http.StatusNotFound)
			s.Get(t, "/projects/"+itoa(p.ID), s.RootToken).Want(t, http.StatusNotFound)
			if _, err := osStat(repo); err == nil {
				t.Errorf("%s delete left the repository %s on disk", name, repo)
			}
			// The name is free for someone else, namespace included.
			again := s.NewUser(t, "owner-"+name)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: again.Token, JSON: map[string]any{"name": "mine"}}).Want(t, http.StatusCreated)
		}

		// The sole owner of a group: 409 without hard_delete; with it the
		// group and its projects go as well. A group with another owner
		// stays.
		solo := s.NewUser(t, "solo")
		other := s.NewUser(t, "other")
		var g, shared, inG struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: solo.Token, JSON: map[string]any{"name": "Solo", "path": "solo-group"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: solo.Token, JSON: map[string]any{"name": "Shared", "path": "shared-group"}}).Want(t, 201).JSON(t, &shared)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(shared.ID) + "/members", Token: solo.Token, JSON: map[string]any{"user_id": other.ID, "access_level": 50}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: solo.Token, JSON: map[string]any{"name": "inner", "namespace_id": g.ID}}).Want(t, 201).JSON(t, &inG)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(solo.ID), Token: s.RootToken}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":"User cannot be removed while is the sole-owner of a group"}`)
		s.Get(t, "/users/"+itoa(solo.ID), s.RootToken).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(solo.ID) + "?hard_delete=true", Token: s.RootToken}).Want(t, http.StatusNoContent)
		s.Get(t, "/groups/"+itoa(g.ID), s.RootToken).Want(t, http.StatusNotFound)
		s.Get(t, "/projects/"+itoa(inG.ID), s.RootToken).Want(t, http.StatusNotFound)
		s.Get(t, "/groups/"+itoa(shared.ID), other.Token).Want(t, http.StatusOK)
	})
}
