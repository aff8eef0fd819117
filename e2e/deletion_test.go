package e2e

import (
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// TestDeletion_immediateByDefault: with the default settings
// (delayed_project_deletion false) a deleted project or group is removed in
// the background at once: 202, then 404 (within a second on an idle
// server; the test allows for a loaded one and logs the time), its
// repository gone, nothing left to restore.
func TestDeletion_immediateByDefault(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		var g, p, inGroup struct{ ID int64 }
		s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: alice.Token, JSON: map[string]any{"name": "Doomed", "path": "doomed"}}).Want(t, 201).JSON(t, &g)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "gone", "initialize_with_readme": true}}).Want(t, 201).JSON(t, &p)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "inner", "namespace_id": g.ID}}).Want(t, 201).JSON(t, &inGroup)
		repo := repoDir(t, s, p.ID)

		path := "/projects/" + itoa(p.ID)
		s.Do(t, apitest.Request{Method: "DELETE", Path: path, Token: alice.Token}).Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
		start := time.Now()
		waitGone(t, s, path, alice.Token)
		t.Logf("project gone %v after the delete", time.Since(start))
		s.Do(t, apitest.Request{Method: "POST", Path: path + "/restore", Token: alice.Token}).Want(t, http.StatusNotFound)
		for deadline := time.Now().Add(5 * time.Second); ; {
			if _, err := osStat(repo); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("repository still on disk after deletion")
			}
			sleep()
		}

		gpath := "/groups/" + itoa(g.ID)
		s.Do(t, apitest.Request{Method: "DELETE", Path: gpath, Token: alice.Token}).Want(t, http.StatusAccepted)
		start = time.Now()
		waitGone(t, s, gpath, alice.Token)
		waitGone(t, s, "/projects/"+itoa(inGroup.ID), alice.Token)
		t.Logf("group and its project gone %v after the delete", time.Since(start))
	})
}
