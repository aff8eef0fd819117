package e2e

import (
	"net/http"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// TestSnippets_inputErrors sends every kind of bad input to create and
// update, personal and in a project, and checks GitLab's statuses and
// bodies: parameters (400 {"error"}), actions that do not fit together
// (422), changes the repository refuses (400 {"message":{"error"}}), the
// size limit (413), restricted visibility (403) and the default one.
func TestSnippets_inputErrors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "proj"}}).Want(t, 201).JSON(t, &p)
		do := func(method, path string, body any) *apitest.Response {
			return s.Do(t, apitest.Request{Method: method, Path: path, Token: owner.Token, JSON: body})
		}
		one := snippetFiles("a.txt", "x")
		for _, base := range []string{"/snippets", "/projects/" + itoa(p.ID) + "/snippets"} {
			for _, c := range []struct {
				name   string
				body   any
				status int
				want   string
			}{
				{"nothing", map[string]any{}, 400, `{"error":"title is missing, files, content are missing, exactly one parameter must be provided"}`},
				{"no files", map[string]any{"title": "t"}, 400, `{"error":"files, content are missing, exactly one parameter must be provided"}`},
				{"blank title", map[string]any{"title": "  ", "files": one}, 400, `{"error":"title is empty"}`},
				{"both", map[string]any{"title": "t", "files": one, "content": "x", "file_name": "a"}, 400, `{"error":"files, content are mutually exclusive"}`},
				{"content without name", map[string]any{"title": "t", "content": "x"}, 400, `{"error":"file_name is missing"}`},
				{"blank content", map[string]any{"title": "t", "content": " ", "file_name": "a"}, 400, `{"error":"content is empty"}`},
				{"bad visibility", map[string]any{"title": "t", "files": one, "visibility": "secret"}, 400, `{"error":"visibility does not have a valid value"}`},
				{"files not objects", map[string]any{"title": "t", "files": []string{"a.txt"}}, 400, `{"error":"files is invalid"}`},
				{"file without path", map[string]any{"title": "t", "files": []map[string]any{{"content": "x"}}}, 400, `{"error":"files[0][file_path] is missing"}`},
				{"empty path", map[string]any{"title": "t", "files": snippetFiles("", "x")}, 400, `{"error":"files[0][file_path] is empty"}`},
				{"empty content", map[string]any{"title": "t", "files": snippetFiles("a", "")}, 400, `{"error":"files[0][content] is empty"}`},
				{"traversal", map[string]any{"title": "t", "files": snippetFiles("ok", "x", "../etc/passwd", "x")}, 400,
					`{"error":"files[1][file_path] should be a valid file path"}`},
				{"absolute", map[string]any{"title": "t", "files": snippetFiles("/etc/passwd", "x")}, 400, `{"error":"files[0][file_path] should be a valid file path"}`},
				{"encoded traversal", map[string]any{"title": "t", "files": snippetFiles("%2e%2e/x", "x")}, 400, `{"error":"files[0][file_path] should be a valid file path"}`},
				{"legacy traversal", map[string]any{"title": "t", "content": "x", "file_name": "../x"}, 400,
					`{"message":{"error":"Repository Error creating the snippet - Invalid file path: \"../x\""}}`},
				{"duplicate paths", map[string]any{"title": "t", "files": snippetFiles("a.txt", "x", "a.txt", "y")}, 400,
					`{"message":{"error":"Repository Error creating the snippet - A file with this name already exists"}}`},
				{"file and folder", map[string]any{"title": "t", "files": snippetFiles("a", "x", "a/b", "y")}, 400,
					`{"message":{"error":"Repository Error creating the snippet - A file with this name already exists: a"}}`},
				{"eleven files", map[string]any{"title": "t", "files": snippetFiles("1", "x", "2", "x", "3", "x", "4", "x", "5", "x", "6", "x", "7", "x", "8", "x", "9", "x", "10", "x", "11", "x")},
					400, `{"message":{"error":"Repository Error creating the snippet - The repository can contain at most 10 file(s)."}}`},
				{"long title", map[string]any{"title": strings.Repeat("t", 256), "files": one}, 400, `{"message":{"error":"Title is too long (maximum is 255 characters)"}}`},
				{"long path", map[string]any{"title": "t", "files": snippetFiles(strings.Repeat("p", 256), "x")}, 400,
					`{"message":{"error":"File name is too long (maximum is 255 characters)"}}`},
			} {
				if r := do("POST", base, c.body); r.Status != c.status {
					t.Errorf("%s %s: %d %s; want %d", base, c.name, r.Status, r.Body, c.status)
				} else {
					r.WantBody(t, c.want)
				}
			}
		}
		// Nothing of a refused creation stays.
		if list := s.Get(t, "/snippets", owner.Token).Want(t, 200).Array(t); len(list) != 0 {
			t.Fatalf("refused creations left %v", list)
		}
		// A title of 255 characters and ten files are fine; the legacy
		// "code" of project snippets is content.
		id := newSnippet(t, s, owner.Token, "/snippets", strings.Repeat("t", 255), "private",
			"1", "x", "2", "x", "3", "x", "4", "x", "5", "x", "6", "x", "7", "x", "8", "x", "9", "x", "10", "x")
		do("POST", "/projects/"+itoa(p.ID)+"/snippets", map[string]any{"title": "c", "code": "echo", "file_name": "c.sh", "visibility": "private"}).Want(t, 201)
		do("POST", "/projects/"+itoa(p.ID)+"/snippets", map[string]any{"title": "c", "code": "echo", "content": "x", "file_name": "c.sh"}).
			Want(t, 400).WantBody(t, `{"error":"content, code are mutually exclusive"}`)

		// Updates.
		path := "/snippets/" + itoa(id)
		for _, c := range []struct {
			name   string
			body   any
			status int
			want   string
		}{
			{"nothing", map[string]any{}, 400, `{"error":"content, description, files, file_name, title, visibility are missing, at least one parameter must be provided"}`},
			{"blank title", map[string]any{"title": ""}, 400, `{"error":"title is empty"}`},
			{"files and content", map[string]any{"files": []map[string]any{{"action": "delete", "file_path": "1"}}, "content": "x"}, 400,
				`{"error":"files, content are mutually exclusive"}`},
			{"files and file name", map[string]any{"files": []map[string]any{{"action": "delete", "file_path": "1"}}, "file_name": "x"}, 400,
				`{"error":"files, file_name are mutually exclusive"}`},
			{"no action", map[string]any{"files": []map[string]any{{"file_path": "1"}}}, 400, `{"error":"files[0][action] is missing"}`},
			{"bad action", map[string]any{"files": []map[string]any{{"action": "chmod", "file_path": "1"}}}, 400, `{"error":"files[0][action] does not have a valid value"}`},
			{"traversal", map[string]any{"files": []map[string]any{{"action": "move", "previous_path": "1", "file_path": "../1"}}}, 400,
				`{"error":"files[0][file_path] should be a valid file path"}`},
			{"move nowhere", map[string]any{"files": []map[string]any{{"action": "move", "file_path": "1"}}}, 422, `{"message":{"error":"Snippet actions have invalid data"}}`},
			{"update without content", map[string]any{"files": []map[string]any{{"action": "update", "file_path": "1"}}}, 422,
				`{"message":{"error":"Snippet actions have invalid data"}}`},
			{"missing file", map[string]any{"files": []map[string]any{{"action": "delete", "file_path": "nope"}}}, 400,
				`{"message":{"error":"Repository Error updating the snippet - A file with this name doesn't exist"}}`},
			{"eleventh file", map[string]any{"files": []map[string]any{{"action": "create", "file_path": "11", "content": "x"}}}, 400,
				`{"message":{"error":"Repository Error updating the snippet - The repository can contain at most 10 file(s)."}}`},
			{"legacy on many files", map[string]any{"content": "x"}, 400,
				`{"message":{"error":"To update Snippets with multiple files, you must use the ` + "`files`" + ` parameter"}}`},
		} {
			if r := do("PUT", path, c.body); r.Status != c.status {
				t.Errorf("update %s: %d %s; want %d", c.name, r.Status, r.Body, c.status)
			} else {
				r.WantBody(t, c.want)
			}
		}
		// Deleting every file leaves none: refused.
		var all []map[string]any
		for _, f := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"} {
			all = append(all, map[string]any{"action": "delete", "file_path": f})
		}
		do("PUT", path, map[string]any{"files": all}).Want(t, 400).
			WantBody(t, `{"message":{"error":"Repository Error updating the snippet - The repository must contain at least 1 file."}}`)
		if n := len(s.Get(t, path, owner.Token).Want(t, 200).Object(t)["files"].([]any)); n != 10 {
			t.Errorf("refused updates changed the files: %d", n)
		}

		// The size limit of snippet_size_limit, over every file: 413.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken, JSON: map[string]any{"snippet_size_limit": 100}}).Want(t, 200)
		do("POST", "/snippets", map[string]any{"title": "big", "files": snippetFiles("a", strings.Repeat("x", 60), "b", strings.Repeat("y", 41))}).
			Want(t, http.StatusRequestEntityTooLarge).WantBody(t, `{"message":"413 Request Entity Too Large"}`)
		small := newSnippet(t, s, owner.Token, "/snippets", "small", "private", "a", strings.Repeat("x", 60))
		do("PUT", "/snippets/"+itoa(small), map[string]any{"files": []map[string]any{{"action": "create", "file_path": "b", "content": strings.Repeat("y", 41)}}}).
			Want(t, http.StatusRequestEntityTooLarge)
		do("PUT", "/snippets/"+itoa(small), map[string]any{"files": []map[string]any{{"action": "create", "file_path": "b", "content": strings.Repeat("y", 40)}}}).Want(t, 200)
		// A body far over the limit is refused before it is read whole.
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: owner.Token, Raw: []byte(`{"title":"t","content":"` + strings.Repeat("x", 11<<20) + `"}`),
			Header: map[string]string{"Content-Type": "application/json"}}).Want(t, http.StatusRequestEntityTooLarge)

		// Restricted visibility: 403 for users, fine for administrators;
		// the default visibility is the instance's.
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"restricted_visibility_levels": []string{"public"}, "default_snippet_visibility": "internal", "snippet_size_limit": 1000}}).Want(t, 200)
		do("POST", "/snippets", map[string]any{"title": "t", "visibility": "public", "files": one}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":{"error":"Visibility level public has been restricted by your GitLab administrator"}}`)
		do("POST", "/projects/"+itoa(p.ID)+"/snippets", map[string]any{"title": "t", "visibility": "public", "files": one}).Want(t, http.StatusForbidden)
		do("PUT", "/snippets/"+itoa(small), map[string]any{"visibility": "public"}).Want(t, http.StatusForbidden).
			WantBody(t, `{"message":{"error":"Visibility level public has been restricted by your GitLab administrator"}}`)
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: s.RootToken, JSON: map[string]any{"title": "t", "visibility": "public", "files": one}}).Want(t, 201)
		if v := do("POST", "/snippets", map[string]any{"title": "t", "files": one}).Want(t, 201).Object(t)["visibility"]; v != "internal" {
			t.Errorf("default visibility %v", v)
		}

		// Ids that name nothing, or are no ids.
		absent := itoa(s.AbsentID(t))
		s.Get(t, "/snippets/"+absent, owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Snippet Not Found"}`)
		do("PUT", "/snippets/"+absent, map[string]any{"title": "x"}).Want(t, 404).WantBody(t, `{"message":"404 Snippet Not Found"}`)
		do("DELETE", "/snippets/"+absent, nil).Want(t, 404)
		s.Get(t, "/snippets/abc", owner.Token).Want(t, 404).WantBody(t, `{"error":"404 Not Found"}`)
		s.Get(t, "/snippets/99999999999999999999", owner.Token).Want(t, 404)
		s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+absent, owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Snippet Not Found"}`)
		s.Get(t, "/projects/"+absent+"/snippets", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Project Not Found"}`)
		// A project's snippet is not another route's.
		s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+itoa(small), owner.Token).Want(t, 404)
		s.Get(t, path+"/files/main/..%2F1/raw", owner.Token).Want(t, 400).WantBody(t, `{"error":"file_path should be a valid file path"}`)
		s.Get(t, path+"/files/nope/1/raw", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 Reference Not Found"}`)
		s.Get(t, path+"/files/-x/1/raw", owner.Token).Want(t, 404)
		s.Get(t, path+"/files/main/99/raw", owner.Token).Want(t, 404).WantBody(t, `{"message":"404 File Not Found"}`)
		s.Get(t, "/snippets?created_after=yesterday", owner.Token).Want(t, 400).WantBody(t, `{"error":"created_after is invalid"}`)
	})
}
