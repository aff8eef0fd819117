package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
)

// Labels of projects and groups (GitLab's doc/api/labels.md and
// group_labels.md): shapes, validation in GitLab's words, conflicts,
// lookups by id and by URL-encoded name, priorities, subscriptions,
// promotion, counts, pagination and permissions.

type labelJSON struct {
	ID                     int64   `json:"id"`
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	TextColor              string  `json:"text_color"`
	Description            *string `json:"description"`
	DescriptionHTML        *string `json:"description_html"`
	Subscribed             bool    `json:"subscribed"`
	Priority               *int    `json:"priority"`
	IsProjectLabel         *bool   `json:"is_project_label"`
	OpenMergeRequestsCount *int    `json:"open_merge_requests_count"`
	OpenIssuesCount        *int    `json:"open_issues_count"`
}

func lblDo(t *testing.T, s *apitest.Server, method, path, token string, body map[string]any) *apitest.Response {
	t.Helper()
	r := apitest.Request{Method: method, Path: path, Token: token}
	if body != nil {
		r.JSON = body
	}
	return s.Do(t, r)
}

func lblCreate(t *testing.T, s *apitest.Server, base, token string, body map[string]any) labelJSON {
	t.Helper()
	var l labelJSON
	lblDo(t, s, "POST", base, token, body).Want(t, http.StatusCreated).JSON(t, &l)
	return l
}

func lblGroupMember(t *testing.T, s *apitest.Server, groupID int64, u apitest.User, level int) {
	t.Helper()
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", groupID), Token: s.RootToken,
		JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
}

func TestLabels_project(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lblowner")
		gid, _ := agGroup(t, s, owner.Token, "lblg", 0)
		p := agProject(t, s, owner.Token, "lblp", gid)
		base := fmt.Sprintf("/projects/%d/labels", p.ID)

		// Raw shape and JSON types.
		r := lblDo(t, s, "POST", base, owner.Token, map[string]any{"name": "kind/bug", "color": "#FF0000", "description": "Bugs <here>", "priority": 3}).
			Want(t, http.StatusCreated)
		obj := r.Object(t)
		for k, want := range map[string]string{"id": "float64", "name": "string", "color": "string", "text_color": "string",
			"description": "string", "description_html": "string", "subscribed": "bool", "priority": "float64", "is_project_label": "bool"} {
			if got := fmt.Sprintf("%T", obj[k]); got != want {
				t.Errorf("%s is %s (%v); want %s", k, got, obj[k], want)
			}
		}
		if _, ok := obj["open_issues_count"]; ok {
			t.Errorf("counts without with_counts: %v", obj)
		}
		var bug labelJSON
		r.JSON(t, &bug)
		if bug.Name != "kind/bug" || bug.Color != "#FF0000" || bug.TextColor != "#FFFFFF" || *bug.Priority != 3 || !*bug.IsProjectLabel ||
			!strings.Contains(*bug.DescriptionHTML, "Bugs &lt;here&gt;") {
			t.Fatalf("created %+v", bug)
		}

		// Colour names become hex; a light colour gets dark text.
		light := lblCreate(t, s, base, owner.Token, map[string]any{"name": "light", "color": "yellow"})
		if light.Color != "#ffff00" || light.TextColor != "#1F1E24" || light.Description != nil || light.DescriptionHTML != nil || light.Priority != nil {
			t.Fatalf("light %+v", light)
		}

		// Bad input, in GitLab's words.
		for _, c := range []struct {
			body         map[string]any
			status       int
			wantContains string
		}{
			{map[string]any{"color": "#fff"}, 400, `{"error":"name is missing"}`},
			{map[string]any{"name": "x"}, 400, `{"error":"color is missing"}`},
			{map[string]any{"name": "x", "color": "notacolour"}, 400, `{"message":{"color":["must be a valid color code"]}}`},
			{map[string]any{"name": "x", "color": "#12345"}, 400, `{"message":{"color":["must be a valid color code"]}}`},
			{map[string]any{"name": "a,b", "color": "#fff"}, 400, `{"message":{"title":["is invalid"]}}`},
			{map[string]any{"name": "  ", "color": "#fff"}, 400, `{"message":{"title":["can't be blank"]}}`},
			{map[string]any{"name": strings.Repeat("x", 256), "color": "#fff"}, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`},
			{map[string]any{"name": "x", "color": "#fff", "priority": -1}, 400, `{"message":{"priority":["must be greater than or equal to 0"]}}`},
			{map[string]any{"name": "x", "color": "#fff", "priority": "high"}, 400, `{"error":"priority is invalid"}`},
			{map[string]any{"name": "kind/bug", "color": "#fff"}, 409, `{"message":"Label already exists"}`},
		} {
			lblDo(t, s, "POST", base, owner.Token, c.body).Want(t, c.status).WantBody(t, c.wantContains)
		}

		// By id and by URL-encoded name.
		for _, ref := range []string{itoa(bug.ID), url.PathEscape("kind/bug")} {
			var got labelJSON
			lblDo(t, s, "GET", base+"/"+ref, owner.Token, nil).Want(t, 200).JSON(t, &got)
			if got.ID != bug.ID {
				t.Fatalf("GET %s: %+v", ref, got)
			}
		}
		lblDo(t, s, "GET", base+"/nope", owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Label Not Found"}`)

		// Update: name, colour, description, priority (null removes it).
		var up labelJSON
		lblDo(t, s, "PUT", base+"/"+itoa(bug.ID), owner.Token, map[string]any{"new_name": "bug", "color": "blue", "description": "d"}).
			Want(t, 200).JSON(t, &up)
		if up.Name != "bug" || up.Color != "#0000ff" || *up.Description != "d" || *up.Priority != 3 {
			t.Fatalf("updated %+v", up)
		}
		lblDo(t, s, "PUT", base+"/bug", owner.Token, map[string]any{"priority": nil}).Want(t, 200).JSON(t, &up)
		if up.Priority != nil {
			t.Fatalf("priority not removed: %+v", up)
		}
		lblDo(t, s, "PUT", base+"/bug", owner.Token, map[string]any{"priority": 7}).Want(t, 200).JSON(t, &up)
		if up.Priority == nil || *up.Priority != 7 {
			t.Fatalf("priority not set: %+v", up)
		}
		lblDo(t, s, "PUT", base+"/bug", owner.Token, map[string]any{}).Want(t, 400).
			WantBody(t, `{"error":"new_name, color, description, priority are missing, at least one parameter must be provided"}`)
		lblDo(t, s, "PUT", base+"/bug", owner.Token, map[string]any{"new_name": "light"}).Want(t, 400).
			WantBody(t, `{"message":{"title":["has already been taken"]}}`)
		lblDo(t, s, "PUT", base+"/bug", owner.Token, map[string]any{"color": "nope"}).Want(t, 400)
		lblDo(t, s, "PUT", base+"/missing", owner.Token, map[string]any{"color": "red"}).Want(t, 404)
		// The legacy form names the label by a parameter.
		lblDo(t, s, "PUT", base, owner.Token, map[string]any{"name": "light", "description": "legacy"}).Want(t, 200).JSON(t, &up)
		if up.ID != light.ID || *up.Description != "legacy" {
			t.Fatalf("legacy update %+v", up)
		}

		// Subscriptions: 201, then 304 when nothing changes.
		var sub labelJSON
		lblDo(t, s, "POST", base+"/bug/subscribe", owner.Token, nil).Want(t, 201).JSON(t, &sub)
		if !sub.Subscribed {
			t.Fatalf("subscribe %+v", sub)
		}
		lblDo(t, s, "POST", base+"/bug/subscribe", owner.Token, nil).Want(t, 304)
		lblDo(t, s, "POST", base+"/bug/unsubscribe", owner.Token, nil).Want(t, 201).JSON(t, &sub)
		if sub.Subscribed {
			t.Fatalf("unsubscribe %+v", sub)
		}
		lblDo(t, s, "POST", base+"/bug/unsubscribe", owner.Token, nil).Want(t, 304)

		// A group label shows in the project's list unless asked not to;
		// the project's title check covers its groups' labels.
		g := lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", gid), owner.Token, map[string]any{"name": "grouped", "color": "#00ff00"})
		lblDo(t, s, "POST", base, owner.Token, map[string]any{"name": "grouped", "color": "#fff"}).Want(t, 409)
		var list []labelJSON
		lblDo(t, s, "GET", base, owner.Token, nil).Want(t, 200).JSON(t, &list)
		names := []string{}
		for _, l := range list {
			names = append(names, l.Name)
			if l.ID == g.ID && (l.IsProjectLabel == nil || *l.IsProjectLabel) {
				t.Errorf("group label in project list: %+v", l)
			}
		}
		if strings.Join(names, ",") != "bug,grouped,light" {
			t.Fatalf("project list %v", names)
		}
		lblDo(t, s, "GET", base+"?include_ancestor_groups=false", owner.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("own labels %+v", list)
		}
		lblDo(t, s, "GET", base+"?search=GROU", owner.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 1 || list[0].ID != g.ID {
			t.Fatalf("search %+v", list)
		}
		// A group label is read, not written, through the project.
		lblDo(t, s, "GET", base+"/grouped", owner.Token, nil).Want(t, 200)
		lblDo(t, s, "DELETE", base+"/grouped", owner.Token, nil).Want(t, 404)

		// Pagination.
		r = lblDo(t, s, "GET", base+"?per_page=2", owner.Token, nil).Want(t, 200)
		if r.Header.Get("X-Total") != "3" || r.Header.Get("X-Next-Page") != "2" || len(r.Array(t)) != 2 {
			t.Fatalf("page 1: %v %s", r.Header, r.Body)
		}
		r = lblDo(t, s, "GET", base+"?per_page=2&page=2", owner.Token, nil).Want(t, 200)
		if a := r.Array(t); len(a) != 1 || a[0]["name"] != "light" {
			t.Fatalf("page 2: %s", r.Body)
		}

		// Counts: open merge requests carrying the label; issues are 0.
		apOpen(t, p, "feature")
		lblDo(t, s, "PUT", fmt.Sprintf("/projects/%d/merge_requests/1", p.ID), owner.Token, map[string]any{"labels": "bug"}).Want(t, 200)
		lblDo(t, s, "GET", base+"?with_counts=true", owner.Token, nil).Want(t, 200).JSON(t, &list)
		for _, l := range list {
			want := 0
			if l.Name == "bug" {
				want = 1
			}
			if l.OpenMergeRequestsCount == nil || *l.OpenMergeRequestsCount != want || l.OpenIssuesCount == nil || *l.OpenIssuesCount != 0 {
				t.Errorf("counts of %s: %+v", l.Name, l)
			}
		}

		// Delete: 204, then gone; the legacy form by name.
		lblDo(t, s, "DELETE", base+"/bug", owner.Token, nil).Want(t, 204)
		lblDo(t, s, "GET", base+"/bug", owner.Token, nil).Want(t, 404)
		lblDo(t, s, "DELETE", base, owner.Token, map[string]any{"name": "light"}).Want(t, 204)
		lblDo(t, s, "DELETE", base, owner.Token, map[string]any{}).Want(t, 400).WantBody(t, `{"error":"name is missing"}`)
	})
}

func TestLabels_group(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lgowner")
		top, _ := agGroup(t, s, owner.Token, "lgtop", 0)
		sub, _ := agGroup(t, s, owner.Token, "lgsub", top)
		topBase, subBase := fmt.Sprintf("/groups/%d/labels", top), fmt.Sprintf("/groups/%d/labels", sub)

		// The official client.
		c := s.Client(t, owner.Token)
		gl, _, err := c.GroupLabels.CreateGroupLabel(top, &gitlab.CreateGroupLabelOptions{Name: gitlab.Ptr("top"), Color: gitlab.Ptr("#123456"),
			Description: gitlab.Ptr("at the top")})
		if err != nil || gl.Name != "top" || gl.Color != "#123456" || gl.Description != "at the top" {
			t.Fatalf("create: %+v %v", gl, err)
		}
		lblCreate(t, s, subBase, owner.Token, map[string]any{"name": "sub", "color": "#654321"})
		subs, _, err := c.GroupLabels.ListGroupLabels(sub, &gitlab.ListGroupLabelsOptions{})
		if err != nil || len(subs) != 2 || subs[0].Name != "sub" || subs[1].Name != "top" {
			t.Fatalf("sub list: %+v %v", subs, err)
		}
		obj := lblDo(t, s, "GET", subBase+"/top", owner.Token, nil).Want(t, 200).Object(t)
		if _, ok := obj["priority"]; ok {
			t.Errorf("group label with priority: %v", obj)
		}
		lblDo(t, s, "GET", subBase+"/top?include_ancestor_groups=false", owner.Token, nil).Want(t, 404)
		var list []labelJSON
		lblDo(t, s, "GET", topBase+"?include_descendant_groups=true", owner.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("with descendants %+v", list)
		}
		lblDo(t, s, "GET", topBase, owner.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("top only %+v", list)
		}
		// A stranger sees a public group's labels, and those of its
		// public subgroups only.
		stranger := s.NewUser(t, "lgstranger")
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", top), Token: owner.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		pubSub, _ := agGroup(t, s, owner.Token, "lgpub", top)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", pubSub), Token: owner.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		lblCreate(t, s, fmt.Sprintf("/groups/%d/labels", pubSub), owner.Token, map[string]any{"name": "pub", "color": "#654321"})
		lblDo(t, s, "GET", topBase+"?include_descendant_groups=true", stranger.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 2 || list[0].Name != "pub" || list[1].Name != "top" {
			t.Fatalf("stranger with descendants %+v", list)
		}
		lblDo(t, s, "GET", subBase, stranger.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Group Not Found"}`)
		lblDo(t, s, "GET", topBase+"?include_descendant_groups=true", owner.Token, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 3 {
			t.Fatalf("owner with descendants %+v", list)
		}

		// only_group_labels=false adds the projects' labels: the group's
		// own projects, or the whole tree's with descendants, as far as
		// the caller sees them.
		pubP := agProject(t, s, owner.Token, "lgpubp", top)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", pubP.ID), Token: owner.Token,
			JSON: map[string]any{"visibility": "public"}}).Want(t, 200)
		privP := agProject(t, s, owner.Token, "lgprivp", sub)
		lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", pubP.ID), owner.Token, map[string]any{"name": "ptop", "color": "#fff"})
		lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", privP.ID), owner.Token, map[string]any{"name": "psub", "color": "#fff"})
		for _, c := range []struct {
			query, token string
			want         string
		}{
			{"only_group_labels=false", owner.Token, "ptop,top"},
			{"only_group_labels=false&include_descendant_groups=true", owner.Token, "psub,ptop,pub,sub,top"},
			{"only_group_labels=false&include_descendant_groups=true", stranger.Token, "ptop,pub,top"},
			{"only_group_labels=true&include_descendant_groups=true", stranger.Token, "pub,top"},
		} {
			lblDo(t, s, "GET", topBase+"?"+c.query, c.token, nil).Want(t, 200).JSON(t, &list)
			var names []string
			for _, l := range list {
				names = append(names, l.Name)
			}
			if got := strings.Join(names, ","); got != c.want {
				t.Errorf("%s: %s; want %s", c.query, got, c.want)
			}
		}

		up, _, err := c.GroupLabels.UpdateGroupLabel(top, "top", &gitlab.UpdateGroupLabelOptions{NewName: gitlab.Ptr("top2"), Color: gitlab.Ptr("red")})
		if err != nil || up.Name != "top2" || up.Color != "#ff0000" {
			t.Fatalf("update: %+v %v", up, err)
		}
		lblDo(t, s, "POST", topBase, owner.Token, map[string]any{"name": "top2", "color": "#fff"}).Want(t, 409).
			WantBody(t, `{"message":"Label already exists"}`)
		lblDo(t, s, "POST", topBase+"/top2/subscribe", owner.Token, nil).Want(t, 201)
		lblDo(t, s, "POST", topBase+"/top2/subscribe", owner.Token, nil).Want(t, 304)
		if _, err := c.GroupLabels.DeleteGroupLabel(top, "top2", nil); err != nil {
			t.Fatal(err)
		}
		lblDo(t, s, "GET", topBase+"/top2", owner.Token, nil).Want(t, 404).WantBody(t, `{"message":"404 Label Not Found"}`)
	})
}

// TestLabels_promote: a project label becomes its group's label; the
// same-titled labels of the group's other projects merge into it, their
// priorities moving along.
func TestLabels_promote(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "lpowner")
		gid, _ := agGroup(t, s, owner.Token, "lpg", 0)
		a, b := agProject(t, s, owner.Token, "lpa", gid), agProject(t, s, owner.Token, "lpb", gid)
		la := lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", a.ID), owner.Token, map[string]any{"name": "shared", "color": "#111111", "priority": 1})
		lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", b.ID), owner.Token, map[string]any{"name": "shared", "color": "#222222", "priority": 2})
		var g labelJSON
		lblDo(t, s, "PUT", fmt.Sprintf("/projects/%d/labels/%d/promote", a.ID, la.ID), owner.Token, nil).Want(t, 200).JSON(t, &g)
		if g.Name != "shared" || g.Color != "#111111" || g.ID == la.ID || g.IsProjectLabel != nil {
			t.Fatalf("promoted %+v", g)
		}
		for _, c := range []struct {
			p    ciProject
			prio int
		}{{a, 1}, {b, 2}} {
			var list []labelJSON
			lblDo(t, s, "GET", fmt.Sprintf("/projects/%d/labels", c.p.ID), owner.Token, nil).Want(t, 200).JSON(t, &list)
			if len(list) != 1 || list[0].ID != g.ID || *list[0].IsProjectLabel || list[0].Priority == nil || *list[0].Priority != c.prio {
				t.Fatalf("project %s labels %+v", c.p.Path, list)
			}
		}
		// A personal project has no group to promote to.
		mine := agProject(t, s, owner.Token, "lpmine", 0)
		lblCreate(t, s, fmt.Sprintf("/projects/%d/labels", mine.ID), owner.Token, map[string]any{"name": "x", "color": "#fff"})
		lblDo(t, s, "PUT", fmt.Sprintf("/projects/%d/labels/x/promote", mine.ID), owner.Token, nil).Want(t, 400)
		lblDo(t, s, "PUT", fmt.Sprintf("/projects/%d/labels/nope/promote", mine.ID), owner.Token, nil).Want(t, 404)
	})
}

// TestLabels_permissions: labels are read by whoever sees the project or
// group and written by Reporters up (GitLab's admin_label).
func TestLabels_permissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, stranger := s.NewUser(t, "lpmowner"), s.NewUser(t, "lpmstranger")
		roles := map[string]apitest.User{}
		levels := map[string]int{"guest": 10, "reporter": 20, "developer": 30, "maintainer": 40}
		for name := range levels {
			roles[name] = s.NewUser(t, "lpm"+name)
		}
		for _, vis := range []string{"private", "public"} {
			gid, _ := agGroup(t, s, owner.Token, "lpm"+vis, 0)
			s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/groups/%d", gid), Token: owner.Token,
				JSON: map[string]any{"visibility": vis}}).Want(t, 200)
			p := agProject(t, s, owner.Token, "lpmp"+vis, gid)
			s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d", p.ID), Token: owner.Token,
				JSON: map[string]any{"visibility": vis}}).Want(t, 200)
			for name, u := range roles {
				lblGroupMember(t, s, gid, u, levels[name])
			}
			for _, base := range []string{fmt.Sprintf("/projects/%d/labels", p.ID), fmt.Sprintf("/groups/%d/labels", gid)} {
				lblCreate(t, s, base, owner.Token, map[string]any{"name": "seed", "color": "#fff"})
				readWant := 404
				if vis == "public" {
					readWant = 200
				}
				writeNonMember := 404
				if vis == "public" {
					writeNonMember = 403
				}
				cases := []struct {
					who         string
					token       string
					read, write int
				}{
					{"anonymous", "", readWant, 401},
					{"stranger", stranger.Token, readWant, writeNonMember},
					{"guest", roles["guest"].Token, 200, 403},
					{"reporter", roles["reporter"].Token, 200, 201},
					{"developer", roles["developer"].Token, 200, 201},
					{"maintainer", roles["maintainer"].Token, 200, 201},
					{"owner", owner.Token, 200, 201},
					{"admin", s.RootToken, 200, 201},
				}
				for _, c := range cases {
					if got := lblDo(t, s, "GET", base, c.token, nil).Status; got != c.read {
						t.Errorf("%s list %s as %s: %d; want %d", vis, base, c.who, got, c.read)
					}
					if got := lblDo(t, s, "GET", base+"/seed", c.token, nil).Status; got != c.read {
						t.Errorf("%s get %s as %s: %d; want %d", vis, base, c.who, got, c.read)
					}
					if got := lblDo(t, s, "POST", base, c.token, map[string]any{"name": "by " + c.who, "color": "#fff"}).Status; got != c.write {
						t.Errorf("%s create %s as %s: %d; want %d", vis, base, c.who, got, c.write)
					}
					del := c.write
					if del == 201 {
						del = 204
					}
					if got := lblDo(t, s, "DELETE", base+"/"+url.PathEscape("by "+c.who), c.token, nil).Status; got != del && !(del == 403 && got == 404) {
						t.Errorf("%s delete %s as %s: %d; want %d", vis, base, c.who, got, del)
					}
				}
			}
		}
	})
}

// TestLabels_concurrentEdits: edits of different attributes of one label
// racing each other all land; two racing creations of one title end in
// one 201 and one 409.
func TestLabels_concurrentEdits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken, JSON: map[string]any{"name": "racing"}}).
			Want(t, http.StatusCreated).JSON(t, &p)
		base := fmt.Sprintf("/projects/%d/labels", p.ID)
		var l labelJSON
		s.Do(t, apitest.Request{Method: "POST", Path: base, Token: s.RootToken, JSON: map[string]any{"name": "race", "color": "#000000"}}).
			Want(t, http.StatusCreated).JSON(t, &l)
		one := fmt.Sprintf("%s/%d", base, l.ID)
		for round := 0; round < 10; round++ {
			color, desc := fmt.Sprintf("#0000%02d", round), fmt.Sprintf("round %d", round)
			done := make(chan struct{}, 2)
			go func() {
				s.Do(t, apitest.Request{Method: "PUT", Path: one, Token: s.RootToken, JSON: map[string]any{"color": color}}).Want(t, http.StatusOK)
				done <- struct{}{}
			}()
			go func() {
				s.Do(t, apitest.Request{Method: "PUT", Path: one, Token: s.RootToken, JSON: map[string]any{"description": desc}}).Want(t, http.StatusOK)
				done <- struct{}{}
			}()
			<-done
			<-done
			var got labelJSON
			s.Get(t, one, s.RootToken).Want(t, http.StatusOK).JSON(t, &got)
			if got.Color != color || got.Description == nil || *got.Description != desc {
				t.Fatalf("round %d: color %s description %v; want %s and %q (an edit was lost)", round, got.Color, got.Description, color, desc)
			}
		}
		statuses := make(chan int, 2)
		for i := 0; i < 2; i++ {
			go func() {
				statuses <- s.Do(t, apitest.Request{Method: "POST", Path: base, Token: s.RootToken,
					JSON: map[string]any{"name": "twin", "color": "#fff"}}).Status
			}()
		}
		a, b := <-statuses, <-statuses
		if a+b != http.StatusCreated+http.StatusConflict {
			t.Errorf("two racing creations: %d and %d; want 201 and 409", a, b)
		}
	})
}
