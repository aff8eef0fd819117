package e2e

// Black-box tests of authentication (reference api-core.md §1.5, §3):
// where a token may be presented, what bad, revoked and expired tokens
// get, what each scope allows, and accounts that may not use the API.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/oauth2"

	"quarry/internal/apitest"
	"quarry/internal/model"
)

func TestAuth_Token_locations(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "carrier")
		cases := []struct {
			name string
			req  apitest.Request
		}{
			{"PRIVATE-TOKEN header", apitest.Request{Path: "/user", Token: u.Token}},
			{"private-token header, lower case", apitest.Request{Path: "/user", Header: map[string]string{"private-token": u.Token}}},
			{"Authorization: Bearer", apitest.Request{Path: "/user", Header: map[string]string{"Authorization": "Bearer " + u.Token}}},
			{"Authorization: bearer, lower case", apitest.Request{Path: "/user", Header: map[string]string{"Authorization": "bearer " + u.Token}}},
			{"private_token query parameter", apitest.Request{Path: "/user?private_token=" + url.QueryEscape(u.Token)}},
			{"private_token form field", apitest.Request{Method: "PUT", Path: "/user/status", Form: url.Values{"private_token": {u.Token}, "message": {"via form"}}}},
			{"private_token JSON field", apitest.Request{Method: "PUT", Path: "/user/status", JSON: map[string]any{"private_token": u.Token, "message": "via json"}}},
		}
		for _, c := range cases {
			r := s.Do(t, c.req)
			if r.Status != http.StatusOK {
				t.Errorf("%s: status %d; want 200 (%s)", c.name, r.Status, r.Body)
				continue
			}
			if c.req.Path == "/user" {
				if m := r.Object(t); m["username"] != "carrier" {
					t.Errorf("%s: acted as %v; want carrier", c.name, m["username"])
				}
			}
		}
		if m := s.Get(t, "/users/carrier/status", "").Object(t); m["message"] != "via json" {
			t.Errorf("status set through body token got %v; want via json", m["message"])
		}
		// The official client sends PRIVATE-TOKEN; with an OAuth client it
		// sends Bearer.
		me, _, err := s.Client(t, u.Token).Users.CurrentUser()
		if err != nil {
			t.Fatal(err)
		}
		if me.Username != "carrier" {
			t.Errorf("client acted as %s; want carrier", me.Username)
		}
		bearer := gitlab.OAuthTokenSource{TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: u.Token})}
		oc, err := gitlab.NewAuthSourceClient(bearer, gitlab.WithBaseURL(s.URL+"/api/v4"), gitlab.WithoutRetries())
		if err != nil {
			t.Fatal(err)
		}
		me, _, err = oc.Users.CurrentUser()
		if err != nil {
			t.Fatal(err)
		}
		if me.Username != "carrier" {
			t.Errorf("bearer client acted as %s; want carrier", me.Username)
		}
	})
}

func TestAuth_Token_wrong(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "carrier")
		bad := "glpat-" + strings.Repeat("x", 32)
		cases := []struct {
			name string
			req  apitest.Request
		}{
			{"header", apitest.Request{Path: "/user", Token: bad}},
			{"bearer", apitest.Request{Path: "/user", Header: map[string]string{"Authorization": "Bearer " + bad}}},
			{"query", apitest.Request{Path: "/user?private_token=" + bad}},
			{"garbage", apitest.Request{Path: "/user", Token: "not even a token"}},
			// A bad token is refused even where anonymous access is allowed.
			{"public list with username", apitest.Request{Path: "/users?username=carrier", Token: bad}},
			{"public status", apitest.Request{Path: "/users/carrier/status", Token: bad}},
			{"write", apitest.Request{Method: "POST", Path: "/users", Token: bad, JSON: map[string]any{}}},
		}
		for _, c := range cases {
			r := s.Do(t, c.req)
			usrWant(t, c.name, r, http.StatusUnauthorized, bodyUnauthorized)
		}
		_, resp, err := s.Client(t, bad).Users.CurrentUser()
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("client with a bad token got err %v; want 401", err)
		}
	})
}

func TestAuth_Token_revoked(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "carrier")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: u.Token}).Want(t, http.StatusNoContent)
		for _, req := range []apitest.Request{
			{Path: "/user", Token: u.Token},
			{Path: "/user", Header: map[string]string{"Authorization": "Bearer " + u.Token}},
			{Path: "/users?username=carrier", Token: u.Token},
			{Method: "PUT", Path: "/user/status", Token: u.Token, JSON: map[string]any{"emoji": "coffee"}},
		} {
			r := s.Do(t, req)
			usrWant(t, req.Method+" "+req.Path, r, http.StatusUnauthorized, bodyRevoked)
			h := r.Header.Get("WWW-Authenticate")
			if !strings.HasPrefix(h, `Bearer realm="The API"`) || !strings.Contains(h, `error="invalid_token"`) ||
				!strings.Contains(h, `error_description="Token was revoked. You have to re-authorize from the user."`) {
				t.Errorf("%s %s: WWW-Authenticate got %q; want the Bearer invalid_token challenge", req.Method, req.Path, h)
			}
		}
	})
}

func TestAuth_Token_expired(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "carrier")
		_, old := tokIssue(t, s, u.ID, "old", "2020-01-01")
		r := s.Get(t, "/user", old)
		usrWant(t, "expired token", r, http.StatusUnauthorized, bodyExpired)
		h := r.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(h, `Bearer realm="The API"`) || !strings.Contains(h, `error="invalid_token"`) ||
			!strings.Contains(h, `error_description="Token is expired. You can either do re-authorization or token refresh."`) {
			t.Errorf("WWW-Authenticate got %q; want the Bearer invalid_token challenge", h)
		}
		usrWant(t, "expired token on a public endpoint", s.Get(t, "/users?username=carrier", old), http.StatusUnauthorized, bodyExpired)
		usrWant(t, "expired token on its own endpoint", s.Get(t, "/personal_access_tokens/self", old), http.StatusUnauthorized, bodyExpired)
		// A token is valid up to the day before its expiry date.
		today := time.Now().UTC().Format("2006-01-02")
		tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
		_, endsToday := tokIssue(t, s, u.ID, "today", today)
		_, endsTomorrow := tokIssue(t, s, u.ID, "tomorrow", tomorrow)
		usrWant(t, "token expiring today", s.Get(t, "/user", endsToday), http.StatusUnauthorized, bodyExpired)
		usrWant(t, "token expiring tomorrow", s.Get(t, "/user", endsTomorrow), http.StatusOK, "")
	})
}

func TestAuth_Scopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "scoped")
		other := s.NewUser(t, "other")
		tok := map[string]string{}
		for _, sc := range []string{"api", "read_api", "read_user", "read_repository", "write_repository", "sudo", "self_rotate", "admin_mode"} {
			tok[sc] = s.NewToken(t, u.ID, sc)
		}
		otherPath := usrPath(other.ID)
		type call struct {
			method, path string
			body         map[string]any
		}
		var (
			listUsers   = call{"GET", "/users", nil}
			getUser     = call{"GET", otherPath, nil}
			currentUser = call{"GET", "/user", nil}
			ownStatus   = call{"GET", "/user/status", nil}
			userStatus  = call{"GET", otherPath + "/status", nil}
			prefs       = call{"GET", "/user/preferences", nil}
			setStatus   = call{"PUT", "/user/status", map[string]any{"emoji": "coffee"}}
			setPrefs    = call{"PUT", "/user/preferences", map[string]any{"view_diffs_file_by_file": true, "show_whitespace_in_diffs": true}}
			projects    = call{"GET", "/projects", nil}
			tokensList  = call{"GET", "/personal_access_tokens", nil}
			version     = call{"GET", "/version", nil}
		)
		const ok = ""
		cases := []struct {
			scope string
			call  call
			want  string // ok, or the insufficient_scope "scope" value
		}{
			{"api", listUsers, ok}, {"api", currentUser, ok}, {"api", setStatus, ok}, {"api", setPrefs, ok}, {"api", projects, ok},
			{"read_api", listUsers, ok}, {"read_api", getUser, ok}, {"read_api", currentUser, ok}, {"read_api", projects, ok},
			{"read_api", tokensList, ok}, {"read_api", prefs, ok},
			{"read_api", setStatus, "api"}, {"read_api", setPrefs, "api"},
			{"read_user", listUsers, ok}, {"read_user", getUser, ok}, {"read_user", currentUser, ok}, {"read_user", ownStatus, ok},
			{"read_user", userStatus, ok}, {"read_user", prefs, ok}, {"read_user", version, ok},
			{"read_user", projects, "api read_api"}, {"read_user", tokensList, "api read_api"},
			{"read_user", setStatus, "api"}, {"read_user", setPrefs, "api"},
			{"read_repository", listUsers, "api read_api read_user"}, {"read_repository", currentUser, "api read_api read_user"},
			{"read_repository", getUser, "api read_api read_user"}, {"read_repository", projects, "api read_api"},
			{"read_repository", setStatus, "api"},
			{"write_repository", listUsers, "api read_api read_user"}, {"write_repository", currentUser, "api read_api read_user"},
			{"write_repository", setStatus, "api"},
			{"sudo", currentUser, "api read_api read_user"},
			{"self_rotate", listUsers, "api read_api read_user"},
			{"admin_mode", currentUser, "api read_api read_user"},
		}
		for _, c := range cases {
			req := apitest.Request{Method: c.call.method, Path: c.call.path, Token: tok[c.scope]}
			if c.call.body != nil {
				req.JSON = c.call.body
			}
			r := s.Do(t, req)
			name := c.scope + " " + c.call.method + " " + c.call.path
			if c.want == ok {
				if r.Status != http.StatusOK {
					t.Errorf("%s: status %d; want 200 (%s)", name, r.Status, r.Body)
				}
				continue
			}
			usrWant(t, name, r, http.StatusForbidden, scopeBody(c.want))
		}
		// Scopes never widen what the user may do: an api token of a
		// non-admin still cannot create users.
		usrWant(t, "api token of a non-admin POST /users", s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: tok["api"],
			JSON: map[string]any{"email": "x@example.com", "name": "X", "username": "xx", "password": "long-enough-1"}}), http.StatusForbidden, bodyForbidden)
		// Through the client: read_api can list but not create.
		c := s.Client(t, tok["read_api"])
		if _, _, err := c.Users.ListUsers(&gitlab.ListUsersOptions{}); err != nil {
			t.Errorf("read_api client list: %v", err)
		}
		_, resp, err := c.Users.SetUserStatus(&gitlab.UserStatusOptions{Message: gitlab.Ptr("x")})
		if err == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("read_api client SetUserStatus got err %v; want 403", err)
		}
	})
}

func TestAuth_Anonymous(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "open")
		cases := []struct {
			method, path string
			status       int
			want         string
		}{
			{"GET", "/user", 401, bodyUnauthorized},
			{"GET", "/user/status", 401, bodyUnauthorized},
			{"GET", "/user/preferences", 401, bodyUnauthorized},
			{"GET", "/personal_access_tokens", 401, bodyUnauthorized},
			{"GET", "/personal_access_tokens/self", 401, bodyUnauthorized},
			{"POST", "/users", 401, bodyUnauthorized},
			{"PUT", usrPath(u.ID), 401, bodyUnauthorized},
			{"DELETE", usrPath(u.ID), 401, bodyUnauthorized},
			{"POST", usrPath(u.ID) + "/block", 401, bodyUnauthorized},
			{"POST", tokPath(u.ID), 401, bodyUnauthorized},
			{"GET", "/users", 403, `{"message":"403 Forbidden - Not authorized to access /api/v4/users"}`},
			{"GET", usrPath(u.ID), 403, `{"message":"403 Forbidden - Not authorized!"}`},
			{"GET", "/users?username=open", 200, ""},
			{"GET", usrPath(u.ID) + "/status", 200, ""},
			{"GET", "/users/open/status", 200, ""},
		}
		for _, c := range cases {
			r := s.Do(t, apitest.Request{Method: c.method, Path: c.path})
			usrWant(t, "anonymous "+c.method+" "+c.path, r, c.status, c.want)
		}
	})
}

func TestAuth_BlockedUser(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "barred")
		s.Do(t, apitest.Request{Method: "POST", Path: usrPath(u.ID) + "/block", Token: s.RootToken}).Want(t, http.StatusCreated)
		for _, req := range []apitest.Request{
			{Path: "/user", Token: u.Token},
			{Path: "/users", Token: u.Token},
			{Path: "/users?username=barred", Token: u.Token},
			{Path: "/personal_access_tokens/self", Token: u.Token},
			{Method: "PUT", Path: "/user/status", Token: u.Token, JSON: map[string]any{"emoji": "coffee"}},
			{Path: "/user", Header: map[string]string{"Authorization": "Bearer " + u.Token}},
		} {
			usrWant(t, "blocked "+req.Method+" "+req.Path, s.Do(t, req), http.StatusForbidden, bodyBlocked)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: usrPath(u.ID) + "/unblock", Token: s.RootToken}).Want(t, http.StatusCreated)
		usrWant(t, "after unblock", s.Get(t, "/user", u.Token), http.StatusOK, "")
		// Other blocked states are refused too.
		usrEdit(t, s, u.ID, func(x *model.User) { x.State = model.UserBanned })
		r := s.Get(t, "/user", u.Token)
		if r.Status != http.StatusForbidden {
			t.Errorf("banned user: status %d; want 403 (%s)", r.Status, r.Body)
		}
		usrEdit(t, s, u.ID, func(x *model.User) { x.State = model.UserBlockedPendingApproval })
		usrWant(t, "pending approval", s.Get(t, "/user", u.Token), http.StatusForbidden,
			`{"message":"403 Forbidden - Your account is pending approval from your administrator and hence blocked."}`)
	})
}

func TestAuth_DeactivatedUser(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "sleeper") // token never used: deactivatable
		s.Do(t, apitest.Request{Method: "POST", Path: usrPath(u.ID) + "/deactivate", Token: s.RootToken}).Want(t, http.StatusCreated).WantBody(t, `true`)
		for _, req := range []apitest.Request{
			{Path: "/user", Token: u.Token},
			{Path: "/users", Token: u.Token},
			{Method: "PUT", Path: "/user/status", Token: u.Token, JSON: map[string]any{"emoji": "coffee"}},
		} {
			usrWant(t, "deactivated "+req.Method+" "+req.Path, s.Do(t, req), http.StatusForbidden, bodyDeactivated)
		}
		// A refused request is not activity: the user stays dormant.
		if m := s.Get(t, usrPath(u.ID), s.RootToken).Object(t); m["state"] != "deactivated" || m["last_activity_on"] != nil {
			t.Errorf("after refused requests got state %v last_activity_on %v; want deactivated, none", m["state"], m["last_activity_on"])
		}
		s.Do(t, apitest.Request{Method: "POST", Path: usrPath(u.ID) + "/activate", Token: s.RootToken}).Want(t, http.StatusCreated)
		usrWant(t, "after activate", s.Get(t, "/user", u.Token), http.StatusOK, "")
	})
}

func TestAuth_TokenUseRecorded(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "user")
		id := tokSelfID(t, s, u.Token) // first use
		m := s.Get(t, "/personal_access_tokens/"+itoa(id), s.RootToken).Want(t, http.StatusOK).Object(t)
		at, _ := m["last_used_at"].(string)
		ts, err := time.Parse(time.RFC3339, at)
		if err != nil || time.Since(ts) > time.Minute || time.Until(ts) > time.Minute {
			t.Errorf("last_used_at got %v; want about now", m["last_used_at"])
		}
		if m := s.Get(t, usrPath(u.ID), s.RootToken).Object(t); m["last_activity_on"] != time.Now().UTC().Format("2006-01-02") {
			t.Errorf("last_activity_on got %v; want today", m["last_activity_on"])
		}
		// A token that was never used has none.
		fresh := tokCreate(t, s, u.ID, map[string]any{"name": "unused", "scopes": []string{"api"}})
		if m := s.Get(t, "/personal_access_tokens/"+itoa(usrID(t, fresh)), s.RootToken).Object(t); m["last_used_at"] != nil {
			t.Errorf("unused token last_used_at got %v; want null", m["last_used_at"])
		}
	})
}

func TestAuth_LinksOmitPrivateToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		for _, n := range []string{"a1", "a2", "a3"} {
			usrCreate(t, s, n, nil)
		}
		for _, q := range []string{"per_page=1&page=2", "pagination=keyset&per_page=1&order_by=id&sort=asc"} {
			r := s.Get(t, "/users?"+q+"&private_token="+url.QueryEscape(s.RootToken), "").Want(t, http.StatusOK)
			l := r.Header.Get("Link")
			if l == "" {
				t.Errorf("%s: no Link header", q)
			}
			if strings.Contains(l, s.RootToken) || strings.Contains(l, "private_token") {
				t.Errorf("%s: Link leaks the token: %s", q, l)
			}
		}
	})
}
