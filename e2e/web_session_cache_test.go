package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// TestWeb_sessionCache: a session's reads are remembered for a moment,
// but what this process changes shows at once (a user renamed, blocked,
// signed out: TestWeb_sessions), and what another process sharing the
// database changes (a session deleted, a user blocked, written there
// directly) ends the session within a second (the cache's bound), well
// before the 3 seconds this test waits at most.
func TestWeb_sessionCache(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		ctx := context.Background()
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		webProject(t, s, alice.Token, "secret", "private")
		webProject(t, s, bob.Token, "hidden", "private")

		b := newBrowser(s)
		b.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		b.get(t, "/alice/secret").want(t, http.StatusOK)
		b.get(t, "/alice/secret").want(t, http.StatusOK)

		// A write of the user here shows on the next page.
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/users/%d", alice.ID), Token: s.RootToken,
			JSON: map[string]any{"name": "Alice Renamed"}}).Want(t, http.StatusOK)
		b.get(t, "/alice/secret").want(t, http.StatusOK).contains(t, `title="Alice Renamed"`)

		// The session deleted by another process.
		if err := s.App.DB.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteWebSession(ctx, auth.Digest(b.cookie)) }); err != nil {
			t.Fatal(err)
		}
		waitSignedOut(t, b, "/alice/secret")

		// The user blocked by another process.
		c := newBrowser(s)
		c.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		c.get(t, "/bob/hidden").want(t, http.StatusOK)
		err := s.App.DB.InTx(ctx, func(tx *store.Tx) error {
			u, err := tx.UserByID(ctx, bob.ID)
			if err != nil {
				return err
			}
			u.State = model.UserBlocked
			return tx.UpdateUser(ctx, &u)
		})
		if err != nil {
			t.Fatal(err)
		}
		waitSignedOut(t, c, "/bob/hidden")
	})
}

// waitSignedOut gets path until the browser is sent to sign in, for at
// most 3 seconds.
func waitSignedOut(t *testing.T, b *browser, path string) {
	t.Helper()
	cookie := b.cookie
	deadline := time.Now().Add(3 * time.Second)
	for {
		b.cookie = cookie
		p := b.get(t, path)
		if p.Status == http.StatusFound {
			return
		}
		if p.Status != http.StatusOK {
			t.Fatalf("GET %s: %d; want 200 (remembered) or 302", path, p.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: still signed in 3 s after the session ended elsewhere", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
