package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
)

// Snippets through the official Go client and raw HTTP: the entity's
// fields and types, multi-file snippets and every file action, the legacy
// single-file parameters, lists, raw content (API and web paths) and user
// agent details. snippets_git_test.go clones and pushes them,
// snippets_perm_test.go holds the permission matrices and removal.

// snippetFiles is the API's files[] for a create.
func snippetFiles(kv ...string) []map[string]any {
	var out []map[string]any
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, map[string]any{"file_path": kv[i], "content": kv[i+1]})
	}
	return out
}

// newSnippet creates a snippet through raw HTTP (base "/snippets" or
// "/projects/:id/snippets") and returns its id.
func newSnippet(t *testing.T, s *apitest.Server, token, base, title, visibility string, files ...string) int64 {
	t.Helper()
	var sn struct{ ID int64 }
	s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token, JSON: map[string]any{"title": title, "visibility": visibility,
		"files": snippetFiles(files...)}}).Want(t, http.StatusCreated).JSON(t, &sn)
	return sn.ID
}

// snippetRepoDir is where a snippet's repository lives on the default
// storage of the server's data folder.
func snippetRepoDir(s *apitest.Server, id int64) string {
	return filepath.Join(s.DataDir, "repositories", filepath.FromSlash(gitrepo.SnippetPath(id)))
}

func TestSnippets_officialClient(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		c := s.Client(t, owner.Token)

		// A personal snippet of two files.
		sn, _, err := c.Snippets.CreateSnippet(&gitlab.CreateSnippetOptions{Title: gitlab.Ptr("Notes"), Description: gitlab.Ptr("two files"),
			Visibility: gitlab.Ptr(gitlab.PublicVisibility), Files: &[]*gitlab.CreateSnippetFileOptions{
				{FilePath: gitlab.Ptr("b.txt"), Content: gitlab.Ptr("bee\n")},
				{FilePath: gitlab.Ptr("dir/a.md"), Content: gitlab.Ptr("# A\n")},
			}})
		if err != nil {
			t.Fatal(err)
		}
		web := fmt.Sprintf("%s/-/snippets/%d", s.URL, sn.ID)
		if sn.Title != "Notes" || sn.Description != "two files" || sn.Visibility != "public" || sn.ProjectID != 0 ||
			sn.Author.Username != "owner" || sn.WebURL != web || sn.RawURL != web+"/raw" || sn.FileName != "b.txt" {
			t.Errorf("created %+v", sn)
		}
		if len(sn.Files) != 2 || sn.Files[0].Path != "b.txt" || sn.Files[1].Path != "dir/a.md" ||
			sn.Files[1].RawURL != web+"/raw/main/dir/a.md" {
			t.Errorf("files %+v", sn.Files)
		}
		if sn.RepositoryStorage != "" {
			t.Errorf("a user sees repository_storage %q", sn.RepositoryStorage)
		}
		if _, err := os.Stat(filepath.Join(snippetRepoDir(s, sn.ID), "HEAD")); err != nil {
			t.Errorf("repository at the hashed path: %v", err)
		}

		// Raw content: the first file, then each by ref and path.
		raw, _, err := c.Snippets.SnippetContent(sn.ID)
		if err != nil || string(raw) != "bee\n" {
			t.Errorf("raw %q, %v", raw, err)
		}
		raw, _, err = c.Snippets.SnippetFileContent(sn.ID, "main", "dir/a.md")
		if err != nil || string(raw) != "# A\n" {
			t.Errorf("file raw %q, %v", raw, err)
		}

		// Every file action in one update, and a new title.
		upd, _, err := c.Snippets.UpdateSnippet(sn.ID, &gitlab.UpdateSnippetOptions{Title: gitlab.Ptr("Renamed"), Files: &[]*gitlab.UpdateSnippetFileOptions{
			{Action: gitlab.Ptr("update"), FilePath: gitlab.Ptr("b.txt"), Content: gitlab.Ptr("bee 2\n")},
			{Action: gitlab.Ptr("move"), PreviousPath: gitlab.Ptr("dir/a.md"), FilePath: gitlab.Ptr("a.md")},
			{Action: gitlab.Ptr("create"), FilePath: gitlab.Ptr("c/d.go"), Content: gitlab.Ptr("package d\n")},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if upd.Title != "Renamed" || upd.FileName != "a.md" || len(upd.Files) != 3 || upd.Files[0].Path != "a.md" || upd.Files[2].Path != "c/d.go" {
			t.Errorf("updated %+v %+v", upd, upd.Files)
		}
		for path, want := range map[string]string{"a.md": "# A\n", "b.txt": "bee 2\n", "c/d.go": "package d\n"} {
			if raw, _, err := c.Snippets.SnippetFileContent(sn.ID, "main", path); err != nil || string(raw) != want {
				t.Errorf("%s: %q, %v", path, raw, err)
			}
		}
		if _, _, err := c.Snippets.UpdateSnippet(sn.ID, &gitlab.UpdateSnippetOptions{Files: &[]*gitlab.UpdateSnippetFileOptions{
			{Action: gitlab.Ptr("delete"), FilePath: gitlab.Ptr("a.md")}, {Action: gitlab.Ptr("delete"), FilePath: gitlab.Ptr("c/d.go")},
		}}); err != nil {
			t.Fatal(err)
		}
		// One file left: the legacy parameters edit it (content, then name).
		one, _, err := c.Snippets.UpdateSnippet(sn.ID, &gitlab.UpdateSnippetOptions{Content: gitlab.Ptr("bee 3\n")})
		if err != nil || one.FileName != "b.txt" || len(one.Files) != 1 {
			t.Fatalf("legacy content: %+v, %v", one, err)
		}
		one, _, err = c.Snippets.UpdateSnippet(sn.ID, &gitlab.UpdateSnippetOptions{FileName: gitlab.Ptr("bee.txt")})
		if err != nil || one.FileName != "bee.txt" || len(one.Files) != 1 || one.Files[0].Path != "bee.txt" {
			t.Fatalf("legacy rename: %+v, %v", one, err)
		}
		if raw, _, err := c.Snippets.SnippetContent(sn.ID); err != nil || string(raw) != "bee 3\n" {
			t.Errorf("after rename %q, %v", raw, err)
		}
		// Each write is one commit by its caller on the default branch.
		log := gitOut(t, snippetRepoDir(s, sn.ID), "log", "--format=%an <%ae> %s", "main")
		if want := "Owner <owner@example.com> Update snippet\nOwner <owner@example.com> Update snippet\nOwner <owner@example.com> Update snippet\n" +
			"Owner <owner@example.com> Update snippet\nOwner <owner@example.com> Initial commit\n"; log != want {
			t.Errorf("history:\n%s", log)
		}

		// The legacy single-file create.
		legacy, _, err := c.Snippets.CreateSnippet(&gitlab.CreateSnippetOptions{Title: gitlab.Ptr("Legacy"), FileName: gitlab.Ptr("x.sh"),
			Content: gitlab.Ptr("echo x\n"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
		if err != nil || legacy.FileName != "x.sh" || len(legacy.Files) != 1 || legacy.Visibility != "private" {
			t.Fatalf("legacy create %+v, %v", legacy, err)
		}

		// Lists: the caller's, public personal ones, all the caller sees.
		other := s.NewUser(t, "other")
		oc := s.Client(t, other.Token)
		mine, _, err := c.Snippets.ListSnippets(&gitlab.ListSnippetsOptions{})
		if err != nil || len(mine) != 2 || mine[0].ID != legacy.ID || mine[1].ID != sn.ID {
			t.Errorf("mine %v, %v", snippetIDs(mine), err)
		}
		pub, _, err := oc.Snippets.ExploreSnippets(&gitlab.ExploreSnippetsOptions{})
		if err != nil || len(pub) != 1 || pub[0].ID != sn.ID {
			t.Errorf("public %v, %v", snippetIDs(pub), err)
		}
		all, _, err := oc.Snippets.ListAllSnippets(&gitlab.ListAllSnippetsOptions{})
		if err != nil || len(all) != 1 {
			t.Errorf("all as other %v, %v", snippetIDs(all), err)
		}
		all, _, err = s.Root(t).Snippets.ListAllSnippets(&gitlab.ListAllSnippetsOptions{})
		if err != nil || len(all) != 2 || all[0].RepositoryStorage != "default" {
			t.Errorf("all as admin %v, %v", snippetIDs(all), err)
		}

		// A project's snippets.
		p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("proj"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
		if err != nil {
			t.Fatal(err)
		}
		ps, _, err := c.ProjectSnippets.CreateSnippet(p.ID, &gitlab.CreateProjectSnippetOptions{Title: gitlab.Ptr("P"), Visibility: gitlab.Ptr(gitlab.PublicVisibility),
			Files: &[]*gitlab.CreateSnippetFileOptions{{FilePath: gitlab.Ptr("main.go"), Content: gitlab.Ptr("package main\n")}}})
		if err != nil {
			t.Fatal(err)
		}
		pweb := fmt.Sprintf("%s/owner/proj/-/snippets/%d", s.URL, ps.ID)
		if ps.ProjectID != p.ID || ps.WebURL != pweb || ps.RawURL != pweb+"/raw" || ps.Files[0].RawURL != pweb+"/raw/main/main.go" {
			t.Errorf("project snippet %+v", ps)
		}
		got, _, err := oc.ProjectSnippets.GetSnippet("owner/proj", ps.ID)
		if err != nil || got.ID != ps.ID || got.FileName != "main.go" {
			t.Errorf("get %+v, %v", got, err)
		}
		if raw, _, err := oc.ProjectSnippets.SnippetContent(p.ID, ps.ID); err != nil || string(raw) != "package main\n" {
			t.Errorf("project raw %q, %v", raw, err)
		}
		list, _, err := oc.ProjectSnippets.ListSnippets(p.ID, &gitlab.ListProjectSnippetsOptions{})
		if err != nil || len(list) != 1 {
			t.Errorf("project list %v, %v", snippetIDs(list), err)
		}
		ps, _, err = c.ProjectSnippets.UpdateSnippet(p.ID, ps.ID, &gitlab.UpdateProjectSnippetOptions{Description: gitlab.Ptr("d"),
			Files: &[]*gitlab.UpdateSnippetFileOptions{{Action: gitlab.Ptr("create"), FilePath: gitlab.Ptr("go.mod"), Content: gitlab.Ptr("module m\n")}}})
		if err != nil || len(ps.Files) != 2 || ps.Description != "d" || ps.FileName != "go.mod" {
			t.Fatalf("project update %+v, %v", ps, err)
		}
		// A project snippet is also /snippets/:id for whoever reads it.
		if got, _, err := oc.Snippets.GetSnippet(ps.ID); err != nil || got.ProjectID != p.ID {
			t.Errorf("project snippet through /snippets/:id %+v, %v", got, err)
		}
		if _, err := c.ProjectSnippets.DeleteSnippet(p.ID, ps.ID); err != nil {
			t.Fatal(err)
		}
		if _, resp, err := c.ProjectSnippets.GetSnippet(p.ID, ps.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted project snippet: %v", err)
		}
		if _, err := c.Snippets.DeleteSnippet(sn.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(snippetRepoDir(s, sn.ID)); !os.IsNotExist(err) {
			t.Errorf("deleted snippet's repository: %v", err)
		}
		if _, resp, err := c.Snippets.GetSnippet(sn.ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("deleted snippet: %v", err)
		}
	})
}

func snippetIDs(list []*gitlab.Snippet) []int64 {
	out := make([]int64, len(list))
	for i, sn := range list {
		out[i] = sn.ID
	}
	return out
}

// TestSnippets_entityShape checks every key of the entity and its JSON
// type, for a user and an administrator, personal and of a project.
func TestSnippets_entityShape(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		id := newSnippet(t, s, owner.Token, "/snippets", "Shape", "internal", "f.txt", "x")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "proj"}}).Want(t, 201).JSON(t, &p)
		pid := newSnippet(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/snippets", "PShape", "private", "g.txt", "y")
		keys := []string{"author", "created_at", "description", "file_name", "files", "http_url_to_repo", "id", "imported", "imported_from",
			"project_id", "raw_url", "ssh_url_to_repo", "title", "updated_at", "visibility", "web_url"}
		for _, c := range []struct {
			path, token string
			admin       bool
		}{
			{"/snippets/" + itoa(id), owner.Token, false}, {"/snippets/" + itoa(id), s.RootToken, true},
			{"/projects/" + itoa(p.ID) + "/snippets/" + itoa(pid), owner.Token, false},
		} {
			m := s.Get(t, c.path, c.token).Want(t, http.StatusOK).Object(t)
			want := keys
			if c.admin {
				want = append(append([]string{}, keys...), "repository_storage")
			}
			var got []string
			for k := range m {
				got = append(got, k)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s keys %v; want %v", c.path, got, want)
			}
			for k, typ := range map[string]string{"id": "number", "title": "string", "visibility": "string", "author": "object",
				"created_at": "string", "updated_at": "string", "web_url": "string", "raw_url": "string", "ssh_url_to_repo": "string",
				"http_url_to_repo": "string", "file_name": "string", "files": "array", "imported": "bool", "imported_from": "string"} {
				if got := usrJSONType(m[k]); got != typ {
					t.Errorf("%s: %s is %s; want %s", c.path, k, got, typ)
				}
			}
			author := m["author"].(map[string]any)
			if author["username"] != "owner" || usrJSONType(author["id"]) != "number" || usrJSONType(author["web_url"]) != "string" {
				t.Errorf("author %v", author)
			}
			if m["imported"] != false || m["imported_from"] != "none" {
				t.Errorf("imported %v %v", m["imported"], m["imported_from"])
			}
			files := m["files"].([]any)
			if len(files) != 1 || usrJSONType(files[0].(map[string]any)["path"]) != "string" || usrJSONType(files[0].(map[string]any)["raw_url"]) != "string" {
				t.Errorf("files %v", files)
			}
		}
		m := s.Get(t, "/snippets/"+itoa(id), owner.Token).Object(t)
		if m["project_id"] != nil || m["description"] != nil {
			t.Errorf("personal project_id %v description %v", m["project_id"], m["description"])
		}
		if m["http_url_to_repo"] != fmt.Sprintf("%s/snippets/%d.git", s.URL, id) {
			t.Errorf("http_url_to_repo %v", m["http_url_to_repo"])
		}
		if ssh, _ := m["ssh_url_to_repo"].(string); !strings.HasSuffix(ssh, fmt.Sprintf(":snippets/%d.git", id)) {
			t.Errorf("ssh_url_to_repo %v", ssh)
		}
		pm := s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+itoa(pid), owner.Token).Object(t)
		if pm["project_id"] != float64(p.ID) || pm["http_url_to_repo"] != fmt.Sprintf("%s/owner/proj/snippets/%d.git", s.URL, pid) {
			t.Errorf("project snippet project_id %v http %v", pm["project_id"], pm["http_url_to_repo"])
		}
		// A list shows the same entity.
		list := s.Get(t, "/snippets", owner.Token).Want(t, http.StatusOK).Array(t)
		if len(list) != 2 || list[0]["id"] != float64(pid) || list[1]["id"] != float64(id) {
			t.Errorf("list %v", list)
		}
	})
}

// TestSnippets_rawWebPaths serves the raw_url and files[].raw_url the API
// hands out, with the API's credentials and checks.
func TestSnippets_rawWebPaths(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, other := s.NewUser(t, "owner"), s.NewUser(t, "other")
		pub := newSnippet(t, s, owner.Token, "/snippets", "Pub", "public", "a b.txt", "spaced", "dir/c.md", "# c")
		priv := newSnippet(t, s, owner.Token, "/snippets", "Priv", "private", "secret.txt", "s3cret")
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "proj", "visibility": "public"}}).Want(t, 201).JSON(t, &p)
		ps := newSnippet(t, s, owner.Token, "/projects/"+itoa(p.ID)+"/snippets", "P", "public", "p.txt", "project file")

		m := s.Get(t, "/snippets/"+itoa(pub), "").Want(t, http.StatusOK).Object(t)
		get := func(u, token string) *apitest.Response {
			return s.Do(t, apitest.Request{Path: u, Token: token})
		}
		get(m["raw_url"].(string), "").Want(t, http.StatusOK).WantText(t, "spaced")
		for _, f := range m["files"].([]any) {
			f := f.(map[string]any)
			want := map[string]string{"a b.txt": "spaced", "dir/c.md": "# c"}[f["path"].(string)]
			r := get(f["raw_url"].(string), "").Want(t, http.StatusOK).WantText(t, want)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("%s: content type %q", f["raw_url"], ct)
			}
		}
		pm := s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+itoa(ps), "").Want(t, http.StatusOK).Object(t)
		get(pm["raw_url"].(string), "").Want(t, http.StatusOK).WantText(t, "project file")
		get(pm["files"].([]any)[0].(map[string]any)["raw_url"].(string), "").Want(t, http.StatusOK).WantText(t, "project file")

		// A private snippet: its author's token in the header or the
		// query; nobody else.
		raw := fmt.Sprintf("%s/-/snippets/%d/raw", s.URL, priv)
		get(raw, "").Want(t, http.StatusNotFound)
		get(raw, other.Token).Want(t, http.StatusNotFound)
		get(raw, owner.Token).Want(t, http.StatusOK).WantText(t, "s3cret")
		get(raw+"?private_token="+url.QueryEscape(owner.Token), "").Want(t, http.StatusOK).WantText(t, "s3cret")
		get(raw, "glpat-not-a-token").Want(t, http.StatusUnauthorized)
		get(fmt.Sprintf("%s/-/snippets/%d/raw/main/secret.txt", s.URL, priv), owner.Token).Want(t, http.StatusOK).WantText(t, "s3cret")
		// Unknown refs, files and paths.
		get(fmt.Sprintf("%s/-/snippets/%d/raw/nope/secret.txt", s.URL, priv), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Reference Not Found"}`)
		get(fmt.Sprintf("%s/-/snippets/%d/raw/main/nope.txt", s.URL, priv), owner.Token).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 File Not Found"}`)
		get(fmt.Sprintf("%s/-/snippets/%d/raw/main/..%%2Fsecret.txt", s.URL, priv), owner.Token).Want(t, http.StatusBadRequest)
		for _, bad := range []string{"/-/snippets/x/raw", "/-/snippets/99999999999999999999/raw", "/-/snippets/-1/raw", "/-/snippets/1/rawx",
			"/-/snippets/1/raw/main/", "/-/snippets/1/raw//x", "/owner/-/snippets/1/raw", "/owner/../owner/proj/-/snippets/1/raw",
			fmt.Sprintf("/-/snippets/%d/raw/main/%%00", priv), fmt.Sprintf("/-/snippets/%d/raw/%s/x", priv, strings.Repeat("r", 4000))} {
			if st := get(s.URL+bad, owner.Token).Status; st != http.StatusNotFound && st != http.StatusBadRequest {
				t.Errorf("%s: %d", bad, st)
			}
		}
		s.Do(t, apitest.Request{Method: "HEAD", Path: raw, Token: owner.Token}).Want(t, http.StatusOK)
		get(fmt.Sprintf("%s/owner/proj/-/snippets/%d/raw", s.URL, pub), "").Want(t, http.StatusNotFound)
		get(fmt.Sprintf("%s/%d/-/snippets/%d/raw", s.URL, p.ID, ps), "").Want(t, http.StatusNotFound)
		s.Do(t, apitest.Request{Method: "POST", Path: raw, Token: owner.Token}).Want(t, http.StatusNotFound)
	})
}

// TestSnippets_userAgentDetail records the creating request's user agent
// and address, shown to administrators only.
func TestSnippets_userAgentDetail(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "owner")
		var sn struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: owner.Token, Header: map[string]string{"User-Agent": "snippet-test/1.0"},
			JSON: map[string]any{"title": "UA", "files": snippetFiles("a", "b")}}).Want(t, 201).JSON(t, &sn)
		// A user agent that is no text, or too long, is kept as text.
		var odd struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/snippets", Token: owner.Token, Header: map[string]string{"User-Agent": "odd\xff" + strings.Repeat("u", 5000)},
			JSON: map[string]any{"title": "UA", "files": snippetFiles("a", "b")}}).Want(t, 201).JSON(t, &odd)
		if ua := s.Get(t, "/snippets/"+itoa(odd.ID)+"/user_agent_detail", s.RootToken).Want(t, http.StatusOK).Object(t)["user_agent"].(string); !strings.HasPrefix(ua, "oddu") || len(ua) != 1023 {
			t.Errorf("odd user agent kept as %q…, %d bytes", ua[:min(len(ua), 10)], len(ua))
		}
		path := "/snippets/" + itoa(sn.ID) + "/user_agent_detail"
		s.Get(t, path, s.RootToken).Want(t, http.StatusOK).WantBody(t, `{"user_agent":"snippet-test/1.0","ip_address":"127.0.0.1","akismet_submitted":false}`)
		s.Get(t, path, owner.Token).Want(t, http.StatusForbidden).WantBody(t, `{"message":"403 Forbidden"}`)
		s.Get(t, path, "").Want(t, http.StatusUnauthorized)
		s.Get(t, "/snippets/"+itoa(s.AbsentID(t))+"/user_agent_detail", s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		var p struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": "proj"}}).Want(t, 201).JSON(t, &p)
		var ps struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects/" + itoa(p.ID) + "/snippets", Token: owner.Token, Header: map[string]string{"User-Agent": ""},
			JSON: map[string]any{"title": "UA", "visibility": "private", "files": snippetFiles("a", "b")}}).Want(t, 201).JSON(t, &ps)
		ppath := "/projects/" + itoa(p.ID) + "/snippets/" + itoa(ps.ID) + "/user_agent_detail"
		s.Get(t, ppath, s.RootToken).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 UserAgentDetail Not Found"}`)
		s.Get(t, ppath, owner.Token).Want(t, http.StatusForbidden)
		// Another project's snippet is not this project's.
		s.Get(t, "/projects/"+itoa(p.ID)+"/snippets/"+itoa(sn.ID)+"/user_agent_detail", s.RootToken).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Not found"}`)
	})
}
