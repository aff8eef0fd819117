package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// TestWeb_releases: a release's page at its _links.self and the releases
// list: the notes rendered and sanitised (relative links the tag's
// files), the tag, commit and asset links; a private project's releases
// are a sign-in for the anonymous and a 404 for an outsider.
func TestWeb_releases(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		s.NewUser(t, "bob")
		p := webProject(t, s, alice.Token, "demo", "public")
		sec := webProject(t, s, alice.Token, "secret", "private")
		rel := s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/releases", p["id"]), Token: alice.Token,
			JSON: map[string]any{"tag_name": "release/1.0", "ref": "main", "name": "First <i>one</i>",
				"description": "Read [the guide](docs/guide.md).\n\n<script>alert('rel')</script>",
				"assets":      map[string]any{"links": []map[string]any{{"name": "Binary", "url": "https://example.com/bin"}}}}}).
			Want(t, http.StatusCreated).Object(t)
		self := strings.TrimPrefix(rel["_links"].(map[string]any)["self"].(string), s.URL)
		if self != "/alice/demo/-/releases/release%2F1.0" {
			t.Errorf("_links.self %q", self)
		}
		anon := newBrowser(s)
		pg := anon.get(t, self).want(t, http.StatusOK)
		wantSecurityHeaders(t, self, pg)
		pg.contains(t, `data-testid="release-name">First &lt;i&gt;one&lt;/i&gt;`, `href="/alice/demo/-/tree/release/1.0"`,
			`href="/alice/demo/-/blob/release/1.0/docs/guide.md"`, `href="https://example.com/bin"`, `data-testid="release-notes"`).
			lacks(t, "<script>alert", "<i>one</i>")
		anon.get(t, "/alice/demo/-/releases").want(t, http.StatusOK).contains(t, `href="/alice/demo/-/releases/release%2F1.0"`)
		anon.get(t, "/alice/demo/-/releases/v9").want(t, http.StatusNotFound)

		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/releases", sec["id"]), Token: alice.Token,
			JSON: map[string]any{"tag_name": "v1", "ref": "main", "description": "Hush"}}).Want(t, http.StatusCreated)
		bb, ab := newBrowser(s), newBrowser(s)
		bb.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		for _, path := range []string{"/alice/secret/-/releases/v1", "/alice/secret/-/releases"} {
			r := anon.get(t, path).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(path); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q", path, r.Header.Get("Location"))
			}
			bb.get(t, path).want(t, http.StatusNotFound).lacks(t, "Hush")
			ab.get(t, path).want(t, http.StatusOK).contains(t, "Hush")
		}
	})
}
