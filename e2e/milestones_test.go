package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

// Milestones end to end: the same rows under /projects/:id/milestones and
// /groups/:id/milestones — GitLab's entity, iids per parent, validations
// and their messages, filters, hierarchy rules, permissions, pagination.

// msTree makes, as owner, a group "top" (visibility vis), a subgroup
// "top/sub" and a project "top/sub/app".
func msTree(t *testing.T, s *apitest.Server, owner apitest.User, vis string) (top, sub, project int64) {
	t.Helper()
	var g, sg, p struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
		JSON: map[string]any{"name": "top", "path": "top", "visibility": vis}}).Want(t, 201).JSON(t, &g)
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
		JSON: map[string]any{"name": "sub", "path": "sub", "parent_id": g.ID, "visibility": vis}}).Want(t, 201).JSON(t, &sg)
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
		JSON: map[string]any{"name": "app", "namespace_id": sg.ID, "visibility": vis}}).Want(t, 201).JSON(t, &p)
	return g.ID, sg.ID, p.ID
}

func msCreate(t *testing.T, s *apitest.Server, token, base string, body map[string]any) map[string]any {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, JSON: body}).Want(t, 201).Object(t)
}

func msTitles(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var out []string
	for _, m := range r.Array(t) {
		out = append(out, m["title"].(string))
	}
	return strings.Join(out, ",")
}

func TestMilestones_crud(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		top, _, project := msTree(t, s, owner, "private")
		// Titles are unique across the hierarchy: the group's and the
		// project's differ by a prefix.
		for _, c := range []struct {
			base, idKey, web, pre string
			id                    int64
		}{
			{"/groups/" + itoa(top) + "/milestones", "group_id", s.URL + "/groups/top/-/milestones/", "g", top},
			{"/projects/" + itoa(project) + "/milestones", "project_id", s.URL + "/top/sub/app/-/milestones/", "p", project},
		} {
			do := func(method, path string, body map[string]any) *apitest.Response {
				return s.Do(t, apitest.Request{Method: method, Path: c.base + path, Token: owner.Token, JSON: body})
			}
			s.Get(t, c.base, owner.Token).Want(t, 200).WantBody(t, `[]`)

			m := msCreate(t, s, owner.Token, c.base, map[string]any{"title": "  " + c.pre + "1.0 ", "description": "first",
				"start_date": "2000-01-01", "due_date": "2000-02-01"})
			keys := []string{"id", "iid", c.idKey, "title", "description", "state", "created_at", "updated_at", "due_date",
				"start_date", "expired", "web_url"}
			if len(m) != len(keys) {
				t.Errorf("keys %v; want %v", m, keys)
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					t.Errorf("no %s in %v", k, m)
				}
			}
			if m["iid"] != 1.0 || m[c.idKey] != float64(c.id) || m["title"] != c.pre+"1.0" || m["description"] != "first" ||
				m["state"] != "active" || m["due_date"] != "2000-02-01" || m["start_date"] != "2000-01-01" ||
				m["expired"] != true || m["web_url"] != c.web+"1" {
				t.Errorf("created %v", m)
			}
			if ts, _ := m["created_at"].(string); len(ts) != len("2006-01-02T15:04:05.000Z") {
				t.Errorf("created_at %q", m["created_at"])
			}
			id := itoa(int64(m["id"].(float64)))

			m2 := msCreate(t, s, owner.Token, c.base, map[string]any{"title": c.pre + "2.0"})
			if m2["iid"] != 2.0 || m2["description"] != nil || m2["due_date"] != nil || m2["start_date"] != nil ||
				m2["expired"] != false || m2["web_url"] != c.web+"2" {
				t.Errorf("second %v", m2)
			}
			id2 := itoa(int64(m2["id"].(float64)))
			if got := s.Get(t, c.base+"/"+id, owner.Token).Want(t, 200).Object(t); got["title"] != c.pre+"1.0" {
				t.Errorf("get %v", got)
			}

			// Updates: attributes, dates cleared, state events.
			up := do("PUT", "/"+id, map[string]any{"title": c.pre + "1.1", "description": "", "due_date": "2999-01-01"}).Want(t, 200).Object(t)
			if up["title"] != c.pre+"1.1" || up["description"] != "" || up["due_date"] != "2999-01-01" || up["expired"] != false {
				t.Errorf("updated %v", up)
			}
			up = do("PUT", "/"+id, map[string]any{"state_event": "close", "start_date": nil}).Want(t, 200).Object(t)
			if up["state"] != "closed" || up["start_date"] != nil {
				t.Errorf("closed %v", up)
			}
			do("PUT", "/"+id, map[string]any{"state_event": "close"}).Want(t, 200) // closed already: no change
			up = do("PUT", "/"+id, map[string]any{"state_event": "activate", "title": "   "}).Want(t, 200).Object(t)
			if up["state"] != "active" || up["title"] != c.pre+"1.1" {
				t.Errorf("activated %v", up)
			}

			// Errors, in GitLab's shapes.
			do("POST", "", map[string]any{"description": "x"}).Want(t, 400).WantBody(t, `{"error":"title is missing"}`)
			do("POST", "", map[string]any{"title": " "}).Want(t, 400).
				WantBody(t, `{"message":"Failed to create milestone {:title=>[\"can't be blank\"]}"}`)
			do("POST", "", map[string]any{"title": c.pre + "1.1"}).Want(t, 400).
				WantBody(t, `{"message":"Failed to create milestone {:title=>[\"already being used for another group or project milestone.\"]}"}`)
			do("POST", "", map[string]any{"title": c.pre + "d", "start_date": "2020-01-02", "due_date": "2020-01-02"}).Want(t, 400).
				WantBody(t, `{"message":"Failed to create milestone {:due_date=>[\"must be greater than start date\"]}"}`)
			do("POST", "", map[string]any{"title": strings.Repeat("t", 256)}).Want(t, 400).
				WantBody(t, `{"message":"Failed to create milestone {:title=>[\"is too long (maximum is 255 characters)\"]}"}`)
			do("POST", "", map[string]any{"title": c.pre + "d", "due_date": "2020-13-45"}).Want(t, 400).WantBody(t, `{"error":"due_date is invalid"}`)
			do("POST", "", map[string]any{"title": c.pre + "d", "start_date": "soon"}).Want(t, 400).WantBody(t, `{"error":"start_date is invalid"}`)
			do("PUT", "/"+id, map[string]any{"start_date": "3000-01-01"}).Want(t, 400).
				WantBody(t, `{"message":"Failed to update milestone {:due_date=>[\"must be greater than start date\"]}"}`)
			do("PUT", "/"+id2, map[string]any{"title": c.pre + "1.1"}).Want(t, 400).
				WantBody(t, `{"message":"Failed to update milestone {:title=>[\"already being used for another group or project milestone.\"]}"}`)
			do("PUT", "/"+id, map[string]any{}).Want(t, 400).
				WantBody(t, `{"error":"title, description, start_date, due_date, state_event are missing, at least one parameter must be provided"}`)
			do("PUT", "/"+id, map[string]any{"state_event": "reopen"}).Want(t, 400).
				WantBody(t, `{"error":"state_event does not have a valid value"}`)
			s.Get(t, c.base+"?state=open", owner.Token).Want(t, 400).WantBody(t, `{"error":"state does not have a valid value"}`)
			s.Get(t, c.base+"?include_ancestors=true&include_parent_milestones=true", owner.Token).Want(t, 400).
				WantBody(t, `{"error":"include_ancestors, include_parent_milestones are mutually exclusive"}`)
			s.Get(t, c.base+"?iids[]=x", owner.Token).Want(t, 400).WantBody(t, `{"error":"iids is invalid"}`)
			s.Get(t, c.base+"?updated_after=yesterday", owner.Token).Want(t, 400).WantBody(t, `{"error":"updated_after is invalid"}`)
			s.Get(t, c.base+"/"+itoa(s.AbsentID(t)), owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)

			// Issues and merge requests of a milestone: none in Quarry.
			r := s.Get(t, c.base+"/"+id+"/issues", owner.Token).Want(t, 200).WantBody(t, `[]`)
			if r.Header.Get("X-Total") != "0" {
				t.Errorf("X-Total %q", r.Header.Get("X-Total"))
			}
			s.Get(t, c.base+"/"+id+"/merge_requests", owner.Token).Want(t, 200).WantBody(t, `[]`)
			s.Get(t, c.base+"/"+itoa(s.AbsentID(t))+"/merge_requests", owner.Token).Want(t, 404)

			// Delete; the iid is never handed out again.
			do("DELETE", "/"+id2, nil).Want(t, 204)
			do("DELETE", "/"+id2, nil).Want(t, 404).WantBody(t, `{"message":"404 Not found"}`)
			if m3 := msCreate(t, s, owner.Token, c.base, map[string]any{"title": c.pre + "3.0"}); m3["iid"] != 3.0 {
				t.Errorf("iid after delete %v", m3["iid"])
			}
		}
		// A milestone is reached only under its own parent.
		var gm, pm []map[string]any
		gm = s.Get(t, fmt.Sprintf("/groups/%d/milestones", top), owner.Token).Want(t, 200).Array(t)
		pm = s.Get(t, fmt.Sprintf("/projects/%d/milestones", project), owner.Token).Want(t, 200).Array(t)
		s.Get(t, fmt.Sprintf("/projects/%d/milestones/%d", project, int64(gm[0]["id"].(float64))), owner.Token).Want(t, 404)
		s.Get(t, fmt.Sprintf("/groups/%d/milestones/%d", top, int64(pm[0]["id"].(float64))), owner.Token).Want(t, 404)
		s.Get(t, "/groups/nope/milestones", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		s.Get(t, "/projects/nope%2Fnope/milestones", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		// By full path too.
		s.Get(t, "/groups/top%2Fsub/milestones", owner.Token).Want(t, 200)
		if got := msTitles(t, s.Get(t, "/projects/top%2Fsub%2Fapp/milestones", owner.Token).Want(t, 200)); got != "p1.1,p3.0" {
			t.Errorf("project list %q", got)
		}
	})
}

// TestMilestones_hierarchy: titles are unique across a group's ancestors,
// descendants and their projects; lists take in ancestors when asked.
func TestMilestones_hierarchy(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		top, sub, project := msTree(t, s, owner, "private")
		gb, sb, pb := fmt.Sprintf("/groups/%d/milestones", top), fmt.Sprintf("/groups/%d/milestones", sub), fmt.Sprintf("/projects/%d/milestones", project)
		taken := `{"message":"Failed to create milestone {:title=>[\"already being used for another group or project milestone.\"]}"}`
		msCreate(t, s, owner.Token, gb, map[string]any{"title": "top-1", "due_date": "2030-01-10"})
		msCreate(t, s, owner.Token, sb, map[string]any{"title": "sub-1", "due_date": "2030-01-05"})
		msCreate(t, s, owner.Token, pb, map[string]any{"title": "app-1"})
		for _, c := range []struct{ base, title string }{
			{pb, "top-1"}, {pb, "sub-1"}, {sb, "top-1"}, {sb, "app-1"}, {gb, "sub-1"}, {gb, "app-1"},
		} {
			s.Do(t, apitest.Request{Method: "POST", Path: c.base, Token: owner.Token, JSON: map[string]any{"title": c.title}}).
				Want(t, 400).WantBody(t, taken)
		}
		// Another hierarchy may use the same title.
		var other struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "other", "path": "other", "visibility": "private"}}).Want(t, 201).JSON(t, &other)
		msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", other.ID), map[string]any{"title": "top-1"})
		// Titles lose their markup, as GitLab's sanitize_title makes them.
		if m := msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", other.ID),
			map[string]any{"title": " <script>x</script><b>html</b> &amp; co "}); m["title"] != "html & co" {
			t.Errorf("sanitized title %q", m["title"])
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/milestones", other.ID), Token: owner.Token,
			JSON: map[string]any{"title": "<i></i>"}}).Want(t, 400).
			WantBody(t, `{"message":"Failed to create milestone {:title=>[\"can't be blank\"]}"}`)

		// Lists: by due date (none last); ancestors when asked.
		for _, c := range []struct{ path, want string }{
			{pb, "app-1"},
			{pb + "?include_parent_milestones=true", "sub-1,top-1,app-1"},
			{pb + "?include_ancestors=true", "sub-1,top-1,app-1"},
			{sb, "sub-1"},
			{sb + "?include_ancestors=true", "sub-1,top-1"},
			{gb + "?include_descendants=true", "sub-1,top-1"},
			{gb, "top-1"},
		} {
			if got := msTitles(t, s.Get(t, c.path, owner.Token).Want(t, 200)); got != c.want {
				t.Errorf("%s: %q; want %q", c.path, got, c.want)
			}
		}
		// Descendants count only where the caller sees them: a private
		// subgroup of a public group is the members' alone.
		var pub, hidden struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "pub", "path": "pub", "visibility": "public"}}).Want(t, 201).JSON(t, &pub)
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
			JSON: map[string]any{"name": "hidden", "path": "hidden", "parent_id": pub.ID, "visibility": "private"}}).Want(t, 201).JSON(t, &hidden)
		msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", pub.ID), map[string]any{"title": "pub-1"})
		msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", hidden.ID), map[string]any{"title": "hidden-1"})
		stranger := s.NewUser(t, "stranger")
		all := fmt.Sprintf("/groups/%d/milestones?include_descendants=true", pub.ID)
		if got := msTitles(t, s.Get(t, all, stranger.Token).Want(t, 200)); got != "pub-1" {
			t.Errorf("stranger's descendants list %q", got)
		}
		if got := msTitles(t, s.Get(t, all, owner.Token).Want(t, 200)); got != "pub-1,hidden-1" && got != "hidden-1,pub-1" {
			t.Errorf("owner's descendants list %q", got)
		}
		s.Get(t, fmt.Sprintf("/groups/%d/milestones", hidden.ID), stranger.Token).Want(t, 404)
	})
}

func TestMilestones_filtersAndPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		top, _, project := msTree(t, s, owner, "private")
		for _, base := range []string{fmt.Sprintf("/groups/%d/milestones", top), fmt.Sprintf("/projects/%d/milestones", project)} {
			prefix := "g"
			if strings.HasPrefix(base, "/projects") {
				prefix = "p"
			}
			ids := map[string]string{}
			for i, m := range []map[string]any{
				{"title": prefix + "-alpha", "description": "Release notes", "start_date": "2030-01-01", "due_date": "2030-01-31"},
				{"title": prefix + "-beta", "due_date": "2030-03-31"},
				{"title": prefix + "-gamma"},
				{"title": prefix + "-delta", "start_date": "2030-02-01"},
			} {
				got := msCreate(t, s, owner.Token, base, m)
				ids[m["title"].(string)] = itoa(int64(got["id"].(float64)))
				if got["iid"] != float64(i+1) {
					t.Errorf("iid %v", got["iid"])
				}
			}
			s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + ids[prefix+"-beta"], Token: owner.Token,
				JSON: map[string]any{"state_event": "close"}}).Want(t, 200)
			q := func(query string) string {
				return msTitles(t, s.Get(t, base+query, owner.Token).Want(t, 200))
			}
			pf := func(names ...string) string {
				for i := range names {
					names[i] = prefix + "-" + names[i]
				}
				return strings.Join(names, ",")
			}
			for _, c := range []struct{ query, want string }{
				{"", pf("alpha", "beta", "gamma", "delta")},
				{"?state=active", pf("alpha", "gamma", "delta")},
				{"?state=closed", pf("beta")},
				{"?state=all", pf("alpha", "beta", "gamma", "delta")},
				{"?iids[]=1&iids[]=3", pf("alpha", "gamma")},
				{"?iids=2,4", pf("beta", "delta")},
				{"?title=" + prefix + "-gamma", pf("gamma")},
				{"?title=gamma", ""},
				{"?search=RELEASE", pf("alpha")},
				{"?search=ta", ""}, // shorter than 3: only a whole title or description
				{"?search=elt", pf("delta")},
				{"?updated_after=2000-01-01T00:00:00Z", pf("alpha", "beta", "gamma", "delta")},
				{"?updated_before=2000-01-01T00:00:00Z", ""},
			} {
				if got := q(c.query); got != c.want {
					t.Errorf("%s%s: %q; want %q", base, c.query, got, c.want)
				}
			}
			if prefix == "g" {
				for _, c := range []struct{ query, want string }{
					// Open-ended dates reach as far as they go (GitLab's
					// within_timeframe).
					{"?containing_date=2030-01-15", pf("alpha", "beta")},
					{"?containing_date=2030-02-15", pf("beta", "delta")},
					{"?containing_date=2030-03-01", pf("beta", "delta")},
					{"?start_date=2030-01-20&end_date=2030-02-05", pf("alpha", "beta", "delta")},
					{"?search_title=alp", pf("alpha")},
					{"?search_title=notes", ""},
				} {
					if got := q(c.query); got != c.want {
						t.Errorf("%s%s: %q; want %q", base, c.query, got, c.want)
					}
				}
			}
			// Offset pages with GitLab's headers.
			r := s.Get(t, base+"?per_page=3", owner.Token).Want(t, 200)
			if n := len(r.Array(t)); n != 3 || r.Header.Get("X-Total") != "4" || r.Header.Get("X-Total-Pages") != "2" ||
				r.Header.Get("X-Next-Page") != "2" {
				t.Errorf("page 1: %d items, headers %v", n, r.Header)
			}
			if !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
				t.Errorf("Link %q", r.Header.Get("Link"))
			}
			if got := q("?per_page=3&page=2"); got != pf("delta") {
				t.Errorf("page 2 %q", got)
			}
		}
	})
}

// TestMilestones_permissions: reading needs the project or group (a
// signed-in caller); writing needs Reporter or more.
func TestMilestones_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		tokens := map[string]string{"anonymous": "", "non-member": s.NewUser(t, "stranger").Token, "owner": owner.Token, "admin": s.RootToken}
		type parent struct{ base, members string }
		parents := map[string]parent{}
		for _, vis := range []string{"public", "private"} {
			var g, p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: owner.Token,
				JSON: map[string]any{"name": "g-" + vis, "path": "g-" + vis, "visibility": vis}}).Want(t, 201).JSON(t, &g)
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token,
				JSON: map[string]any{"name": "p-" + vis, "namespace_id": g.ID, "visibility": vis}}).Want(t, 201).JSON(t, &p)
			parents["group "+vis] = parent{fmt.Sprintf("/groups/%d/milestones", g.ID), fmt.Sprintf("/groups/%d/members", g.ID)}
			parents["project "+vis] = parent{fmt.Sprintf("/projects/%d/milestones", p.ID), fmt.Sprintf("/projects/%d/members", p.ID)}
		}
		for role, lvl := range map[string]int{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40} {
			u := s.NewUser(t, role)
			tokens[role] = u.Token
			for _, vis := range []string{"public", "private"} {
				// Members of the group, and so of its project.
				s.Do(t, apitest.Request{Method: "POST", Path: parents["group "+vis].members, Token: owner.Token,
					JSON: map[string]any{"user_id": u.ID, "access_level": lvl}}).Want(t, 201)
			}
		}
		fixture := map[string]string{}
		for name, p := range parents {
			fixture[name] = itoa(int64(msCreate(t, s, owner.Token, p.base, map[string]any{"title": "fixed " + name})["id"].(float64)))
		}
		n := 0
		act := func(action, token string, p parent, id string) int {
			n++
			switch action {
			case "list":
				return s.Get(t, p.base, token).Status
			case "get":
				return s.Get(t, p.base+"/"+id, token).Status
			case "create":
				return s.Do(t, apitest.Request{Method: "POST", Path: p.base, Token: token, JSON: map[string]any{"title": "m" + itoa(int64(n))}}).Status
			case "update":
				return s.Do(t, apitest.Request{Method: "PUT", Path: p.base + "/" + id, Token: token, JSON: map[string]any{"description": "d"}}).Status
			case "delete":
				m := msCreate(t, s, owner.Token, p.base, map[string]any{"title": "del" + itoa(int64(n))})
				return s.Do(t, apitest.Request{Method: "DELETE", Path: p.base + "/" + itoa(int64(m["id"].(float64))), Token: token}).Status
			}
			panic(action)
		}
		// Columns: public, private (the same for groups and projects).
		read := map[string][2]int{"anonymous": {401, 401}, "non-member": {200, 404}, "guest": {200, 200}, "reporter": {200, 200},
			"developer": {200, 200}, "maintainer": {200, 200}, "owner": {200, 200}, "admin": {200, 200}}
		write := map[string][2]int{"anonymous": {401, 401}, "non-member": {403, 404}, "guest": {403, 403}, "reporter": {0, 0},
			"developer": {0, 0}, "maintainer": {0, 0}, "owner": {0, 0}, "admin": {0, 0}}
		ok := map[string]int{"list": 200, "get": 200, "create": 201, "update": 200, "delete": 204}
		for _, kind := range []string{"group", "project"} {
			for i, vis := range []string{"public", "private"} {
				name := kind + " " + vis
				for role, token := range tokens {
					for _, action := range []string{"list", "get", "create", "update", "delete"} {
						want := read[role][i]
						if action != "list" && action != "get" {
							want = write[role][i]
						}
						if want == 0 {
							want = ok[action]
						}
						if got := act(action, token, parents[name], fixture[name]); got != want {
							t.Errorf("%s as %s on %s: %d; want %d", action, role, name, got, want)
						}
					}
				}
			}
		}
		// Archived projects take no milestone writes.
		pub := parents["project public"]
		pid := strings.Split(pub.base, "/")[2]
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + pid + "/archive", Token: owner.Token}).Want(t, 201)
		s.Do(t, apitest.Request{Method: "POST", Path: pub.base, Token: owner.Token, JSON: map[string]any{"title": "late"}}).Want(t, 403)
		s.Get(t, pub.base, owner.Token).Want(t, 200)
		// Issues and merge requests both disabled: no milestones (project_policy.rb).
		priv := parents["project private"]
		privID := strings.Split(priv.base, "/")[2]
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + privID, Token: owner.Token,
			JSON: map[string]any{"issues_access_level": "disabled"}}).Want(t, 200)
		s.Get(t, priv.base, owner.Token).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + privID, Token: owner.Token,
			JSON: map[string]any{"merge_requests_access_level": "disabled"}}).Want(t, 200)
		s.Get(t, priv.base, owner.Token).Want(t, 403)
		s.Get(t, priv.base, s.RootToken).Want(t, 403)
		s.Do(t, apitest.Request{Method: "POST", Path: priv.base, Token: owner.Token, JSON: map[string]any{"title": "off"}}).Want(t, 403)
		// A read_api token reads, but does not write.
		ro := s.NewToken(t, owner.ID, "read_api")
		s.Get(t, pub.base, ro).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: parents["group public"].base, Token: ro,
			JSON: map[string]any{"title": "ro"}}).Want(t, http.StatusForbidden)
	})
}

// TestMilestones_removal: a group's milestones are listed for its export
// with their ids; deleting a project or a group removes its milestones
// (and its subgroups').
func TestMilestones_removal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		top, sub, project := msTree(t, s, owner, "private")
		id := func(m map[string]any) int64 { return int64(m["id"].(float64)) }
		g1 := msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", top), map[string]any{"title": "g1"})
		g2 := msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", top), map[string]any{"title": "g2", "due_date": "2030-01-01"})
		sm := msCreate(t, s, owner.Token, fmt.Sprintf("/groups/%d/milestones", sub), map[string]any{"title": "s1"})
		pm := msCreate(t, s, owner.Token, fmt.Sprintf("/projects/%d/milestones", project), map[string]any{"title": "p1"})

		list, err := s.App.Milestones.GroupMilestones(ctx(t), top)
		if err != nil || len(list) != 2 || list[0].ID != id(g1) || list[1].ID != id(g2) || list[1].DueDate != "2030-01-01" ||
			list[0].GroupID != top || list[0].IID != 1 {
			t.Fatalf("group milestones %+v, %v", list, err)
		}

		gone := func(what string, mid int64) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); ; {
				_, err := s.App.DB.MilestoneByID(ctx(t), mid)
				if model.KindOf(err) == model.KindNotFound {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s milestone %d still there: %v", what, mid, err)
				}
				sleep()
			}
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(project), Token: owner.Token}).Want(t, http.StatusAccepted)
		gone("project", id(pm))
		if _, err := s.App.DB.MilestoneByID(ctx(t), id(g1)); err != nil {
			t.Fatalf("group milestone lost with the project: %v", err)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/groups/" + itoa(top), Token: owner.Token}).Want(t, http.StatusAccepted)
		gone("group", id(g1))
		gone("group", id(g2))
		gone("subgroup", id(sm))
	})
}

// TestMilestones_concurrent: racing writers of one parent. One title
// wins; iids are never shared; concurrent updates either land or get a
// 409, never a 5xx.
func TestMilestones_concurrent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		_, _, project := msTree(t, s, owner, "private")
		base := fmt.Sprintf("/projects/%d/milestones", project)
		const n = 8
		run := func(f func(i int) int) map[int]int {
			statuses := make(chan int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses <- f(i)
				}()
			}
			wg.Wait()
			close(statuses)
			count := map[int]int{}
			for st := range statuses {
				count[st]++
			}
			return count
		}
		same := run(func(int) int {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token, JSON: map[string]any{"title": "same"}}).Status
		})
		if same[201] != 1 || same[400] != n-1 {
			t.Errorf("one title, racing creates: %v", same)
		}
		distinct := run(func(i int) int {
			return s.Do(t, apitest.Request{Method: "POST", Path: base, Token: owner.Token,
				JSON: map[string]any{"title": "t" + itoa(int64(i))}}).Status
		})
		if distinct[201] != n {
			t.Errorf("distinct titles, racing creates: %v", distinct)
		}
		seen := map[float64]bool{}
		for _, m := range s.Get(t, base+"?per_page=100", owner.Token).Want(t, 200).Array(t) {
			if seen[m["iid"].(float64)] {
				t.Errorf("iid %v twice", m["iid"])
			}
			seen[m["iid"].(float64)] = true
		}
		if len(seen) != n+1 {
			t.Errorf("%d milestones; want %d", len(seen), n+1)
		}
		target := itoa(int64(msCreate(t, s, owner.Token, base, map[string]any{"title": "target"})["id"].(float64)))
		updates := run(func(i int) int {
			return s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + target, Token: owner.Token,
				JSON: map[string]any{"description": "d" + itoa(int64(i))}}).Status
		})
		if updates[200] == 0 || updates[200]+updates[409] != n {
			t.Errorf("racing updates: %v", updates)
		}
	})
}
