package e2e

import (
	"fmt"
	"net/url"
	"testing"

	"quarry/internal/apitest"
)

func TestProtectedBranches(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		dev := s.NewUser(t, "dev")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "guarded", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		base := "/projects/" + itoa(p.ID) + "/protected_branches"
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token, JSON: map[string]any{"user_id": dev.ID, "access_level": 30}}).Want(t, 201)
		// The default branch is fully protected from the start.
		list := s.Get(t, base, dev.Token).Want(t, 200).Array(t)
		if len(list) != 1 || list[0]["name"] != "main" {
			t.Fatalf("protected branches %v", list)
		}
		push := list[0]["push_access_levels"].([]any)[0].(map[string]any)
		if push["access_level"] != float64(40) || push["access_level_description"] != "Maintainers" {
			t.Errorf("push level %v", push)
		}
		s.Get(t, base+"/main", dev.Token).Want(t, 200)
		s.Get(t, base+"/nope", dev.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		// Protect a wildcard.
		r := s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "release/*", "push_access_level": 30, "merge_access_level": 40, "allow_force_push": true}}).Want(t, 201).Object(t)
		if r["name"] != "release/*" || r["allow_force_push"] != true || r["push_access_levels"].([]any)[0].(map[string]any)["access_level_description"] != "Developers + Maintainers" {
			t.Errorf("protected %v", r)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "release/*"}}).Want(t, 409).
			WantBody(t, `{"message":"Protected branch 'release/*' already exists"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"name": "x", "push_access_level": 35}}).Want(t, 400).
			WantBody(t, `{"error":"push_access_level does not have a valid value"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{}}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: dev.Token, JSON: map[string]any{"name": "dev-only"}}).Want(t, 403)
		outsider := s.NewUser(t, "outsider")
		s.Get(t, base, outsider.Token).Want(t, 404)
		// Update.
		name := url.PathEscape("release/*")
		r = s.Do(t, apitest.Request{Method: "PATCH", Path: base + "/" + name, Token: owner.Token, JSON: map[string]any{
			"allow_force_push": false, "allowed_to_push": []map[string]any{{"access_level": 40}, {"user_id": dev.ID}}}}).Want(t, 200).Object(t)
		pushes := r["push_access_levels"].([]any)
		if r["allow_force_push"] != false || len(pushes) != 2 || pushes[1].(map[string]any)["user_id"] != float64(dev.ID) {
			t.Errorf("updated %v", r)
		}
		// Unprotect.
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + name, Token: dev.Token}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + name, Token: owner.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: base + "/" + name, Token: owner.Token}).Want(t, 404)
		if got := s.Get(t, base, owner.Token).Array(t); len(got) != 1 {
			t.Errorf("after unprotect %d rules", len(got))
		}
	})
}

// A group's default_branch_protection decides how its new projects start.
func TestProtectedBranches_groupDefault(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		for level, want := range map[int]string{0: "[]", 1: "30", 2: "40", 3: "40"} {
			var g, p struct{ ID int64 }
			path := fmt.Sprintf("g%d", level)
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token, JSON: map[string]any{"name": path, "path": path, "default_branch_protection": level}}).Want(t, 201).JSON(t, &g)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "p", "namespace_id": g.ID, "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
			list := s.Get(t, "/projects/"+itoa(p.ID)+"/protected_branches", owner.Token).Want(t, 200).Array(t)
			got := "[]"
			if len(list) > 0 {
				got = fmt.Sprint(list[0]["push_access_levels"].([]any)[0].(map[string]any)["access_level"])
			}
			if got != want {
				t.Errorf("default_branch_protection %d: push level %s; want %s", level, got, want)
			}
		}
	})
}
