package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

func TestTokenAPI_create(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		u := s.NewUser(t, "holder")
		path := "/users/" + itoa(u.ID) + "/personal_access_tokens"
		r := s.Do(t, apitest.Request{Method: "POST", Path: path, Token: s.RootToken, JSON: map[string]any{
			"name": "ci", "scopes": "api,read_user", "expires_at": "2099-01-02", "description": "for CI"}}).Want(t, 201).Object(t)
		tok, _ := r["token"].(string)
		if !strings.HasPrefix(tok, "glpat-") || r["name"] != "ci" || r["expires_at"] != "2099-01-02" || r["active"] != true ||
			r["revoked"] != false || r["user_id"] != float64(u.ID) || strings.Join(toStrings(r["scopes"]), ",") != "api,read_user" {
			t.Errorf("created %v", r)
		}
		// The secret is shown once.
		got := s.Get(t, "/personal_access_tokens/"+itoa(int64(r["id"].(float64))), s.RootToken).Want(t, 200).Object(t)
		if _, ok := got["token"]; ok {
			t.Error("token shown again")
		}
		// Default expiry: a year ahead.
		r = s.Do(t, apitest.Request{Method: "POST", Path: path, Token: s.RootToken, JSON: map[string]any{"name": "x", "scopes": []string{"read_api"}}}).Want(t, 201).Object(t)
		if exp, _ := r["expires_at"].(string); exp < time.Now().AddDate(0, 11, 0).Format("2006-01-02") {
			t.Errorf("default expiry %v", r["expires_at"])
		}
		for _, c := range []struct {
			token  string
			body   map[string]any
			status int
			want   string
		}{
			{s.RootToken, map[string]any{"scopes": []string{"api"}}, 400, `{"error":"name is missing"}`},
			{s.RootToken, map[string]any{"name": "x"}, 400, `{"error":"scopes is missing"}`},
			{s.RootToken, map[string]any{"name": "x", "scopes": []string{"everything"}}, 400, `{"error":"scopes does not have a valid value"}`},
			{s.RootToken, map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": "2001-01-01"}, 400, ""},
			{s.RootToken, map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": "soon"}, 400, `{"error":"expires_at is invalid"}`},
			{u.Token, map[string]any{"name": "x", "scopes": []string{"api"}}, 403, `{"message":"403 Forbidden"}`},
		} {
			r := s.Do(t, apitest.Request{Method: "POST", Path: path, Token: c.token, JSON: c.body})
			if r.Status != c.status {
				t.Errorf("%v: %d; want %d (%s)", c.body, r.Status, c.status, r.Body)
			} else if c.want != "" {
				r.WantBody(t, c.want)
			}
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/users/" + itoa(unknownID) + "/personal_access_tokens", Token: s.RootToken,
			JSON: map[string]any{"name": "x", "scopes": []string{"api"}}}).Want(t, 404).WantBody(t, `{"message":"404 User Not Found"}`)
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestTokenAPI_listGetRevokeRotate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		c := s.Client(t, alice.Token)
		own, _, err := c.PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(own) != 1 || own[0].UserID != int64(alice.ID) {
			t.Errorf("alice's tokens %+v", own)
		}
		s.Get(t, "/personal_access_tokens?user_id="+itoa(bob.ID), alice.Token).Want(t, 401)
		if all := s.Get(t, "/personal_access_tokens?per_page=100", s.RootToken).Array(t); len(all) < 3 {
			t.Errorf("admin sees %d tokens", len(all))
		}
		if got := s.Get(t, "/personal_access_tokens?user_id="+itoa(bob.ID), s.RootToken).Array(t); len(got) != 1 {
			t.Errorf("user_id filter %d", len(got))
		}
		self, _, err := c.PersonalAccessTokens.GetSinglePersonalAccessToken()
		if err != nil {
			t.Fatal(err)
		}
		if self.ID != own[0].ID || self.LastUsedAt == nil {
			t.Errorf("self %+v", self)
		}
		bobTokens := s.Get(t, "/personal_access_tokens", bob.Token).Array(t)
		bobID := itoa(int64(bobTokens[0]["id"].(float64)))
		s.Get(t, "/personal_access_tokens/"+bobID, alice.Token).Want(t, 401)
		s.Get(t, "/personal_access_tokens/"+itoa(unknownID), s.RootToken).Want(t, 404)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + bobID, Token: alice.Token}).Want(t, 400)

		// Rotate: the new token works, the old one is revoked.
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(self.ID) + "/rotate", Token: alice.Token}).Want(t, 200).Object(t)
		fresh := r["token"].(string)
		if exp := r["expires_at"].(string); exp != time.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02") {
			t.Errorf("rotated expiry %s", exp)
		}
		s.Get(t, "/user", alice.Token).Want(t, 401).WantBody(t, `{"error":"invalid_token","error_description":"Token was revoked. You have to re-authorize from the user."}`)
		s.Get(t, "/user", fresh).Want(t, 200)
		if got := s.Get(t, "/personal_access_tokens?state=inactive", fresh).Array(t); len(got) != 1 {
			t.Errorf("inactive tokens %d", len(got))
		}
		if got := s.Get(t, "/personal_access_tokens?revoked=false", fresh).Array(t); len(got) != 1 {
			t.Errorf("not revoked %d", len(got))
		}
		// Revoke itself.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: fresh}).Want(t, 204)
		s.Get(t, "/user", fresh).Want(t, 401)
		// Admin revokes bob's.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + bobID, Token: s.RootToken}).Want(t, 204)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + bobID, Token: s.RootToken}).Want(t, 400)
		s.Get(t, "/user", bob.Token).Want(t, 401)
	})
}

func TestAuth_credentialsAndScopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "carrier")
		// Three ways to present a token.
		s.Do(t, apitest.Request{Path: "/user", Header: map[string]string{"Authorization": "Bearer " + u.Token}}).Want(t, 200)
		s.Get(t, "/user?private_token="+u.Token, "").Want(t, 200)
		s.Get(t, "/user", u.Token).Want(t, 200)
		s.Get(t, "/user", "glpat-wrong").Want(t, 401).WantBody(t, `{"message":"401 Unauthorized"}`)
		s.Get(t, "/users?username=root", "glpat-wrong").Want(t, 401)
		// Expired.
		_, expired, err := s.App.Tokens.Issue(context.Background(), u.ID, tokens.CreateInput{Name: "old", Scopes: []model.Scope{model.ScopeAPI}, ExpiresAt: "2020-01-01"}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Get(t, "/user", expired).Want(t, 401).WantBody(t, `{"error":"invalid_token","error_description":"Token is expired. You can either do re-authorization or token refresh."}`)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
		}
		// Scopes.
		readAPI := s.NewToken(t, u.ID, "read_api")
		readUser := s.NewToken(t, u.ID, "read_user")
		readRepo := s.NewToken(t, u.ID, "read_repository")
		writeRepo := s.NewToken(t, u.ID, "write_repository")
		s.Get(t, "/projects", readAPI).Want(t, 200)
		s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: readAPI, JSON: map[string]any{"name": "x"}}).Want(t, 403).
			WantBody(t, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api"}`)
		s.Get(t, "/users", readUser).Want(t, 200)
		s.Get(t, "/user", readUser).Want(t, 200)
		s.Get(t, "/version", readUser).Want(t, 200)
		s.Get(t, "/projects", readUser).Want(t, 403).
			WantBody(t, `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api read_api"}`)
		s.Get(t, "/users", readRepo).Want(t, 403)
		s.Get(t, "/users", writeRepo).Want(t, 403)
		// The token's own endpoint takes any scope.
		s.Get(t, "/personal_access_tokens/self", readRepo).Want(t, 200)
	})
}
