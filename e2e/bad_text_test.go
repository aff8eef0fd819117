package e2e

import (
	"net/http"
	"net/url"
	"testing"

	"quarry/internal/apitest"
)

// TestBadText_neverA500: bytes that are not text (invalid UTF-8 in a form,
// a NUL character in JSON) are the caller's error, never a 500 — on
// either database.
func TestBadText_neverA500(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "texter")
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, Form: url.Values{"name": {"bad\xff\xfe"}}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"error":"name is invalid"}`)
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token, JSON: map[string]any{"name": "nul", "description": "a\x00b"}})
		if r.Status >= 500 {
			t.Errorf("NUL in a description: %d %s", r.Status, r.Body)
		}
		// A cursor that names something no list sorts by.
		s.Get(t, "/users?pagination=keyset&order_by=name&cursor=eyJrIjp7fSwiaWQiOjF9", s.RootToken).Want(t, http.StatusBadRequest)
	})
}
