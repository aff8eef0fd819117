package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// The permissions of snippets, as GitLab's policies give them
// (personal_snippet_policy.rb, project_snippet_policy.rb, the snippet
// rules of project_policy.rb) and its API finds them (SnippetsFinder,
// lib/api/snippets.rb, lib/api/project_snippets.rb): every principal on
// personal snippets of each visibility and on the snippets of projects of
// each visibility and snippets feature level; and removal with a
// snippet's owner.

// snipGrid parses a grid: one line per principal, one number per column.
func snipGrid(t *testing.T, grid string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(grid), "\n") {
		f := strings.Fields(line)
		for _, v := range f[1:] {
			if v == "|" {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("grid line %q: %v", line, err)
			}
			out[f[0]] = append(out[f[0]], n)
		}
	}
	return out
}

func TestSnippets_permissionsPersonal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		author, other, ext := s.NewUser(t, "author"), s.NewUser(t, "other"), s.NewUser(t, "ext")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true}}).Want(t, 200)
		tokens := map[string]string{"anonymous": "", "other": other.Token, "external": ext.Token, "author": author.Token, "admin": s.RootToken}
		principals := []string{"anonymous", "other", "external", "author", "admin"}
		var ids []int64
		for _, vis := range []string{"public", "internal", "private"} {
			ids = append(ids, newSnippet(t, s, author.Token, "/snippets", vis, vis, "f.txt", vis))
		}
		check := func(action, grid string, do func(token string, id int64) int) {
			want := snipGrid(t, grid)
			for _, who := range principals {
				for i, id := range ids {
					if got := do(tokens[who], id); got != want[who][i] {
						t.Errorf("%s as %s on the %s snippet: %d; want %d", action, who, []string{"public", "internal", "private"}[i], got, want[who][i])
					}
				}
			}
		}
		// Columns: public, internal, private.
		read := `
			anonymous 200 404 404
			other     200 200 404
			external  200 404 404
			author    200 200 200
			admin     200 200 200`
		check("read", read, func(tok string, id int64) int { return s.Get(t, "/snippets/"+itoa(id), tok).Status })
		check("raw", read, func(tok string, id int64) int { return s.Get(t, "/snippets/"+itoa(id)+"/raw", tok).Status })
		check("file raw", read, func(tok string, id int64) int {
			return s.Get(t, "/snippets/"+itoa(id)+"/files/main/f.txt/raw", tok).Status
		})
		check("web raw", read, func(tok string, id int64) int {
			return s.Do(t, apitest.Request{Path: fmt.Sprintf("%s/-/snippets/%d/raw", s.URL, id), Token: tok}).Status
		})
		// Edits look among the caller's own snippets only (an
		// administrator's included).
		write := `
			anonymous 401 401 401
			other     404 404 404
			external  404 404 404
			author    200 200 200
			admin     404 404 404`
		check("update", write, func(tok string, id int64) int {
			return s.Do(t, apitest.Request{Method: "PUT", Path: "/snippets/" + itoa(id), Token: tok, JSON: map[string]any{"description": "d"}}).Status
		})
		// Lists: mine, public personal snippets, all one sees.
		for who, want := range map[string][3]int{"anonymous": {401, 401, 401}, "other": {0, 1, 2}, "external": {0, 1, 1}, "author": {3, 1, 3}, "admin": {0, 1, 3}} {
			for i, path := range []string{"/snippets", "/snippets/public", "/snippets/all"} {
				r := s.Get(t, path, tokens[who])
				got := r.Status
				if got == http.StatusOK {
					got = len(r.Array(t))
				}
				if got != want[i] {
					t.Errorf("%s as %s: %d; want %d", path, who, got, want[i])
				}
			}
		}
		// External users write no personal snippets.
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: ext.Token, JSON: map[string]any{"title": "x", "files": snippetFiles("a", "b")}}).
			Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", JSON: map[string]any{"title": "x", "files": snippetFiles("a", "b")}}).
			Want(t, http.StatusUnauthorized)
		check("delete", write, func(tok string, id int64) int {
			if tok == author.Token {
				return 200 // last, below
			}
			return s.Do(t, apitest.Request{Method: "DELETE", Path: "/snippets/" + itoa(id), Token: tok}).Status
		})
		for _, id := range ids {
			s.Do(t, apitest.Request{Method: "DELETE", Path: "/snippets/" + itoa(id), Token: author.Token}).Want(t, http.StatusNoContent)
		}
	})
}

func TestSnippets_permissionsProject(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, other, ext := s.NewUser(t, "owner"), s.NewUser(t, "nonmember"), s.NewUser(t, "ext")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/users/" + itoa(ext.ID), Token: s.RootToken, JSON: map[string]any{"external": true}}).Want(t, 200)
		tokens := map[string]string{"anonymous": "", "nonmember": other.Token, "external": ext.Token, "admin": s.RootToken}
		roles := []struct {
			name  string
			level int
		}{{"guest", 10}, {"reporter", 20}, {"developer", 30}, {"maintainer", 40}}
		members := map[string]apitest.User{}
		for _, r := range roles {
			u := s.NewUser(t, r.name)
			members[r.name], tokens[r.name] = u, u.Token
		}
		principals := []string{"anonymous", "nonmember", "external", "guest", "reporter", "developer", "maintainer", "admin"}
		// Projects: public, internal, private, public with its snippets
		// private, public with them disabled; in each a public, an
		// internal and a private snippet written by the developer.
		type proj struct {
			id       int64
			snippets []int64
		}
		var projects []proj
		for i, c := range []struct{ vis, feature string }{{"public", ""}, {"internal", ""}, {"private", ""}, {"public", "private"}, {"public", "disabled"}} {
			var p struct{ ID int64 }
			s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": fmt.Sprintf("p%d", i),
				"visibility": c.vis}}).Want(t, 201).JSON(t, &p)
			for _, r := range roles {
				s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/members", Token: owner.Token,
					JSON: map[string]any{"user_id": members[r.name].ID, "access_level": r.level}}).Want(t, 201)
			}
			pr := proj{id: p.ID}
			for _, vis := range []string{"public", "internal", "private"} {
				pr.snippets = append(pr.snippets, newSnippet(t, s, tokens["developer"], "/projects/"+itoa(p.ID)+"/snippets", vis, vis, "f.txt", vis))
			}
			if c.feature != "" {
				s.Do(t, apitest.Request{Method: "PUT", Path: "/projects/" + itoa(p.ID), Token: owner.Token,
					JSON: map[string]any{"snippets_access_level": c.feature}}).Want(t, 200)
			}
			projects = append(projects, pr)
		}
		// perSnippet checks a grid whose columns are the snippets of the
		// projects in order, three per project.
		perSnippet := func(action, grid string, do func(token string, project, id int64) int) {
			want := snipGrid(t, grid)
			for _, who := range principals {
				col := 0
				for pi, p := range projects {
					for si, id := range p.snippets {
						if got := do(tokens[who], p.id, id); got != want[who][col] {
							t.Errorf("%s as %s, project %d snippet %d: %d; want %d", action, who, pi, si, got, want[who][col])
						}
						col++
					}
				}
			}
		}
		// perProject checks a grid of one column per project.
		perProject := func(action, grid string, do func(token string, project int64) int) {
			want := snipGrid(t, grid)
			for _, who := range principals {
				for pi, p := range projects {
					if got := do(tokens[who], p.id); got != want[who][pi] {
						t.Errorf("%s as %s on project %d: %d; want %d", action, who, pi, got, want[who][pi])
					}
				}
			}
		}

		// Columns: public project (public, internal, private snippet) |
		// internal project | private project | public project, snippets
		// private | public project, snippets disabled.
		read := `
			anonymous  200 404 404 | 404 404 404 | 404 404 404 | 403 403 403 | 403 403 403
			nonmember  200 200 404 | 200 200 404 | 404 404 404 | 403 403 403 | 403 403 403
			external   200 404 404 | 404 404 404 | 404 404 404 | 403 403 403 | 403 403 403
			guest      200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403
			reporter   200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403
			developer  200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403
			maintainer 200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403
			admin      200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403`
		perSnippet("read", read, func(tok string, p, id int64) int {
			return s.Get(t, fmt.Sprintf("/projects/%d/snippets/%d", p, id), tok).Status
		})
		perSnippet("raw", read, func(tok string, p, id int64) int {
			return s.Get(t, fmt.Sprintf("/projects/%d/snippets/%d/raw", p, id), tok).Status
		})
		perSnippet("file raw", read, func(tok string, p, id int64) int {
			return s.Get(t, fmt.Sprintf("/projects/%d/snippets/%d/files/main/f.txt/raw", p, id), tok).Status
		})
		// Through /snippets/:id a snippet the caller may not read is not
		// there (a closed snippets feature included); an administrator
		// reads any but those of a project whose snippets are disabled.
		perSnippet("read as /snippets/:id", strings.NewReplacer("403", "404").Replace(read), func(tok string, _, id int64) int {
			return s.Get(t, fmt.Sprintf("/snippets/%d", id), tok).Status
		})

		// Lists: a project's (a count when 200), and every snippet one
		// sees (an administrator's: all fifteen).
		perProject("list", `
			anonymous  401 404 404 403 403
			nonmember  2   2   404 403 403
			external   1   404 404 403 403
			guest      3   3   3   3   403
			reporter   3   3   3   3   403
			developer  3   3   3   3   403
			maintainer 3   3   3   3   403
			admin      3   3   3   3   403`, func(tok string, p int64) int {
			r := s.Get(t, fmt.Sprintf("/projects/%d/snippets", p), tok)
			if r.Status == http.StatusOK {
				return len(r.Array(t))
			}
			return r.Status
		})
		for who, want := range map[string]int{"nonmember": 4, "external": 1, "guest": 12, "developer": 12, "admin": 15} {
			if got := len(s.Get(t, "/snippets/all", tokens[who]).Want(t, 200).Array(t)); got != want {
				t.Errorf("/snippets/all as %s: %d; want %d", who, got, want)
			}
		}
		if got := len(s.Get(t, "/snippets", tokens["developer"]).Want(t, 200).Array(t)); got != 12 {
			t.Errorf("the developer's own snippets: %d; want 12", got)
		}

		// Edits: the author (the developer), maintainers but on internal
		// snippets, administrators; a refused caller who reads the
		// snippet gets 403, one who does not 404.
		perSnippet("update", `
			anonymous  401 401 401 | 404 404 404 | 404 404 404 | 403 403 403 | 403 403 403
			nonmember  403 403 404 | 403 403 404 | 404 404 404 | 403 403 403 | 403 403 403
			external   403 404 404 | 404 404 404 | 404 404 404 | 403 403 403 | 403 403 403
			guest      403 403 403 | 403 403 403 | 403 403 403 | 403 403 403 | 403 403 403
			reporter   403 403 403 | 403 403 403 | 403 403 403 | 403 403 403 | 403 403 403
			developer  200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403
			maintainer 200 403 200 | 200 403 200 | 200 403 200 | 200 403 200 | 403 403 403
			admin      200 200 200 | 200 200 200 | 200 200 200 | 200 200 200 | 403 403 403`, func(tok string, p, id int64) int {
			return s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/snippets/%d", p, id), Token: tok,
				JSON: map[string]any{"description": "edited"}}).Status
		})
		// Who may write a new one: reporters up.
		perProject("create", `
			anonymous  401 404 404 403 403
			nonmember  403 403 404 403 403
			external   403 404 404 403 403
			guest      403 403 403 403 403
			reporter   201 201 201 201 403
			developer  201 201 201 201 403
			maintainer 201 201 201 201 403
			admin      201 201 201 201 403`, func(tok string, p int64) int {
			return s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/snippets", p), Token: tok,
				JSON: map[string]any{"title": "new", "visibility": "private", "files": snippetFiles("n.txt", "n")}}).Status
		})
		// Deleting: as editing, but an author needs to be a reporter
		// still.
		pub := projects[0]
		for who, want := range map[string]int{"anonymous": 401, "nonmember": 404, "external": 404, "guest": 403, "reporter": 403} {
			if got := s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[2]), Token: tokens[who]}).Status; got != want {
				t.Errorf("delete as %s: %d; want %d", who, got, want)
			}
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[1]), Token: tokens["maintainer"]}).
			Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/members/%d", pub.id, members["developer"].ID), Token: owner.Token,
			JSON: map[string]any{"access_level": 10}}).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[1]), Token: tokens["developer"],
			JSON: map[string]any{"title": "still mine"}}).Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[1]), Token: tokens["developer"]}).
			Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[0]), Token: tokens["maintainer"]}).
			Want(t, http.StatusNoContent)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[1]), Token: s.RootToken}).
			Want(t, http.StatusNoContent)
		// An archived project's snippets are read, not written.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/archive", pub.id), Token: owner.Token}).Want(t, 201)
		s.Get(t, fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[2]), tokens["maintainer"]).Want(t, 200)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/snippets/%d", pub.id, pub.snippets[2]), Token: tokens["maintainer"],
			JSON: map[string]any{"title": "x"}}).Want(t, http.StatusForbidden)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/snippets", pub.id), Token: tokens["maintainer"],
			JSON: map[string]any{"title": "x", "files": snippetFiles("a", "b")}}).Want(t, http.StatusForbidden)
	})
}

// TestSnippets_removal: a deleted snippet, project or user takes its
// snippets' rows and repositories along.
func TestSnippets_removal(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, leaver := s.NewUser(t, "owner"), s.NewUser(t, "leaver")
		var p, kept struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "doomed"}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "kept"}}).Want(t, 201).JSON(t, &kept)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(kept.ID) + "/members", Token: owner.Token,
			JSON: map[string]any{"user_id": leaver.ID, "access_level": 30}}).Want(t, 201)
		inDoomed := newSnippet(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/snippets", "doomed", "private", "a", "b")
		ownersOwn := newSnippet(t, s, owner.Token, "/snippets", "mine", "private", "a", "b")
		leaversOwn := newSnippet(t, s, leaver.Token, "/snippets", "theirs", "private", "a", "b")
		leaversInKept := newSnippet(t, s, leaver.Token, "/projects/"+itoa(kept.ID)+"/snippets", "theirs", "private", "a", "b")
		ownersInKept := newSnippet(t, s, owner.Token, "/projects/"+itoa(kept.ID)+"/snippets", "mine", "private", "a", "b")
		gone := func(id int64) {
			t.Helper()
			eventually(t, fmt.Sprintf("snippet %d removed", id), func() bool {
				if s.Get(t, "/snippets/"+itoa(id), s.RootToken).Status != http.StatusNotFound {
					return false
				}
				_, err := os.Stat(snippetRepoDir(s, id))
				return os.IsNotExist(err)
			})
		}
		there := func(id int64) {
			t.Helper()
			s.Get(t, "/snippets/"+itoa(id), s.RootToken).Want(t, http.StatusOK)
			if _, err := os.Stat(snippetRepoDir(s, id)); err != nil {
				t.Errorf("snippet %d's repository: %v", id, err)
			}
		}

		s.Do(t, apitest.Request{Method: "DELETE", Path: "/projects/" + itoa(p.ID), Token: owner.Token}).Want(t, http.StatusAccepted)
		gone(inDoomed)
		there(ownersOwn)

		s.Do(t, apitest.Request{Method: "DELETE", Path: "/users/" + itoa(leaver.ID), Token: s.RootToken}).Want(t, http.StatusNoContent)
		gone(leaversOwn)
		gone(leaversInKept)
		there(ownersInKept)
		there(ownersOwn)

		s.Do(t, apitest.Request{Method: "DELETE", Path: "/snippets/" + itoa(ownersOwn), Token: owner.Token}).Want(t, http.StatusNoContent)
		gone(ownersOwn)
		if list := s.Get(t, "/snippets/all", s.RootToken).Want(t, 200).Array(t); len(list) != 1 || list[0]["id"] != float64(ownersInKept) {
			t.Errorf("left: %v", list)
		}
	})
}
