package e2e

import (
	"encoding/base64"
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
		// Cursors Quarry never made (keys of another type than the
		// order's, out of range) on every keyset list: never a 500.
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: u.Token,
			JSON: map[string]any{"name": "cursored", "initialize_with_readme": true}}).Want(t, http.StatusCreated)
		p := "/projects/texter%2Fcursored"
		for _, list := range []string{"/users?order_by=name", "/users?order_by=username", "/users?order_by=created_at", "/users?order_by=id",
			p + "/merge_requests?order_by=created_at", p + "/merge_requests?order_by=updated_at", p + "/merge_requests?order_by=title",
			"/groups?order_by=name", "/groups?order_by=path", "/groups?order_by=id", p + "/pipelines?order_by=id", p + "/pipelines?order_by=updated_at",
			p + "/jobs?order_by=id", p + "/releases?order_by=released_at", p + "/releases?order_by=created_at", p + "/events?sort=asc",
			p + "/repository/tags?order_by=name", p + "/labels?order_by=name", p + "/milestones?order_by=title", "/projects?order_by=id",
			p + "/members?order_by=name", "/snippets/public?order_by=id", p + "/deployments?order_by=created_at", p + "/environments?order_by=name"} {
			for _, key := range []string{`{"key":"zz","id":5}`, `{"key":12,"id":5}`, `{"key":-99999999999999999,"id":5}`} {
				if r := s.Get(t, list+"&pagination=keyset&cursor="+cursorOf(key), u.Token); r.Status >= 500 {
					t.Errorf("%s, cursor %s: %d %s", list, key, r.Status, r.Body)
				}
			}
		}
	})
}

// cursorOf encodes a keyset cursor as Quarry's Link headers carry them.
func cursorOf(doc string) string { return base64.RawURLEncoding.EncodeToString([]byte(doc)) }
