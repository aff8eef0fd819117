package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Badges of projects and groups, as GitLab's badges API gives them
// (lib/api/badges.rb, app/models/badge.rb): fields and rendering, a
// project's list with its groups' badges, validation, pagination,
// permissions and removal with their owner.

func newBadgeGroup(t *testing.T, s *apitest.Server, path, vis string, parent int64) int64 {
	t.Helper()
	body := map[string]any{"name": path, "path": path, "visibility": vis}
	if parent != 0 {
		body["parent_id"] = parent
	}
	r := s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: body}).Want(t, http.StatusCreated)
	return int64(r.Object(t)["id"].(float64))
}

func newBadgeProject(t *testing.T, s *apitest.Server, name string, ns int64, vis string, readme bool) map[string]any {
	t.Helper()
	body := map[string]any{"name": name, "visibility": vis, "initialize_with_readme": readme}
	if ns != 0 {
		body["namespace_id"] = ns
	}
	return s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: body}).Want(t, http.StatusCreated).Object(t)
}

func addBadge(t *testing.T, s *apitest.Server, base, token string, body map[string]any) map[string]any {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: base + "/badges", Token: token, JSON: body}).Want(t, http.StatusCreated).Object(t)
}

func TestBadges_renderAndInherit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		top := newBadgeGroup(t, s, "bt", "public", 0)
		sub := newBadgeGroup(t, s, "bs", "public", top)
		p := newBadgeProject(t, s, "My Proj", sub, "public", true)
		pid := int64(p["id"].(float64))
		pbase, gbase, sbase := "/projects/"+itoa(pid), "/groups/"+itoa(top), "/groups/"+url.PathEscape("bt/bs")
		s.Do(t, apitest.Request{Method: "POST", Path: pbase + "/repository/tags", Token: s.RootToken, JSON: map[string]any{"tag_name": "v1.0", "ref": "main"}}).Want(t, http.StatusCreated)
		sha := s.Get(t, pbase+"/repository/branches/main", s.RootToken).Want(t, 200).Object(t)["commit"].(map[string]any)["id"].(string)
		u, _ := url.Parse(s.URL)
		host := u.Hostname()

		all := "%{project_path}|%{project_title}|%{project_name}|%{project_id}|%{project_namespace}|%{group_name}|%{gitlab_server}|%{gitlab_pages_domain}|%{default_branch}|%{commit_sha}|%{latest_tag}"
		want := fmt.Sprintf("bt/bs/my-proj|My Proj|my-proj|%d|bt/bs/my-proj|bt/bs|%s|%%{gitlab_pages_domain}|main|%s|v1.0", pid, host, sha)

		// A project badge: every field and its JSON type.
		b := addBadge(t, s, pbase, s.RootToken, map[string]any{"link_url": "https://x.test/" + all, "image_url": " https://img.test/%25%7Bproject_id%7D.svg ", "name": "all"})
		if b["kind"] != "project" || b["name"] != "all" || b["link_url"] != "https://x.test/"+all || b["rendered_link_url"] != "https://x.test/"+want {
			t.Errorf("project badge: %v", b)
		}
		if b["image_url"] != "https://img.test/%25%7Bproject_id%7D.svg" || b["rendered_image_url"] != fmt.Sprintf("https://img.test/%d.svg", pid) {
			t.Errorf("image urls: %v", b)
		}
		if _, ok := b["id"].(float64); !ok || len(b) != 7 {
			t.Errorf("badge fields: %v", b)
		}
		pb := int64(b["id"].(float64))

		// Group badges: on the group they render with its newest project
		// the caller sees; a group without projects renders nothing.
		gb := addBadge(t, s, gbase, s.RootToken, map[string]any{"link_url": "https://g.test/%{project_path}", "image_url": "https://g.test/i.svg"})
		if gb["kind"] != "group" || gb["name"] != nil || gb["rendered_link_url"] != "https://g.test/%{project_path}" {
			t.Errorf("group badge on a group without projects: %v", gb)
		}
		sb := addBadge(t, s, sbase, s.RootToken, map[string]any{"link_url": "https://s.test/%{project_name}", "image_url": "https://s.test/i.svg", "name": "sub"})
		if sb["rendered_link_url"] != "https://s.test/my-proj" {
			t.Errorf("subgroup badge: %v", sb)
		}

		// The project lists its own and its groups' badges, oldest
		// first, rendered for itself.
		list := s.Get(t, pbase+"/badges", "").Want(t, 200).Array(t)
		if len(list) != 3 || list[0]["kind"] != "project" || list[1]["kind"] != "group" || list[2]["kind"] != "group" {
			t.Fatalf("project list: %v", list)
		}
		if list[1]["rendered_link_url"] != "https://g.test/bt/bs/my-proj" {
			t.Errorf("group badge on the project: %v", list[1])
		}
		// The group lists its own only.
		if l := s.Get(t, gbase+"/badges", "").Want(t, 200).Array(t); len(l) != 1 || l[0]["id"] != gb["id"] {
			t.Errorf("group list: %v", l)
		}
		// A group badge is read through the project too.
		s.Get(t, pbase+"/badges/"+itoa(int64(gb["id"].(float64))), "").Want(t, 200)
		// The name filter.
		if l := s.Get(t, pbase+"/badges?name=sub", "").Want(t, 200).Array(t); len(l) != 1 || l[0]["name"] != "sub" {
			t.Errorf("name filter: %v", l)
		}
		if l := s.Get(t, pbase+"/badges?name="+strings.Repeat("x", 300), "").Want(t, 200).Array(t); len(l) != 0 {
			t.Errorf("long name filter: %v", l)
		}

		// The official client reads the same.
		c := s.Root(t)
		pbs, _, err := c.ProjectBadges.ListProjectBadges(int(pid), nil)
		if err != nil || len(pbs) != 3 || pbs[0].Kind != "project" || pbs[0].RenderedLinkURL != "https://x.test/"+want {
			t.Errorf("client project badges: %v %v", pbs, err)
		}
		gbs, _, err := c.GroupBadges.ListGroupBadges("bt/bs", nil)
		if err != nil || len(gbs) != 1 || gbs[0].Name != "sub" || gbs[0].Kind != "group" {
			t.Errorf("client group badges: %v %v", gbs, err)
		}
		one, _, err := c.ProjectBadges.GetProjectBadge(int(pid), pb)
		if err != nil || one.ImageURL != "https://img.test/%25%7Bproject_id%7D.svg" {
			t.Errorf("client project badge: %v %v", one, err)
		}

		// Render previews without storing.
		r := s.Get(t, pbase+"/badges/render?link_url="+url.QueryEscape("https://r.test/%{commit_sha}")+"&image_url="+url.QueryEscape("https://r.test/%{latest_tag}"), s.RootToken).Want(t, 200).Object(t)
		if r["rendered_link_url"] != "https://r.test/"+sha || r["rendered_image_url"] != "https://r.test/v1.0" || len(r) != 5 {
			t.Errorf("render: %v", r)
		}
		if _, ok := r["id"]; ok {
			t.Errorf("render has an id: %v", r)
		}
		s.Get(t, gbase+"/badges/render?link_url=https://a.test", s.RootToken).Want(t, 400).WantBody(t, `{"error":"image_url is missing"}`)
		s.Get(t, gbase+"/badges/render?link_url=ftp://a&image_url=", s.RootToken).Want(t, 400).
			WantBody(t, `{"message":{"link_url":["is blocked: Only allowed schemes are http, https"],"image_url":["must be a valid URL"]}}`)
		if l := s.Get(t, gbase+"/badges", "").Array(t); len(l) != 1 {
			t.Errorf("render stored a badge: %v", l)
		}

		// Updates: one field, validation, a group badge through the
		// project is not the project's to change.
		up := s.Do(t, apitest.Request{Method: "PUT", Path: pbase + "/badges/" + itoa(pb), Token: s.RootToken, JSON: map[string]any{"name": "renamed"}}).Want(t, 200).Object(t)
		if up["name"] != "renamed" || up["link_url"] != b["link_url"] {
			t.Errorf("update: %v", up)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: pbase + "/badges/" + itoa(pb), Token: s.RootToken, JSON: map[string]any{"link_url": "nope", "name": strings.Repeat("n", 256)}}).Want(t, 400).
			WantBody(t, `{"message":{"link_url":["is blocked: Only allowed schemes are http, https"],"name":["is too long (maximum is 255 characters)"]}}`)
		s.Do(t, apitest.Request{Method: "PUT", Path: pbase + "/badges/" + itoa(int64(gb["id"].(float64))), Token: s.RootToken, JSON: map[string]any{"name": "x"}}).
			Want(t, 404).WantBody(t, `{"message":"404 Badge Not Found"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: pbase + "/badges/" + itoa(int64(gb["id"].(float64))), Token: s.RootToken}).Want(t, 404)
		// A null URL is an empty one; a null name clears the name.
		s.Do(t, apitest.Request{Method: "PUT", Path: pbase + "/badges/" + itoa(pb), Token: s.RootToken, JSON: map[string]any{"image_url": nil}}).Want(t, 400).
			WantBody(t, `{"message":{"image_url":["must be a valid URL"]}}`)
		if up := s.Do(t, apitest.Request{Method: "PUT", Path: pbase + "/badges/" + itoa(pb), Token: s.RootToken, JSON: map[string]any{"name": nil}}).Want(t, 200).Object(t); up["name"] != nil {
			t.Errorf("name not cleared: %v", up)
		}
		// Anonymous writes are 401 before any parameter is read.
		s.Do(t, apitest.Request{Method: "POST", Path: pbase + "/badges"}).Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		s.Get(t, pbase+"/badges/render", "").Want(t, 400).WantBody(t, `{"error":"link_url is missing, image_url is missing"}`)
		s.Get(t, pbase+"/badges/render?link_url=https://a.test&image_url=https://a.test", "").Want(t, 401)
		// Another owner's badge id is not found.
		s.Get(t, gbase+"/badges/"+itoa(pb), s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Badge Not Found"}`)
		s.Get(t, gbase+"/badges/999999", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Badge Not Found"}`)

		// Creation needs both URLs.
		s.Do(t, apitest.Request{Method: "POST", Path: pbase + "/badges", Token: s.RootToken, JSON: map[string]any{"name": "x"}}).Want(t, 400).
			WantBody(t, `{"error":"link_url is missing, image_url is missing"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: pbase + "/badges", Token: s.RootToken, JSON: map[string]any{"link_url": "http://", "image_url": "https://" + strings.Repeat("a", 2100)}}).Want(t, 400).
			WantBody(t, `{"message":{"link_url":["is blocked: URI is invalid"],"image_url":["is too long (maximum is 2048 characters)"]}}`)

		// Deletion.
		s.Do(t, apitest.Request{Method: "DELETE", Path: pbase + "/badges/" + itoa(pb), Token: s.RootToken}).Want(t, http.StatusNoContent)
		s.Get(t, pbase+"/badges/"+itoa(pb), s.RootToken).Want(t, 404)

		// An empty repository leaves its placeholders as written.
		e := newBadgeProject(t, s, "empty", 0, "public", false)
		eb := addBadge(t, s, "/projects/"+itoa(int64(e["id"].(float64))), s.RootToken, map[string]any{"link_url": "https://e.test/%{default_branch}/%{commit_sha}/%{latest_tag}/%{group_name}", "image_url": "https://e.test/%{project_namespace}"})
		if eb["rendered_link_url"] != "https://e.test/%{default_branch}/%{commit_sha}/%{latest_tag}/%{group_name}" || eb["rendered_image_url"] != "https://e.test/root/empty" {
			t.Errorf("empty project badge: %v", eb)
		}

		// Removing the groups removes their badges and the project's.
		s.Do(t, apitest.Request{Method: "DELETE", Path: gbase, Token: s.RootToken}).Want(t, http.StatusAccepted)
		waitGone(t, s, sbase, s.RootToken)
		waitGone(t, s, pbase, s.RootToken)
		left, _, err := s.App.DB.ListBadges(context.Background(), store.BadgeFilter{ProjectID: pid, GroupIDs: []int64{top, sub}}, model.Page{Number: 1, PerPage: 100})
		if err != nil || len(left) != 0 {
			t.Errorf("badges left after their owners were removed: %v %v", left, err)
		}
	})
}

func TestBadges_pagination(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		g := newBadgeGroup(t, s, "bp", "private", 0)
		p := newBadgeProject(t, s, "pp", g, "private", false)
		base := "/projects/" + itoa(int64(p["id"].(float64)))
		for i := 0; i < 3; i++ {
			addBadge(t, s, "/groups/"+itoa(g), s.RootToken, map[string]any{"link_url": "https://a.test/g", "image_url": "https://a.test/i", "name": fmt.Sprint("g", i)})
			addBadge(t, s, base, s.RootToken, map[string]any{"link_url": "https://a.test/p", "image_url": "https://a.test/i", "name": fmt.Sprint("p", i)})
		}
		r := s.Get(t, base+"/badges?per_page=4", s.RootToken).Want(t, 200)
		if n := len(r.Array(t)); n != 4 || r.Header.Get("X-Total") != "6" || r.Header.Get("X-Total-Pages") != "2" {
			t.Errorf("page 1: %d items, headers %v", n, r.Header)
		}
		var names []string
		s.Walk(t, base+"/badges?pagination=keyset&per_page=2", s.RootToken, func(r *apitest.Response) {
			for _, b := range r.Array(t) {
				names = append(names, b["name"].(string))
			}
		})
		if got := strings.Join(names, ","); got != "g0,p0,g1,p1,g2,p2" {
			t.Errorf("keyset walk: %s", got)
		}
	})
}

func TestBadges_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		users := map[string]apitest.User{}
		for _, n := range []string{"nonmember", "guest", "reporter", "developer", "maintainer", "owner"} {
			users[n] = s.NewUser(t, "b"+n)
		}
		levels := map[string]int{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40, "owner": 50}
		tokens := map[string]string{"anonymous": "", "admin": s.RootToken}
		for n, u := range users {
			tokens[n] = u.Token
		}
		principals := []string{"anonymous", "nonmember", "guest", "reporter", "developer", "maintainer", "owner", "admin"}
		type target struct{ name, base string }
		var targets []target
		for _, vis := range []string{"public", "private"} {
			g := newBadgeGroup(t, s, "bperm"+vis, vis, 0)
			p := newBadgeProject(t, s, "p"+vis, g, vis, false)
			for n, lvl := range levels {
				s.Do(t, apitest.Request{Method: "POST", Path: "/groups/" + itoa(g) + "/members", Token: s.RootToken, JSON: map[string]any{"user_id": users[n].ID, "access_level": lvl}}).Want(t, http.StatusCreated)
			}
			targets = append(targets, target{"group " + vis, "/groups/" + itoa(g)}, target{"project " + vis, "/projects/" + itoa(int64(p["id"].(float64)))})
		}
		ids := map[string]string{}
		for _, tg := range targets {
			ids[tg.base] = itoa(int64(addBadge(t, s, tg.base, s.RootToken, map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"})["id"].(float64)))
		}
		check := func(action, grid string, do func(token string, tg target) int) {
			t.Helper()
			want := snipGrid(t, grid)
			for _, who := range principals {
				for i, tg := range targets {
					if got := do(tokens[who], tg); got != want[who][i] {
						t.Errorf("%s as %s on %s: %d; want %d", action, who, tg.name, got, want[who][i])
					}
				}
			}
		}
		// Columns: public group, its project, private group, its project.
		check("list", `
			anonymous  200 200 404 404
			nonmember  200 200 404 404
			guest      200 200 200 200
			reporter   200 200 200 200
			developer  200 200 200 200
			maintainer 200 200 200 200
			owner      200 200 200 200
			admin      200 200 200 200`, func(tok string, tg target) int { return s.Get(t, tg.base+"/badges", tok).Status })
		check("get", `
			anonymous  200 200 404 404
			nonmember  200 200 404 404
			guest      200 200 200 200
			reporter   200 200 200 200
			developer  200 200 200 200
			maintainer 200 200 200 200
			owner      200 200 200 200
			admin      200 200 200 200`, func(tok string, tg target) int { return s.Get(t, tg.base+"/badges/"+ids[tg.base], tok).Status })
		admin := `
			anonymous  401 401 401 401
			nonmember  403 403 404 404
			guest      403 403 403 403
			reporter   403 403 403 403
			developer  403 403 403 403
			maintainer 403 200 403 200
			owner      200 200 200 200
			admin      200 200 200 200`
		check("render", admin, func(tok string, tg target) int {
			return s.Get(t, tg.base+"/badges/render?link_url=https://a.test&image_url=https://a.test", tok).Status
		})
		check("update", admin, func(tok string, tg target) int {
			return s.Do(t, apitest.Request{Method: "PUT", Path: tg.base + "/badges/" + ids[tg.base], Token: tok, JSON: map[string]any{"name": "n"}}).Status
		})
		created := strings.NewReplacer("200", "201").Replace(admin)
		check("create", created, func(tok string, tg target) int {
			return s.Do(t, apitest.Request{Method: "POST", Path: tg.base + "/badges", Token: tok, JSON: map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"}}).Status
		})
		// Anonymous writes are 401 before the owner is looked up.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/999999/badges", JSON: map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"}}).Want(t, 401)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups/999999/badges", Token: s.RootToken, JSON: map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"}}).
			Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		s.Get(t, "/projects/999999/badges", s.RootToken).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		deleted := strings.NewReplacer("200", "204").Replace(admin)
		check("delete", deleted, func(tok string, tg target) int {
			if tok == s.RootToken || tok == tokens["owner"] || (tok == tokens["maintainer"] && strings.HasPrefix(tg.name, "project")) {
				// Each deleter gets a badge of its own to delete.
				id := itoa(int64(addBadge(t, s, tg.base, s.RootToken, map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"})["id"].(float64)))
				return s.Do(t, apitest.Request{Method: "DELETE", Path: tg.base + "/badges/" + id, Token: tok}).Status
			}
			return s.Do(t, apitest.Request{Method: "DELETE", Path: tg.base + "/badges/" + ids[tg.base], Token: tok}).Status
		})
	})
}

func TestBadges_concurrentEdits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		g := newBadgeGroup(t, s, "bc", "public", 0)
		base := "/groups/" + itoa(g)
		id := itoa(int64(addBadge(t, s, base, s.RootToken, map[string]any{"link_url": "https://a.test", "image_url": "https://a.test/i"})["id"].(float64)))
		const n = 12
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses <- s.Do(t, apitest.Request{Method: "PUT", Path: base + "/badges/" + id, Token: s.RootToken, JSON: map[string]any{"name": fmt.Sprint("n", i)}}).Status
			}(i)
		}
		wg.Wait()
		close(statuses)
		ok := 0
		for st := range statuses {
			switch st {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
			default:
				t.Errorf("concurrent edit: status %d", st)
			}
		}
		if ok == 0 {
			t.Errorf("no edit won")
		}
		if b := s.Get(t, base+"/badges/"+id, "").Want(t, 200).Object(t); !strings.HasPrefix(b["name"].(string), "n") {
			t.Errorf("after the edits: %v", b)
		}
	})
}
