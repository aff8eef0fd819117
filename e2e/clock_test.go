package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"quarry/internal/apitest"
	cfgpkg "quarry/internal/config"
	"quarry/internal/storetest"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// TestClock_oneClockEverywhere: the process has one clock. Records carry
// its time, and expiry follows it: a token valid today is expired once the
// clock passes its date, with no waiting.
func TestClock_oneClockEverywhere(t *testing.T) {
	t.Parallel()
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	// apitest.Each would share one option, and so one clock variable,
	// between the databases' servers running in parallel: each server is
	// started here with a clock of its own.
	apitest.EachTarget(t, func(t *testing.T, target storetest.Target) {
		clock := &testClock{now: start}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		alice := s.NewUser(t, "alice")
		u := s.Get(t, "/users/"+itoa(alice.ID), s.RootToken).Want(t, http.StatusOK).Object(t)
		if u["created_at"] != "2031-05-06T07:08:09.000Z" {
			t.Errorf("user created_at %v; want the clock's time", u["created_at"])
		}
		p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: alice.Token, JSON: map[string]any{"name": "timed"}}).Want(t, http.StatusCreated).Object(t)
		if p["created_at"] != "2031-05-06T07:08:09.000Z" || p["last_activity_at"] != "2031-05-06T07:08:09.000Z" {
			t.Errorf("project times %v, %v", p["created_at"], p["last_activity_at"])
		}
		var tok struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(alice.ID) + "/personal_access_tokens", Token: s.RootToken,
			JSON: map[string]any{"name": "short", "scopes": []string{"api"}, "expires_at": "2031-05-07"}}).Want(t, http.StatusCreated).JSON(t, &tok)
		got := s.Get(t, "/personal_access_tokens/self", tok.Token).Want(t, http.StatusOK).Object(t)
		if got["active"] != true || got["expired"] != false {
			t.Errorf("fresh token %v", got)
		}
		clock.Set(start.Add(48 * time.Hour))
		s.Get(t, "/user", tok.Token).Want(t, http.StatusUnauthorized)
		got = s.Get(t, "/personal_access_tokens/"+itoa(tok.ID), s.RootToken).Want(t, http.StatusOK).Object(t)
		if got["active"] != false || got["expired"] != true {
			t.Errorf("token after its date %v", got)
		}
	})
}
