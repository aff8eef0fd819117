package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// webSnippet makes a snippet through the API (under project when not nil)
// and returns the API's answer.
func webSnippet(t testing.TB, s *apitest.Server, token string, project any, title, visibility string, files map[string]string) map[string]any {
	t.Helper()
	path := "/snippets"
	if project != nil {
		path = fmt.Sprintf("/projects/%v/snippets", project)
	}
	var fs []map[string]any
	for name, content := range files {
		fs = append(fs, map[string]any{"file_path": name, "content": content})
	}
	return s.Do(t, apitest.Request{Method: "POST", Path: path, Token: token, JSON: map[string]any{
		"title": title, "description": "A *snippet* <script>alert('d')</script>", "visibility": visibility, "files": fs}}).
		Want(t, http.StatusCreated).Object(t)
}

// TestWeb_snippets: a snippet's page at its web_url (personal and a
// project's): the title, the description rendered and sanitised, each
// file highlighted with its raw link (which serves the file); a private
// snippet is a sign-in for the anonymous and a 404 for another user, as
// the API decides.
func TestWeb_snippets(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		p := webProject(t, s, alice.Token, "demo", "public")
		files := map[string]string{"hello.go": "package main\n\nfunc main() { println(\"<b>hi</b>\") }\n", "notes.txt": "plain\n"}
		personal := webSnippet(t, s, alice.Token, nil, "My <i>snippet</i>", "public", files)
		inProject := webSnippet(t, s, alice.Token, p["id"], "Project snippet", "public", map[string]string{"run.sh": "echo hi\n"})
		private := webSnippet(t, s, alice.Token, nil, "Private one", "private", map[string]string{"secret.txt": "hush\n"})
		privInProject := webSnippet(t, s, alice.Token, p["id"], "Private in project", "private", map[string]string{"x.txt": "x\n"})

		webPath := func(sn map[string]any) string {
			t.Helper()
			u := sn["web_url"].(string)
			if !strings.HasPrefix(u, s.URL+"/") {
				t.Fatalf("web_url %q", u)
			}
			return strings.TrimPrefix(u, s.URL)
		}
		anon, bb, ab := newBrowser(s), newBrowser(s), newBrowser(s)
		bb.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)

		pp := webPath(personal)
		if pp != fmt.Sprintf("/-/snippets/%v", personal["id"]) {
			t.Errorf("personal web_url %q", pp)
		}
		pg := anon.get(t, pp).want(t, http.StatusOK)
		wantSecurityHeaders(t, pp, pg)
		pg.contains(t, `data-testid="snippet-title">My &lt;i&gt;snippet&lt;/i&gt;`, "<em>snippet</em>", `class="chroma"`,
			"hello.go", "notes.txt", `href="`+pp+`/raw/main/hello.go"`, `href="`+pp+`/raw/main/notes.txt"`, "&lt;b&gt;hi&lt;/b&gt;").
			lacks(t, "<script>alert", "<i>snippet</i>", "<b>hi</b>")
		// The raw links serve the files.
		for _, f := range personal["files"].([]any) {
			fm := f.(map[string]any)
			raw := strings.TrimPrefix(fm["raw_url"].(string), s.URL)
			if !strings.Contains(pg.Body, `href="`+raw+`"`) {
				t.Errorf("page lacks the file's raw_url %s", raw)
			}
			r := anon.get(t, raw).want(t, http.StatusOK)
			if r.Body != files[fm["path"].(string)] {
				t.Errorf("%s: %q", raw, r.Body)
			}
		}

		ip := webPath(inProject)
		if want := fmt.Sprintf("/alice/demo/-/snippets/%v", inProject["id"]); ip != want {
			t.Errorf("project snippet web_url %q; want %q", ip, want)
		}
		anon.get(t, ip).want(t, http.StatusOK).contains(t, `data-testid="snippet-title">Project snippet`, `data-testid="project-name">demo`,
			`href="`+ip+`/raw/main/run.sh"`)
		// Under another project's path the snippet is not there: as
		// anything the viewer may not see (the anonymous may sign in),
		// and an id that is no number is a 404.
		webProject(t, s, alice.Token, "other", "public")
		anon.get(t, fmt.Sprintf("/alice/other/-/snippets/%v", inProject["id"])).want(t, http.StatusFound)
		bb.get(t, fmt.Sprintf("/alice/other/-/snippets/%v", inProject["id"])).want(t, http.StatusNotFound)
		anon.get(t, "/-/snippets/abc").want(t, http.StatusNotFound)
		anon.get(t, "/-/snippets/999999").want(t, http.StatusFound) // as any snippet the anonymous may not see
		bb.get(t, "/-/snippets/999999").want(t, http.StatusNotFound)

		for _, sn := range []map[string]any{private, privInProject} {
			path := webPath(sn)
			r := anon.get(t, path).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(path); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q", path, r.Header.Get("Location"))
			}
			bb.get(t, path).want(t, http.StatusNotFound).lacks(t, "hush")
			s.Get(t, fmt.Sprintf("/snippets/%v", sn["id"]), bob.Token).Want(t, http.StatusNotFound)
			ab.get(t, path).want(t, http.StatusOK).contains(t, `data-testid="snippet-title">`+sn["title"].(string))
		}
	})
}
