package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// webWikiPage writes a wiki page through the API: created, or updated when
// it exists.
func webWikiPage(t testing.TB, s *apitest.Server, token string, project any, slug, title, content, format string) {
	t.Helper()
	base := fmt.Sprintf("/projects/%v/wikis", project)
	if s.Get(t, base+"/"+url.PathEscape(slug), token).Status == http.StatusOK {
		s.Do(t, apitest.Request{Method: "PUT", Path: base + "/" + url.PathEscape(slug), Token: token,
			JSON: map[string]any{"content": content}}).Want(t, http.StatusOK)
		return
	}
	s.Do(t, apitest.Request{Method: "POST", Path: base, Token: token,
		JSON: map[string]any{"title": title, "content": content, "format": format}}).Want(t, http.StatusCreated)
}

var wikiVersionLink = regexp.MustCompile(`href="(/alice/demo/-/wikis/home\?version_id=([0-9a-f]{40}))"`)

// TestWeb_wiki: a project's wiki pages rendered (Markdown sanitised, its
// relative links the wiki's, other formats as text), the pages list,
// a page's history with each version opening that version, /-/wikis
// opening the home page or the list, and the Wiki tab.
func TestWeb_wiki(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := webProject(t, s, alice.Token, "demo", "public")
		empty := webProject(t, s, alice.Token, "empty", "public")
		webWikiPage(t, s, alice.Token, p["id"], "home", "home", "# Welcome v1\n", "markdown")
		webWikiPage(t, s, alice.Token, p["id"], "home", "home", "# Welcome v2\n", "markdown")
		webWikiPage(t, s, alice.Token, p["id"], "home", "home",
			"# Welcome v3\n\nSee [the guide](docs/guide) and [out](https://example.com/x).\n\n<script>alert('wiki')</script><img src=x onerror=alert(2)>\n", "markdown")
		webWikiPage(t, s, alice.Token, p["id"], "docs/guide", "docs/guide", "Back [home](../home).\n", "markdown")
		webWikiPage(t, s, alice.Token, p["id"], "notes", "notes", "= Notes\n<b>bold</b> *text*\n", "asciidoc")

		anon := newBrowser(s)
		r := anon.get(t, "/alice/demo/-/wikis").want(t, http.StatusFound)
		if r.Header.Get("Location") != "/alice/demo/-/wikis/home" {
			t.Errorf("/-/wikis: Location %q", r.Header.Get("Location"))
		}
		r = anon.get(t, "/alice/empty/-/wikis").want(t, http.StatusFound)
		if r.Header.Get("Location") != "/alice/empty/-/wikis/pages" {
			t.Errorf("/-/wikis without home: Location %q", r.Header.Get("Location"))
		}
		anon.get(t, "/alice/empty/-/wikis/pages").want(t, http.StatusOK).contains(t, `data-testid="wiki-empty"`)
		_ = empty

		home := anon.get(t, "/alice/demo/-/wikis/home").want(t, http.StatusOK)
		wantSecurityHeaders(t, "/alice/demo/-/wikis/home", home)
		home.contains(t, `data-testid="wiki-title">home<`, "<h1>Welcome v3</h1>", `href="/alice/demo/-/wikis/docs/guide"`,
			`href="https://example.com/x"`, `data-testid="wiki-last-edit"`, `href="/alice/demo/-/wikis/home/history"`,
			`data-testid="wiki-tab"`).lacks(t, "<script>alert", "onerror", "Welcome v2")
		anon.get(t, "/alice/demo/-/wikis/docs/guide").want(t, http.StatusOK).contains(t, `href="/alice/demo/-/wikis/home"`)
		// Other formats are shown as text, escaped.
		anon.get(t, "/alice/demo/-/wikis/notes").want(t, http.StatusOK).contains(t, "&lt;b&gt;bold&lt;/b&gt;").lacks(t, "<b>bold</b>")

		anon.get(t, "/alice/demo/-/wikis/pages").want(t, http.StatusOK).contains(t, `href="/alice/demo/-/wikis/home"`,
			`href="/alice/demo/-/wikis/docs/guide"`, `href="/alice/demo/-/wikis/notes"`)

		hist := anon.get(t, "/alice/demo/-/wikis/home/history").want(t, http.StatusOK)
		links := wikiVersionLink.FindAllStringSubmatch(hist.Body, -1)
		if len(links) != 3 {
			t.Fatalf("history lists %d versions; want 3:\n%.2000s", len(links), hist.Body)
		}
		for i, want := range []string{"Welcome v3", "Welcome v2", "Welcome v1"} {
			pg := anon.get(t, strings.ReplaceAll(links[i][1], "&amp;", "&")).want(t, http.StatusOK).contains(t, "<h1>"+want+"</h1>")
			if i > 0 {
				pg.contains(t, `data-testid="wiki-old-version"`)
			}
			// The API answers the same version.
			api := s.Get(t, fmt.Sprintf("/projects/%v/wikis/home?version=%s", p["id"], links[i][2]), "").Want(t, http.StatusOK).Object(t)
			if !strings.Contains(api["content"].(string), want) {
				t.Errorf("API version %s: %q", links[i][2], api["content"])
			}
		}

		// An attachment: the page's image is served from the wiki, as a
		// file never run as a page of the site.
		png := "\x89PNG\r\n\x1a\nnot really"
		att := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/wikis/attachments", p["id"]), Token: alice.Token,
			Files: map[string]apitest.File{"file": {Name: "shot.png", Content: []byte(png)}}}).Want(t, http.StatusCreated).Object(t)
		webWikiPage(t, s, alice.Token, p["id"], "gallery", "gallery", "Look: "+att["link"].(map[string]any)["markdown"].(string)+"\n", "markdown")
		src := "/alice/demo/-/wikis/" + att["file_path"].(string)
		anon.get(t, "/alice/demo/-/wikis/gallery").want(t, http.StatusOK).contains(t, `src="`+src+`"`)
		img := anon.get(t, src).want(t, http.StatusOK)
		if img.Body != png || img.Header.Get("Content-Type") != "image/png" || !strings.Contains(img.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("attachment: %q %v", img.Body, img.Header)
		}
		anon.get(t, "/alice/demo/-/wikis/uploads/nothing/here.png").want(t, http.StatusNotFound)

		// What is not there is a 404 for anyone who sees the wiki.
		anon.get(t, "/alice/demo/-/wikis/nothing-here").want(t, http.StatusNotFound)
		anon.get(t, "/alice/demo/-/wikis/nothing-here/history").want(t, http.StatusNotFound)
		anon.get(t, "/alice/demo/-/wikis/home?version_id=zz").want(t, http.StatusNotFound)
		anon.get(t, "/alice/demo/-/wikis/home?version_id=0123456789abcdef0123456789abcdef01234567").want(t, http.StatusNotFound)
		anon.get(t, "/alice/demo/-/wikis/home/history?page=0").want(t, http.StatusBadRequest)
	})
}

// TestWeb_wikiAccess: the wiki's access level decides as the API's: a
// private wiki is open to the project's members only (a sign-in for the
// anonymous, a 404 for another user), a disabled one to no one, and the
// Wiki tab shows where the wiki is open; a private project's wiki is its
// members'.
func TestWeb_wikiAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob, carol := s.NewUser(t, "alice"), s.NewUser(t, "bob"), s.NewUser(t, "carol")
		p := webProject(t, s, alice.Token, "demo", "public")
		sec := webProject(t, s, alice.Token, "secret", "private")
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/members", p["id"]), Token: alice.Token,
			JSON: map[string]any{"user_id": carol.ID, "access_level": 10}}).Want(t, http.StatusCreated)
		webWikiPage(t, s, alice.Token, p["id"], "home", "home", "# Public home\n", "markdown")
		webWikiPage(t, s, alice.Token, sec["id"], "home", "home", "# Secret home\n", "markdown")

		anon, bb, cb, ab := newBrowser(s), newBrowser(s), newBrowser(s), newBrowser(s)
		bb.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		cb.signIn(t, "carol", webPassword).want(t, http.StatusSeeOther)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		paths := []string{"/alice/demo/-/wikis/home", "/alice/demo/-/wikis/pages", "/alice/demo/-/wikis/home/history", "/alice/demo/-/wikis"}
		type viewer struct {
			b     *browser
			token string
		}
		viewers := map[string]viewer{"anonymous": {anon, ""}, "bob": {bb, bob.Token}, "carol": {cb, carol.Token}, "alice": {ab, alice.Token}}
		// check asserts each viewer's answer on every wiki path and on the
		// overview's tab, and that the API agrees.
		check := func(level string, open map[string]bool) {
			t.Helper()
			for name, v := range viewers {
				apiStatus := s.Get(t, fmt.Sprintf("/projects/%v/wikis/home", p["id"]), v.token).Status
				if (apiStatus == http.StatusOK) != open[name] {
					t.Errorf("%s wiki, %s: API %d; open %v", level, name, apiStatus, open[name])
				}
				for _, path := range paths {
					r := v.b.get(t, path)
					switch {
					case open[name]:
						if r.Status != http.StatusOK && r.Status != http.StatusFound {
							t.Errorf("%s wiki, %s, %s: %d; want the page", level, name, path, r.Status)
						}
					case name == "anonymous":
						if r.Status != http.StatusFound || !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in?redirect_to=") {
							t.Errorf("%s wiki, anonymous, %s: %d %q; want a sign-in", level, path, r.Status, r.Header.Get("Location"))
						}
					default:
						if r.Status != http.StatusNotFound || strings.Contains(r.Body, "Public home") {
							t.Errorf("%s wiki, %s, %s: %d; want 404", level, name, path, r.Status)
						}
					}
				}
				tab := strings.Contains(v.b.get(t, "/alice/demo").want(t, http.StatusOK).Body, `data-testid="wiki-tab"`)
				if tab != open[name] {
					t.Errorf("%s wiki, %s: Wiki tab %v", level, name, tab)
				}
			}
		}
		check("enabled", map[string]bool{"anonymous": true, "bob": true, "carol": true, "alice": true})
		ab.get(t, "/alice/demo/-/wikis/home").contains(t, "Public home")
		setLevel := func(level string) {
			s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%v", p["id"]), Token: alice.Token,
				JSON: map[string]any{"wiki_access_level": level}}).Want(t, http.StatusOK)
		}
		setLevel("private")
		check("private", map[string]bool{"carol": true, "alice": true})
		setLevel("disabled")
		check("disabled", map[string]bool{})

		// A private project: its wiki is as hidden as it is.
		for _, path := range []string{"/alice/secret/-/wikis/home", "/alice/secret/-/wikis/pages", "/alice/secret/-/wikis/home/history", "/alice/secret/-/wikis"} {
			r := anon.get(t, path).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(path); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q; want %q", path, r.Header.Get("Location"), want)
			}
			bb.get(t, path).want(t, http.StatusNotFound).lacks(t, "Secret home")
		}
		ab.get(t, "/alice/secret/-/wikis/home").want(t, http.StatusOK).contains(t, "<h1>Secret home</h1>")
	})
}
