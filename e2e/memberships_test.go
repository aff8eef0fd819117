package e2e

import (
	"fmt"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// GET /users/:id/memberships lists a user's direct memberships of groups
// and projects for administrators, never the inherited ones.
func TestMemberships_directOnlyForAdmins(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		var top, sub, inSub, personal struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Top", "path": "top"}}).Want(t, 201).JSON(t, &top)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Sub", "path": "sub", "parent_id": top.ID}}).Want(t, 201).JSON(t, &sub)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "In Sub", "path": "in-sub", "namespace_id": sub.ID}}).Want(t, 201).JSON(t, &inSub)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "Personal", "path": "personal"}}).Want(t, 201).JSON(t, &personal)
		add := func(kind string, id int64, level int) {
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/%s/%d/members", kind, id), Token: alice.Token,
				JSON: map[string]any{"user_id": bob.ID, "access_level": level}}).Want(t, 201)
		}
		add("groups", top.ID, 20)        // inherited by Sub and In Sub: not listed there
		add("projects", personal.ID, 30) // a project membership
		add("projects", inSub.ID, 40)    // above the inherited reporter
		path := "/users/" + itoa(bob.ID) + "/memberships"

		got := s.Get(t, path, s.RootToken).Want(t, 200)
		want := fmt.Sprintf(`[{"source_id":%d,"source_name":"Top","source_type":"Namespace","access_level":20},`+
			`{"source_id":%d,"source_name":"Personal","source_type":"Project","access_level":30},`+
			`{"source_id":%d,"source_name":"In Sub","source_type":"Project","access_level":40}]`, top.ID, personal.ID, inSub.ID)
		got.WantBody(t, want)
		if got.Header.Get("X-Total") != "3" || got.Header.Get("X-Page") != "1" {
			t.Errorf("headers total %q page %q", got.Header.Get("X-Total"), got.Header.Get("X-Page"))
		}
		s.Get(t, path+"?type=Namespace", s.RootToken).Want(t, 200).
			WantBody(t, fmt.Sprintf(`[{"source_id":%d,"source_name":"Top","source_type":"Namespace","access_level":20}]`, top.ID))
		// Pages, with the official client and its type filter.
		c := s.Root(t)
		ms, resp, err := c.Users.GetUserMemberships(bob.ID, &gitlab.GetUserMembershipOptions{Type: gitlab.Ptr("Project"),
			ListOptions: gitlab.ListOptions{PerPage: 1, Page: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || ms[0].SourceID != inSub.ID || ms[0].SourceType != "Project" || ms[0].AccessLevel != gitlab.MaintainerPermissions ||
			resp.TotalItems != 2 || resp.PreviousPage != 1 || resp.NextPage != 0 {
			t.Errorf("page 2 of projects: %+v, total %d prev %d next %d", ms, resp.TotalItems, resp.PreviousPage, resp.NextPage)
		}
		// The group creator's memberships: the groups they made.
		var own []map[string]any
		s.Get(t, "/users/"+itoa(alice.ID)+"/memberships?type=Namespace", s.RootToken).Want(t, 200).JSON(t, &own)
		var names []string
		for _, m := range own {
			names = append(names, fmt.Sprintf("%v:%v", m["source_name"], m["access_level"]))
		}
		if strings.Join(names, ",") != "Top:50,Sub:50" {
			t.Errorf("creator's group memberships %v", names)
		}
		// A user with none.
		carol := s.NewUser(t, "carol")
		s.Get(t, "/users/"+itoa(carol.ID)+"/memberships", s.RootToken).Want(t, 200).WantBody(t, `[]`)
		// A read_user token of an administrator reads it too.
		s.Get(t, path, s.NewToken(t, s.RootID(t), "read_user")).Want(t, 200)
		// Removing a membership removes it from the list.
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/members/%d", personal.ID, bob.ID), Token: alice.Token}).Want(t, 204)
		if n := len(s.Get(t, path, s.RootToken).Want(t, 200).Array(t)); n != 2 {
			t.Errorf("%d memberships after a removal; want 2", n)
		}
	})
}

func TestMemberships_permissionsAndBadInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		bob := s.NewUser(t, "bob")
		path := "/users/" + itoa(bob.ID) + "/memberships"
		s.Get(t, path, "").Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		s.Get(t, path, bob.Token).Want(t, 403).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, "/users/"+itoa(s.RootID(t))+"/memberships", bob.Token).Want(t, 403)
		s.Get(t, "/users/"+itoa(s.AbsentID(t))+"/memberships", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		s.Get(t, "/users/99999999999999999999999/memberships", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		s.Get(t, "/users/-1/memberships", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
		// Parameters are checked before the caller, as Grape does.
		s.Get(t, "/users/bob/memberships", s.RootToken).Want(t, 400).WantBody(t, `{"error":"user_id is invalid"}`)
		s.Get(t, path+"?type=Group", s.RootToken).Want(t, 400).WantBody(t, `{"error":"type does not have a valid value"}`)
		s.Get(t, path+"?type=project", bob.Token).Want(t, 400).WantBody(t, `{"error":"type does not have a valid value"}`)
		s.Get(t, "/users/bob/memberships?type=x", "").Want(t, 400).WantBody(t, `{"error":"user_id is invalid, type does not have a valid value"}`)
		s.Get(t, path+"?per_page=many", s.RootToken).Want(t, 400).WantBody(t, `{"error":"per_page is invalid"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: path, Token: s.RootToken}).Want(t, 405)
	})
}
