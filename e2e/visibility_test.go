package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// world is a set of groups and projects of every visibility, owned by
// "member", with other users around.
type world struct {
	admin, member, user, external string // tokens ("" anonymous)
	groups                        map[string]int64
	projects                      map[string]int64
}

func buildWorld(t *testing.T, s *apitest.Server) world {
	t.Helper()
	w := world{admin: s.RootToken, groups: map[string]int64{}, projects: map[string]int64{}}
	w.member = s.NewUser(t, "member").Token
	w.user = s.NewUser(t, "plainuser").Token
	ext := s.NewUser(t, "outsider")
	s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true}}).Want(t, 200)
	w.external = ext.Token
	for _, vis := range []string{"public", "internal", "private"} {
		var g struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: w.member, JSON: map[string]any{
			"name": "G " + vis, "path": "g-" + vis, "visibility": vis}}).Want(t, 201).JSON(t, &g)
		w.groups[vis] = g.ID
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: w.member, JSON: map[string]any{
			"name": "p-" + vis, "namespace_id": g.ID, "visibility": vis}}).Want(t, 201).JSON(t, &p)
		w.projects[vis] = p.ID
	}
	return w
}

// TestVisibility_matrix checks who sees which project and group, alone and
// in lists: anonymous, an external user, a signed-in user, a member and an
// administrator, against private, internal and public resources.
func TestVisibility_matrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := buildWorld(t, s)
		actors := []struct {
			name, token string
			sees        []string
		}{
			{"anonymous", "", []string{"public"}},
			{"external", w.external, []string{"public"}},
			{"user", w.user, []string{"internal", "public"}},
			{"member", w.member, []string{"internal", "private", "public"}},
			{"admin", w.admin, []string{"internal", "private", "public"}},
		}
		for _, a := range actors {
			for _, vis := range []string{"public", "internal", "private"} {
				want := http.StatusNotFound
				for _, v := range a.sees {
					if v == vis {
						want = http.StatusOK
					}
				}
				r := s.Get(t, "/projects/"+itoa(w.projects[vis]), a.token)
				if r.Status != want {
					t.Errorf("%s GET %s project: %d; want %d", a.name, vis, r.Status, want)
				}
				if want == http.StatusNotFound {
					r.WantBody(t, `{"message":"404 Project Not Found"}`)
				}
				path := url.PathEscape("g-" + vis + "/p-" + vis)
				if got := s.Get(t, "/projects/"+path, a.token).Status; got != want {
					t.Errorf("%s GET %s project by path: %d; want %d", a.name, vis, got, want)
				}
				r = s.Get(t, "/groups/"+itoa(w.groups[vis]), a.token)
				if r.Status != want {
					t.Errorf("%s GET %s group: %d; want %d", a.name, vis, r.Status, want)
				}
				if want == http.StatusNotFound {
					r.WantBody(t, `{"message":"404 Group Not Found"}`)
				}
			}
			// Lists show exactly the visible ones.
			var ps []struct {
				Name string `json:"name"`
			}
			s.Get(t, "/projects?per_page=100", a.token).Want(t, 200).JSON(t, &ps)
			var got []string
			for _, p := range ps {
				got = append(got, strings.TrimPrefix(p.Name, "p-"))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(a.sees) {
				t.Errorf("%s lists projects %v; want %v", a.name, got, a.sees)
			}
			var gs []struct {
				Path string `json:"path"`
			}
			s.Get(t, "/groups?all_available=true&per_page=100", a.token).Want(t, 200).JSON(t, &gs)
			got = nil
			for _, g := range gs {
				got = append(got, strings.TrimPrefix(g.Path, "g-"))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(a.sees) {
				t.Errorf("%s lists groups %v; want %v", a.name, got, a.sees)
			}
		}
		// Anonymous callers get the simple form, signed-in ones the full one.
		anon := s.Get(t, "/projects/"+itoa(w.projects["public"]), "").Object(t)
		if _, ok := anon["visibility"]; ok {
			t.Error("anonymous caller got the full entity")
		}
		full := s.Get(t, "/projects/"+itoa(w.projects["public"]), w.user).Object(t)
		if full["visibility"] != "public" || full["permissions"] == nil {
			t.Errorf("signed-in caller got %v", full["visibility"])
		}
		// Without all_available a user lists only groups they belong to.
		var mine []map[string]any
		s.Get(t, "/groups", w.user).Want(t, 200).JSON(t, &mine)
		if len(mine) != 0 {
			t.Errorf("user lists %d groups without membership", len(mine))
		}
		s.Get(t, "/groups", w.member).Want(t, 200).JSON(t, &mine)
		if len(mine) != 3 {
			t.Errorf("member lists %d groups; want 3", len(mine))
		}
	})
}
