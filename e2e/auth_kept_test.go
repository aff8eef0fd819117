package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// TestAuth_keptUsersAcrossProcesses: authentication keeps the users of
// tokens decoded by their version; a token used through one server (B)
// sees every change made through another (A) on the same database at its
// next request — blocking, unblocking, becoming an administrator, the
// token revoked. (On SQLite A and B are one server.)
func TestAuth_keptUsersAcrossProcesses(t *testing.T) {
	apitest.Each(t, func(t *testing.T, a *apitest.Server) {
		b := a
		if a.Target.DatabaseURL != "" {
			b = apitest.StartIn(t, a.Target, a.DataDir)
		}
		u := a.NewUser(t, "keptuser")
		user := func(t *testing.T, want int) map[string]any {
			t.Helper()
			var m map[string]any
			for i := 0; i < 2; i++ { // the second read is from the kept copy
				r := b.Get(t, "/user", u.Token)
				if r.Status != want {
					t.Fatalf("GET /user through B: status %d; want %d (%s)", r.Status, want, r.Body)
				}
				if want == http.StatusOK {
					m = r.Object(t)
				}
			}
			return m
		}
		if m := user(t, http.StatusOK); m["username"] != "keptuser" || m["is_admin"] != nil {
			t.Errorf("user %v", m) // is_admin is shown to administrators only
		}
		a.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", u.ID), Token: a.RootToken}).Want(t, http.StatusCreated)
		usrWant(t, "blocked through A", b.Get(t, "/user", u.Token), http.StatusForbidden, bodyBlocked)
		a.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/unblock", u.ID), Token: a.RootToken}).Want(t, http.StatusCreated)
		user(t, http.StatusOK)
		a.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", u.ID), Token: a.RootToken,
			JSON: map[string]any{"admin": true}}).Want(t, http.StatusOK)
		if m := user(t, http.StatusOK); m["is_admin"] != true {
			t.Errorf("after A made the user an administrator, B shows is_admin %v", m["is_admin"])
		}
		a.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: u.Token}).Want(t, http.StatusNoContent)
		usrWant(t, "revoked through A", b.Get(t, "/user", u.Token), http.StatusUnauthorized, bodyRevoked)
	})
}
