package e2e

import (
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

func TestGroups_createAndSubgroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		c := s.Client(t, alice.Token)
		top, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Acme Corp"), Path: gitlab.Ptr("acme"),
			Visibility: gitlab.Ptr(gitlab.InternalVisibility), Description: gitlab.Ptr("d")})
		if err != nil {
			t.Fatal(err)
		}
		if top.FullPath != "acme" || top.FullName != "Acme Corp" || top.Visibility != gitlab.InternalVisibility || top.ParentID != 0 ||
			top.WebURL != s.URL+"/groups/acme" || top.RunnersToken == "" {
			t.Errorf("group %+v", top)
		}
		sub, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Web"), Path: gitlab.Ptr("web"), ParentID: gitlab.Ptr(top.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if sub.FullPath != "acme/web" || sub.FullName != "Acme Corp / Web" || sub.ParentID != top.ID {
			t.Errorf("subgroup %+v", sub)
		}
		deep, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Deep"), Path: gitlab.Ptr("deep"), ParentID: gitlab.Ptr(sub.ID)})
		if err != nil {
			t.Fatal(err)
		}
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: body})
		}
		post(alice.Token, map[string]any{"name": "x"}).Want(t, 400).WantBody(t, `{"error":"path is missing"}`)
		post(alice.Token, map[string]any{"name": "Other", "path": "ACME"}).Want(t, 400).
			WantBody(t, `{"message":"Failed to save group {:path=>[\"has already been taken\"]}"}`)
		post(alice.Token, map[string]any{"name": "Loud", "path": "loud", "parent_id": top.ID, "visibility": "public"}).Want(t, 400)
		post(alice.Token, map[string]any{"name": "x", "path": "admin"}).Want(t, 400)
		post(alice.Token, map[string]any{"name": "x", "path": "ok-path", "visibility": "open"}).Want(t, 400).
			WantBody(t, `{"error":"visibility does not have a valid value"}`)
		post("", map[string]any{"name": "x", "path": "y"}).Want(t, 401)
		bob := s.NewUser(t, "bob")
		post(bob.Token, map[string]any{"name": "Sneaky", "path": "sneaky", "parent_id": top.ID}).Want(t, 403)
		post(bob.Token, map[string]any{"name": "Hidden", "path": "hidden", "parent_id": unknownID}).Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)

		// Subgroups and descendants.
		if got := s.Get(t, "/groups/acme/subgroups", alice.Token).Want(t, 200).Array(t); len(got) != 1 || got[0]["path"] != "web" {
			t.Errorf("subgroups %v", got)
		}
		if got := s.Get(t, "/groups/"+itoa(top.ID)+"/descendant_groups", alice.Token).Want(t, 200).Array(t); len(got) != 2 {
			t.Errorf("descendants %d", len(got))
		}
		// Renaming the top group carries down the tree.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(top.ID), Token: alice.Token, JSON: map[string]any{"path": "acme2", "name": "Acme2"}}).Want(t, 200)
		got := s.Get(t, "/groups/"+itoa(deep.ID), alice.Token).Want(t, 200).Object(t)
		if got["full_path"] != "acme2/web/deep" || got["full_name"] != "Acme2 / Web / Deep" {
			t.Errorf("after rename: %v %v", got["full_path"], got["full_name"])
		}
		s.Get(t, "/groups/"+url.PathEscape("acme2/web/deep"), alice.Token).Want(t, 200)
		// A parent may not become less visible than its children.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(sub.ID), Token: alice.Token, JSON: map[string]any{"visibility": "internal"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(top.ID), Token: alice.Token, JSON: map[string]any{"visibility": "private"}}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/" + itoa(top.ID), Token: bob.Token, JSON: map[string]any{"description": "x"}}).Want(t, 403)
	})
}

func TestGroups_detailsListsAndProjects(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		mk := func(token string, body map[string]any) int64 {
			var g struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: token, JSON: body}).Want(t, 201).JSON(t, &g)
			return g.ID
		}
		a := mk(alice.Token, map[string]any{"name": "Alpha", "path": "alpha", "visibility": "public"})
		b := mk(alice.Token, map[string]any{"name": "Beta", "path": "beta", "visibility": "public"})
		sub := mk(alice.Token, map[string]any{"name": "Child", "path": "child", "parent_id": a, "visibility": "public"})
		mk(bob.Token, map[string]any{"name": "Bobs", "path": "bobs", "visibility": "public"})
		project := func(name string, ns int64) int64 {
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": name, "namespace_id": ns, "visibility": "public"}}).Want(t, 201).JSON(t, &p)
			return p.ID
		}
		project("top", a)
		project("nested", sub)
		shared := project("shared", b)

		d := s.Get(t, "/groups/"+itoa(a), alice.Token).Want(t, 200).Object(t)
		if ps := d["projects"].([]any); len(ps) != 1 {
			t.Errorf("detail projects %d", len(ps))
		}
		if d["runners_token"] == nil {
			t.Error("owner lacks runners_token")
		}
		other := s.Get(t, "/groups/"+itoa(a), bob.Token).Want(t, 200).Object(t)
		if _, ok := other["runners_token"]; ok {
			t.Error("runners_token shown to a non-owner")
		}
		if _, ok := s.Get(t, "/groups/"+itoa(a)+"?with_projects=false", alice.Token).Object(t)["projects"]; ok {
			t.Error("projects shown with with_projects=false")
		}
		if got := s.Get(t, "/groups/"+itoa(a)+"/projects", alice.Token).Array(t); len(got) != 1 {
			t.Errorf("group projects %d", len(got))
		}
		if got := s.Get(t, "/groups/"+itoa(a)+"/projects?include_subgroups=true", alice.Token).Array(t); len(got) != 2 {
			t.Errorf("with subgroups %d", len(got))
		}
		// Share beta's project with alpha: it shows in alpha's shared list.
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(shared) + "/share", Token: alice.Token,
			JSON: map[string]any{"group_id": a, "group_access": 30}}).Want(t, 201).Object(t)
		if r["group_access"] != float64(30) {
			t.Errorf("share %v", r)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(shared) + "/share", Token: alice.Token,
			JSON: map[string]any{"group_id": a, "group_access": 30}}).Want(t, 409)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(shared) + "/share", Token: alice.Token,
			JSON: map[string]any{"group_id": a, "group_access": 31}}).Want(t, 400)
		if got := s.Get(t, "/groups/"+itoa(a)+"/projects/shared", alice.Token).Array(t); len(got) != 1 || got[0]["id"] != float64(shared) {
			t.Errorf("shared projects %v", got)
		}
		if got := s.Get(t, "/groups/"+itoa(a)+"/projects", alice.Token).Array(t); len(got) != 2 {
			t.Errorf("with_shared default: %d", len(got))
		}
		if got := s.Get(t, "/groups/"+itoa(a)+"/projects?with_shared=false", alice.Token).Array(t); len(got) != 1 {
			t.Errorf("with_shared=false: %d", len(got))
		}
		pj := s.Get(t, "/projects/"+itoa(shared), alice.Token).Object(t)
		if sw := pj["shared_with_groups"].([]any); len(sw) != 1 || sw[0].(map[string]any)["group_full_path"] != "alpha" {
			t.Errorf("shared_with_groups %v", pj["shared_with_groups"])
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(shared) + "/share/" + itoa(a), Token: alice.Token}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(shared) + "/share/" + itoa(a), Token: alice.Token}).Want(t, 404).
			WantBody(t, `{"message":"404 Group Link Not Found"}`)

		// Lists.
		names := func(q, token string) string {
			var out []string
			for _, g := range s.Get(t, "/groups?"+q, token).Want(t, 200).Array(t) {
				out = append(out, g["path"].(string))
			}
			return strings.Join(out, ",")
		}
		for q, want := range map[string]string{
			"":                              "alpha,beta,child",
			"all_available=true":            "alpha,beta,bobs,child",
			"top_level_only=true":           "alpha,beta",
			"search=bet":                    "beta",
			"order_by=id&sort=desc":         "child,beta,alpha",
			"skip_groups[]=" + itoa(b):      "alpha,child",
			"owned=true":                    "alpha,beta,child",
			"min_access_level=50":           "alpha,beta,child",
			"all_available=true&owned=true": "alpha,beta,child",
		} {
			if got := names(q, alice.Token); got != want {
				t.Errorf("GET /groups?%s = %s; want %s", q, got, want)
			}
		}
		if got := names("", ""); got != "alpha,beta,bobs,child" {
			t.Errorf("anonymous groups %s", got)
		}
		s.Get(t, "/groups?order_by=size", alice.Token).Want(t, 400)
	})
}

func TestGroups_transferAndDelete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		mk := func(body map[string]any) int64 {
			var g struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: body}).Want(t, 201).JSON(t, &g)
			return g.ID
		}
		a := mk(map[string]any{"name": "A", "path": "ga"})
		b := mk(map[string]any{"name": "B", "path": "gb"})
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "inside", "namespace_id": b}}).Want(t, 201).JSON(t, &p)
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(b) + "/transfer", Token: alice.Token, JSON: map[string]any{"group_id": a}}).Want(t, 201).Object(t)
		if r["full_path"] != "ga/gb" {
			t.Errorf("transferred to %v", r["full_path"])
		}
		if got := s.Get(t, "/projects/"+itoa(p.ID), alice.Token).Object(t); got["path_with_namespace"] != "ga/gb/inside" {
			t.Errorf("project moved to %v", got["path_with_namespace"])
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(a) + "/transfer", Token: alice.Token, JSON: map[string]any{"group_id": b}}).Want(t, 400)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(b) + "/transfer", Token: alice.Token}).Want(t, 201)
		// Delete marks; permanent removal takes the projects along.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(b), Token: alice.Token}).Want(t, 202)
		if got := s.Get(t, "/groups/"+itoa(b), alice.Token).Object(t); got["marked_for_deletion_on"] == nil {
			t.Error("group not marked")
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(b) + "?permanently_remove=true&full_path=gb", Token: alice.Token}).Want(t, 202)
		waitGone(t, s, "/groups/"+itoa(b), alice.Token)
		waitGone(t, s, "/projects/"+itoa(p.ID), alice.Token)
	}, apitest.DelayedDeletion)
}

func TestNamespaces(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Team", "path": "team"}}).Want(t, 201).JSON(t, &g)
		s.Get(t, "/namespaces", "").Want(t, 401)
		ns := s.Get(t, "/namespaces", alice.Token).Want(t, 200).Array(t)
		if len(ns) != 2 {
			t.Errorf("alice's namespaces %v", ns)
		}
		if got := s.Get(t, "/namespaces", s.RootToken).Array(t); len(got) < 4 {
			t.Errorf("admin sees %d namespaces", len(got))
		}
		one := s.Get(t, "/namespaces/team", alice.Token).Want(t, 200).Object(t)
		if one["kind"] != "group" || one["full_path"] != "team" {
			t.Errorf("namespace %v", one)
		}
		s.Get(t, "/namespaces/team", bob.Token).Want(t, 404).WantBody(t, `{"message":"404 Namespace Not Found"}`)
		s.Get(t, "/namespaces/"+itoa(g.ID)+"/exists", "").Want(t, 401)
		ex := s.Get(t, "/namespaces/team/exists", bob.Token).Want(t, 200).Object(t)
		if ex["exists"] != true || len(ex["suggests"].([]any)) != 1 {
			t.Errorf("exists %v", ex)
		}
		ex = s.Get(t, "/namespaces/free-path/exists", bob.Token).Want(t, 200).Object(t)
		if ex["exists"] != false {
			t.Errorf("exists %v", ex)
		}
	})
}

func TestTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		post := func(token string, body map[string]any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: "POST", Path: "/topics", Token: token, JSON: body})
		}
		post(alice.Token, map[string]any{"name": "go"}).Want(t, 403)
		post(s.RootToken, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
		goT := post(s.RootToken, map[string]any{"name": "go", "description": "the language"}).Want(t, 201).Object(t)
		post(s.RootToken, map[string]any{"name": "GO"}).Want(t, 400).WantBody(t, `{"message":{"name":["has already been taken"]}}`)
		rust := post(s.RootToken, map[string]any{"name": "rust"}).Want(t, 201).Object(t)
		for i, topics := range [][]string{{"rust"}, {"rust", "go"}} {
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "p" + itoa(int64(i)), "topics": topics, "visibility": "public"}}).Want(t, 201)
		}
		list := s.Get(t, "/topics", "").Want(t, 200).Array(t)
		if list[0]["name"] != "rust" || list[0]["total_projects_count"] != float64(2) {
			t.Errorf("topics ordering %v", list)
		}
		id := itoa(int64(goT["id"].(float64)))
		s.Get(t, "/topics/"+id, "").Want(t, 200)
		s.Get(t, "/topics/"+itoa(unknownID), "").Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
		// Avatar upload, served back.
		png := []byte("\x89PNG\r\n\x1a\nfake")
		r := s.Do(t, apitest.Request{Method: "PUT", Path: "/topics/" + id, Token: s.RootToken, Multipart: map[string]string{"title": "Go"},
			Files: map[string]apitest.File{"avatar": {Name: "go.png", Content: png}}}).Want(t, 200).Object(t)
		av, _ := r["avatar_url"].(string)
		if !strings.HasPrefix(av, s.URL+"/uploads/") || r["title"] != "Go" {
			t.Fatalf("avatar_url %q", av)
		}
		if got := s.Get(t, av, "").Want(t, 200); string(got.Body) != string(png) {
			t.Error("avatar content differs")
		}
		// Merge go into rust: rust keeps both projects, once each.
		rid := int64(rust["id"].(float64))
		s.Do(t, apitest.Request{Method: "POST", Path: "/topics/merge", Token: s.RootToken, JSON: map[string]any{"source_topic_id": rid, "target_topic_id": rid}}).Want(t, 400)
		m := s.Do(t, apitest.Request{Method: "POST", Path: "/topics/merge", Token: s.RootToken, JSON: map[string]any{"source_topic_id": goT["id"], "target_topic_id": rid}}).Want(t, 201).Object(t)
		if m["total_projects_count"] != float64(2) {
			t.Errorf("merged count %v", m["total_projects_count"])
		}
		s.Get(t, "/topics/"+id, "").Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/topics/" + itoa(rid), Token: s.RootToken}).Want(t, 204)
		if got := s.Get(t, "/projects?topic=rust", "").Array(t); len(got) != 0 {
			t.Errorf("projects still have a deleted topic: %d", len(got))
		}
	})
}

func TestCustomAttributes_projectsAndGroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		var g, p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "G", "path": "g", "visibility": "public"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "H", "path": "h", "visibility": "public"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "p", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "q", "visibility": "public"}}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/g/custom_attributes/tier", Token: alice.Token, JSON: map[string]any{"value": "gold"}}).Want(t, 403)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/groups/g/custom_attributes/tier", Token: s.RootToken, JSON: map[string]any{"value": "gold"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID) + "/custom_attributes/tier", Token: s.RootToken, JSON: map[string]any{"value": "gold"}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(unknownID) + "/custom_attributes/tier", Token: s.RootToken, JSON: map[string]any{"value": "x"}}).Want(t, 404).
			WantBody(t, `{"message":"404 Project Not Found"}`)
		gs := s.Get(t, "/groups?custom_attributes[tier]=gold&with_custom_attributes=true", s.RootToken).Want(t, 200).Array(t)
		if len(gs) != 1 || gs[0]["path"] != "g" || gs[0]["custom_attributes"] == nil {
			t.Errorf("groups by attribute %v", gs)
		}
		ps := s.Get(t, "/projects?custom_attributes[tier]=gold&with_custom_attributes=true", s.RootToken).Want(t, 200).Array(t)
		if len(ps) != 1 || ps[0]["id"] != float64(p.ID) || ps[0]["custom_attributes"] == nil {
			t.Errorf("projects by attribute %v", ps)
		}
		// Non-admins cannot filter by them.
		if got := s.Get(t, "/projects?custom_attributes[tier]=gold", alice.Token).Array(t); len(got) != 2 {
			t.Errorf("non-admin filter applied: %d", len(got))
		}
		s.Get(t, "/groups/g/custom_attributes", s.RootToken).Want(t, 200).WantBody(t, `[{"key":"tier","value":"gold"}]`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/g/custom_attributes/tier", Token: s.RootToken}).Want(t, 204)
	})
}
