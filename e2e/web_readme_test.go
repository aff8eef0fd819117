package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// TestWeb_readmeCached: the overview's README is rendered once per blob,
// and what it shows follows the repository: a changed README shows its
// new text, the same bytes renamed from README.md to README show as
// plain text, not as the Markdown rendered before.
func TestWeb_readmeCached(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{
			"name": "readme", "visibility": "public", "initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
		commit := func(actions ...map[string]any) {
			t.Helper()
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/commits", p["id"]), Token: alice.Token,
				JSON: map[string]any{"branch": "main", "commit_message": "readme", "actions": actions}}).Want(t, http.StatusCreated)
		}
		b := newBrowser(s)
		commit(map[string]any{"action": "update", "file_path": "README.md", "content": "First *words*.\n"})
		for range 2 { // rendered, then from the cache
			b.get(t, "/alice/readme").want(t, http.StatusOK).contains(t, "First <em>words</em>.")
		}
		commit(map[string]any{"action": "update", "file_path": "README.md", "content": "Second *words*.\n"})
		b.get(t, "/alice/readme").want(t, http.StatusOK).contains(t, "Second <em>words</em>.").lacks(t, "First")
		commit(map[string]any{"action": "move", "previous_path": "README.md", "file_path": "README"})
		b.get(t, "/alice/readme").want(t, http.StatusOK).contains(t, "<pre>Second *words*.\n</pre>").lacks(t, "<em>words</em>")
	})
}
