package e2e

// Black-box tests of personal access tokens (reference api-core.md §3.4):
// issuing them for a user, listing, reading, revoking and rotating.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/apitest"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

// tokPath is /users/:id/personal_access_tokens.
func tokPath(userID int64) string { return usrPath(userID) + "/personal_access_tokens" }

// tokCreate issues a token for a user as root and returns the body.
func tokCreate(t *testing.T, s *apitest.Server, userID int64, body map[string]any) map[string]any {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "POST", Path: tokPath(userID), Token: s.RootToken, JSON: body}).Want(t, http.StatusCreated).Object(t)
}

// tokIssue stores a token with any expiry date (also past ones), bypassing
// the API's checks; it returns the token's id and secret.
func tokIssue(t *testing.T, s *apitest.Server, userID int64, name, expires string, scopes ...model.Scope) (int64, string) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []model.Scope{model.ScopeAPI}
	}
	tok, secret, err := s.App.Tokens.Issue(context.Background(), userID, tokens.CreateInput{Name: name, Scopes: scopes, ExpiresAt: expires}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok.ID, secret
}

// tokNames lists the names of a token list, sorted.
func tokNames(list []map[string]any) string {
	out := make([]string, len(list))
	for i, m := range list {
		out[i], _ = m["name"].(string)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// tokSelfID is the id of the token used for a request.
func tokSelfID(t *testing.T, s *apitest.Server, token string) int64 {
	t.Helper()
	return usrID(t, s.Get(t, "/personal_access_tokens/self", token).Want(t, http.StatusOK).Object(t))
}

const (
	bodyRevoked = `{"error":"invalid_token","error_description":"Token was revoked. You have to re-authorize from the user."}`
	bodyExpired = `{"error":"invalid_token","error_description":"Token is expired. You can either do re-authorization or token refresh."}`
)

// tokenFields are the fields of the PersonalAccessToken entity.
var tokenFields = map[string]string{"id": "number", "name": "string", "revoked": "bool", "created_at": "string",
	"description": "string|null", "scopes": "array", "user_id": "number", "last_used_at": "null|string", "active": "bool",
	"expires_at": "string|null"}

// ---------------------------------------------------------------------------
// POST /users/:user_id/personal_access_tokens

func TestTokens_Create_arrayScopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		exp := gitlab.ISOTime(time.Date(2099, 1, 2, 0, 0, 0, 0, time.UTC))
		tok, resp, err := s.Root(t).Users.CreatePersonalAccessToken(u.ID, &gitlab.CreatePersonalAccessTokenOptions{
			Name: gitlab.Ptr("ci"), Scopes: &[]string{"api", "read_user"}, ExpiresAt: &exp, Description: gitlab.Ptr("for CI")})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("status got %d; want 201", resp.StatusCode)
		}
		if tok.ID == 0 || tok.Name != "ci" || tok.UserID != u.ID || tok.Revoked || !tok.Active || tok.Token == "" ||
			strings.Join(tok.Scopes, ",") != "api,read_user" || tok.ExpiresAt == nil || tok.ExpiresAt.String() != "2099-01-02" ||
			tok.Description != "for CI" || tok.CreatedAt == nil || tok.LastUsedAt != nil {
			t.Errorf("created token %+v", tok)
		}
		// The raw body: every field, with JSON types.
		m := tokCreate(t, s, u.ID, map[string]any{"name": "raw", "scopes": []string{"read_api"}, "expires_at": "2099-03-04"})
		want := map[string]string{"token": "string", "expired": "bool"}
		for k, v := range tokenFields {
			want[k] = v
		}
		usrWantTypes(t, "created token", m, want)
		if m["expires_at"] != "2099-03-04" || m["active"] != true || m["revoked"] != false || m["expired"] != false ||
			m["user_id"] != float64(u.ID) || fmt.Sprint(m["scopes"]) != "[read_api]" || m["last_used_at"] != nil {
			t.Errorf("created token body %v", m)
		}
		if _, err := time.Parse(time.RFC3339, m["created_at"].(string)); err != nil {
			t.Errorf("created_at %v: %v", m["created_at"], err)
		}
		// The secret authenticates as the user, with the given scope.
		secret := m["token"].(string)
		if me := s.Get(t, "/user", secret).Want(t, http.StatusOK).Object(t); me["username"] != "holder" {
			t.Errorf("new token acts as %v; want holder", me["username"])
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: "/user/status", Token: secret, JSON: map[string]any{"emoji": "coffee"}}).
			Want(t, http.StatusForbidden).WantBody(t, scopeBody("api"))
		// Each secret is unique.
		if tok.Token == secret {
			t.Error("two tokens share a secret")
		}
	})
}

func TestTokens_Create_commaScopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		cases := []struct {
			name string
			req  apitest.Request
		}{
			{"JSON comma string", apitest.Request{JSON: map[string]any{"name": "a", "scopes": "api,read_user"}}},
			{"JSON comma string with spaces", apitest.Request{JSON: map[string]any{"name": "b", "scopes": "api, read_user"}}},
			{"form comma string", apitest.Request{Form: url.Values{"name": {"c"}, "scopes": {"api,read_user"}}}},
			{"form array", apitest.Request{Form: url.Values{"name": {"d"}, "scopes[]": {"api", "read_user"}}}},
			{"query string", apitest.Request{Form: url.Values{}, Path: tokPath(u.ID) + "?name=e&scopes=api,read_user"}},
		}
		for _, c := range cases {
			c.req.Method, c.req.Token = "POST", s.RootToken
			if c.req.Path == "" {
				c.req.Path = tokPath(u.ID)
			}
			r := s.Do(t, c.req)
			if r.Status != http.StatusCreated {
				t.Errorf("%s: status %d; want 201 (%s)", c.name, r.Status, r.Body)
				continue
			}
			if m := r.Object(t); fmt.Sprint(m["scopes"]) != "[api read_user]" {
				t.Errorf("%s: scopes got %v; want [api read_user]", c.name, m["scopes"])
			}
		}
	})
}

func TestTokens_Create_defaultExpiry(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		m := tokCreate(t, s, u.ID, map[string]any{"name": "x", "scopes": []string{"api"}})
		exp, _ := m["expires_at"].(string)
		// GitLab requires expiry; without one it sets the maximum lifetime
		// (about a year, exact default unconfirmed).
		if exp < time.Now().UTC().AddDate(0, 11, 0).Format("2006-01-02") || exp > time.Now().UTC().AddDate(1, 1, 7).Format("2006-01-02") {
			t.Errorf("default expires_at got %v; want about a year ahead", m["expires_at"])
		}
	})
}

func TestTokens_Create_tokenShownOnce(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		m := tokCreate(t, s, u.ID, map[string]any{"name": "once", "scopes": []string{"api"}})
		secret := m["token"].(string)
		id := itoa(usrID(t, m))
		reads := map[string]*apitest.Response{
			"admin GET /:id":     s.Get(t, "/personal_access_tokens/"+id, s.RootToken),
			"owner GET /:id":     s.Get(t, "/personal_access_tokens/"+id, secret),
			"GET /self":          s.Get(t, "/personal_access_tokens/self", secret),
			"owner list":         s.Get(t, "/personal_access_tokens", secret),
			"admin list user_id": s.Get(t, "/personal_access_tokens?user_id="+itoa(u.ID), s.RootToken),
		}
		for name, r := range reads {
			if r.Status != http.StatusOK {
				t.Errorf("%s: status %d; want 200 (%s)", name, r.Status, r.Body)
				continue
			}
			if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"token"`) {
				t.Errorf("%s shows the secret again: %s", name, r.Body)
			}
		}
	})
}

func TestTokens_Create_badInput(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		u := s.NewUser(t, "holder")
		path := tokPath(u.ID)
		cases := []struct {
			name   string
			path   string
			body   map[string]any
			status int
			want   string // exact body; "" checks the status and a message string
		}{
			{"missing name", path, map[string]any{"scopes": []string{"api"}}, 400, `{"error":"name is missing"}`},
			{"missing scopes", path, map[string]any{"name": "x"}, 400, `{"error":"scopes is missing"}`},
			// Grape reports each missing parameter on its own.
			{"missing both", path, map[string]any{}, 400, `{"error":"name is missing, scopes is missing"}`},
			{"unknown scope", path, map[string]any{"name": "x", "scopes": []string{"everything"}}, 400, `{"error":"scopes does not have a valid value"}`},
			{"one unknown scope among valid", path, map[string]any{"name": "x", "scopes": []string{"api", "root_powers"}}, 400, `{"error":"scopes does not have a valid value"}`},
			{"unknown scope in comma string", path, map[string]any{"name": "x", "scopes": "api,nope"}, 400, `{"error":"scopes does not have a valid value"}`},
			{"bad expires_at", path, map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": "soon"}, 400, `{"error":"expires_at is invalid"}`},
			{"past expires_at", path, map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": "2001-01-01"}, 400, ""},
			{"yesterday", path, map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")}, 400, ""},
			{"unknown user", tokPath(unknownID), map[string]any{"name": "x", "scopes": []string{"api"}}, 404, bodyUserNotFound},
			{"non-numeric user", "/users/holder/personal_access_tokens", map[string]any{"name": "x", "scopes": []string{"api"}}, 404, bodyNoRoute},
		}
		for _, c := range cases {
			r := s.Do(t, apitest.Request{Method: "POST", Path: c.path, Token: s.RootToken, JSON: c.body})
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d (%s)", c.name, r.Status, c.status, r.Body)
				continue
			}
			if c.want != "" {
				usrBody(t, c.name, r, c.want)
				continue
			}
			var body map[string]any
			r.JSON(t, &body)
			if msg, ok := body["message"].(string); !ok || msg == "" {
				t.Errorf("%s: body %s; want {\"message\":\"...\"}", c.name, r.Body)
			}
		}
		// Only the NewUser token exists.
		if got := s.Get(t, "/personal_access_tokens?user_id="+itoa(u.ID), s.RootToken).Array(t); len(got) != 1 {
			t.Errorf("failed creates left %d tokens; want 1", len(got))
		}
	})
}

func TestTokens_Create_forbidden(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		other := s.NewUser(t, "other")
		path := tokPath(u.ID)
		good := map[string]any{"name": "x", "scopes": []string{"api"}}
		cases := []struct {
			name, token string
			body        map[string]any
			status      int
			want        string
		}{
			{"anonymous", "", good, 401, bodyUnauthorized},
			{"anonymous, bad params", "", map[string]any{}, 401, bodyUnauthorized},
			{"the user itself", u.Token, good, 403, bodyForbidden},
			{"another user", other.Token, good, 403, bodyForbidden},
			// GitLab checks authenticated_as_admin! in a before block, ahead
			// of parameter validation.
			{"non-admin, bad params", other.Token, map[string]any{}, 403, bodyForbidden},
			{"admin read_api token", s.NewToken(t, s.RootID(t), "read_api"), good, 403, scopeBody("api")},
		}
		for _, c := range cases {
			r := s.Do(t, apitest.Request{Method: "POST", Path: path, Token: c.token, JSON: c.body})
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d (%s)", c.name, r.Status, c.status, r.Body)
				continue
			}
			usrBody(t, c.name, r, c.want)
		}
		if got := s.Get(t, "/personal_access_tokens?user_id="+itoa(u.ID), s.RootToken).Array(t); len(got) != 1 {
			t.Errorf("refused creates left %d tokens; want 1", len(got))
		}
	})
}

// ---------------------------------------------------------------------------
// GET /personal_access_tokens

// tokWorld gives alice four tokens in every state and bob one.
type tokWorld struct {
	alice, bob apitest.User
	ciDeploy   string // active, api
	oldCI      int64  // revoked
	expired    int64
}

func buildTokWorld(t *testing.T, s *apitest.Server) tokWorld {
	t.Helper()
	w := tokWorld{alice: s.NewUser(t, "alice"), bob: s.NewUser(t, "bob")}
	w.ciDeploy = tokCreate(t, s, w.alice.ID, map[string]any{"name": "ci-deploy", "scopes": []string{"api"}})["token"].(string)
	var oldSecret string
	w.oldCI, oldSecret = tokIssue(t, s, w.alice.ID, "old-ci", "2099-01-01")
	s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: oldSecret}).Want(t, http.StatusNoContent)
	w.expired, _ = tokIssue(t, s, w.alice.ID, "expired-one", "2020-01-01")
	return w
}

func TestTokens_List_ownOnly(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := buildTokWorld(t, s)
		list, resp, err := s.Client(t, w.alice.Token).PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || len(list) != 4 {
			t.Errorf("alice lists %d tokens (status %d); want her 4", len(list), resp.StatusCode)
		}
		for _, tok := range list {
			if tok.UserID != w.alice.ID || tok.Token != "" {
				t.Errorf("alice's list has %+v; want only her tokens, without secrets", tok)
			}
		}
		for _, m := range s.Get(t, "/personal_access_tokens", w.alice.Token).Want(t, http.StatusOK).Array(t) {
			usrWantTypes(t, "listed token", m, tokenFields)
		}
		if got := tokNames(s.Get(t, "/personal_access_tokens", w.bob.Token).Want(t, http.StatusOK).Array(t)); got != "test" {
			t.Errorf("bob lists %s; want only his test token", got)
		}
		// Naming oneself is fine; naming someone else is 401.
		if got := s.Get(t, "/personal_access_tokens?user_id="+itoa(w.bob.ID), w.bob.Token).Want(t, http.StatusOK).Array(t); len(got) != 1 {
			t.Errorf("bob with own user_id lists %d; want 1", len(got))
		}
		s.Get(t, "/personal_access_tokens?user_id="+itoa(w.bob.ID), w.alice.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
		s.Get(t, "/personal_access_tokens?user_id="+itoa(s.RootID(t)), w.alice.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
		_, resp, err = s.Client(t, w.alice.Token).PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{UserID: gitlab.Ptr(w.bob.ID)})
		if err == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("client list of bob's tokens as alice got err %v; want 401", err)
		}
		s.Get(t, "/personal_access_tokens", "").Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
	})
}

func TestTokens_List_admin(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		w := buildTokWorld(t, s)
		all := s.Get(t, "/personal_access_tokens?per_page=100", s.RootToken).Want(t, http.StatusOK).Array(t)
		owners := map[float64]int{}
		for _, m := range all {
			owners[m["user_id"].(float64)]++
		}
		if owners[float64(w.alice.ID)] != 4 || owners[float64(w.bob.ID)] != 1 || owners[float64(s.RootID(t))] < 1 {
			t.Errorf("admin list owners got %v; want alice 4, bob 1, root's own", owners)
		}
		if got := tokNames(s.Get(t, "/personal_access_tokens?user_id="+itoa(w.alice.ID), s.RootToken).Want(t, http.StatusOK).Array(t)); got != "ci-deploy,expired-one,old-ci,test" {
			t.Errorf("admin user_id=alice got %s; want her four", got)
		}
		list, _, err := s.Root(t).PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{UserID: gitlab.Ptr(w.bob.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].UserID != w.bob.ID {
			t.Errorf("client admin user_id=bob got %+v", list)
		}
		// An unknown user_id: GitLab's finder_params answers not_found!.
		usrWant(t, "admin list of an unknown user_id", s.Get(t, "/personal_access_tokens?user_id="+itoa(unknownID), s.RootToken), http.StatusNotFound, `{"message":"404 Not Found"}`)
		s.Get(t, "/personal_access_tokens?user_id=abc", s.RootToken).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"user_id is invalid"}`)
		// Pagination headers.
		r := s.Get(t, "/personal_access_tokens?user_id="+itoa(w.alice.ID)+"&per_page=3", s.RootToken).Want(t, http.StatusOK)
		if len(r.Array(t)) != 3 || r.Header.Get("X-Total") != "4" || r.Header.Get("X-Total-Pages") != "2" || r.Header.Get("X-Next-Page") != "2" {
			t.Errorf("paginated token list got %d items, X-Total %q, pages %q, next %q; want 3, 4, 2, 2",
				len(r.Array(t)), r.Header.Get("X-Total"), r.Header.Get("X-Total-Pages"), r.Header.Get("X-Next-Page"))
		}
	})
}

func TestTokens_List_filters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		w := buildTokWorld(t, s)
		cases := []struct{ query, want string }{
			{"", "ci-deploy,expired-one,old-ci,test"},
			{"state=active", "ci-deploy,test"},
			{"state=inactive", "expired-one,old-ci"},
			{"revoked=true", "old-ci"},
			{"revoked=false", "ci-deploy,expired-one,test"},
			{"search=ci", "ci-deploy,old-ci"},
			{"search=CI", "ci-deploy,old-ci"},
			{"search=deploy&state=active", "ci-deploy"},
			{"search=nothing", ""},
			{"state=active&revoked=true", ""},
			{"expires_before=2021-01-01", "expired-one"},
			{"created_after=2000-01-01T00:00:00Z", "ci-deploy,expired-one,old-ci,test"},
			{"created_before=2000-01-01T00:00:00Z", ""},
		}
		for _, c := range cases {
			for who, token := range map[string]string{"owner": w.alice.Token, "admin": s.RootToken} {
				q := c.query
				if who == "admin" {
					q = "user_id=" + itoa(w.alice.ID) + "&" + q
				}
				r := s.Get(t, "/personal_access_tokens?"+q, token)
				if r.Status != http.StatusOK {
					t.Errorf("%s GET ?%s: status %d; want 200 (%s)", who, q, r.Status, r.Body)
					continue
				}
				if got := tokNames(r.Array(t)); got != c.want {
					t.Errorf("%s GET ?%s: got %s; want %s", who, q, got, c.want)
				}
			}
		}
		list, _, err := s.Client(t, w.alice.Token).PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{State: gitlab.Ptr("inactive")})
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range list {
			if tok.Active {
				t.Errorf("state=inactive returned active token %+v", tok)
			}
		}
		if len(list) != 2 {
			t.Errorf("client state=inactive got %d; want 2", len(list))
		}
		// Entity flags agree with the filters.
		for _, m := range s.Get(t, "/personal_access_tokens", w.alice.Token).Array(t) {
			switch m["name"] {
			case "old-ci":
				if m["revoked"] != true || m["active"] != false {
					t.Errorf("old-ci got revoked %v active %v; want true false", m["revoked"], m["active"])
				}
			case "expired-one":
				if m["revoked"] != false || m["active"] != false || m["expired"] != true {
					t.Errorf("expired-one got revoked %v active %v expired %v; want false false true", m["revoked"], m["active"], m["expired"])
				}
			default:
				if m["revoked"] != false || m["active"] != true {
					t.Errorf("%v got revoked %v active %v; want false true", m["name"], m["revoked"], m["active"])
				}
			}
		}
		s.Get(t, "/personal_access_tokens?state=sleeping", w.alice.Token).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"state does not have a valid value"}`)
		s.Get(t, "/personal_access_tokens?revoked=perhaps", w.alice.Token).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"revoked is invalid"}`)
		s.Get(t, "/personal_access_tokens?created_after=whenever", w.alice.Token).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"created_after is invalid"}`)
	})
}

// ---------------------------------------------------------------------------
// GET /personal_access_tokens/self and /:id

func TestTokens_Get_self(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		tok, resp, err := s.Client(t, u.Token).PersonalAccessTokens.GetSinglePersonalAccessToken()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || tok.UserID != u.ID || tok.Name != "test" || tok.Token != "" || !tok.Active ||
			strings.Join(tok.Scopes, ",") != "api" || tok.LastUsedAt == nil {
			t.Errorf("self got %+v; want the test token, used just now, without secret", tok)
		}
		m := s.Get(t, "/personal_access_tokens/self", u.Token).Want(t, http.StatusOK).Object(t)
		usrWantTypes(t, "self", m, tokenFields)
		usrWantAbsent(t, "self", m, "token")
		// Any scope reads its own token.
		for _, scope := range []string{"read_user", "read_repository", "write_repository", "read_api", "sudo", "self_rotate"} {
			tok := s.NewToken(t, u.ID, scope)
			r := s.Get(t, "/personal_access_tokens/self", tok)
			if r.Status != http.StatusOK {
				t.Errorf("self with %s: status %d; want 200 (%s)", scope, r.Status, r.Body)
				continue
			}
			if got := fmt.Sprint(r.Object(t)["scopes"]); got != "["+scope+"]" {
				t.Errorf("self with %s: scopes %s; want [%s]", scope, got, scope)
			}
		}
		s.Get(t, "/personal_access_tokens/self", "").Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
	})
}

func TestTokens_Get_byID(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		aliceID := tokSelfID(t, s, alice.Token)
		bobID := tokSelfID(t, s, bob.Token)
		got, _, err := s.Client(t, alice.Token).PersonalAccessTokens.GetSinglePersonalAccessTokenByID(aliceID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != aliceID || got.UserID != alice.ID || got.Token != "" {
			t.Errorf("own token by id got %+v", got)
		}
		cases := []struct {
			name, path, token string
			status            int
			want              string
		}{
			{"admin reads alice's", "/personal_access_tokens/" + itoa(aliceID), s.RootToken, 200, ""},
			{"alice reads bob's", "/personal_access_tokens/" + itoa(bobID), alice.Token, 401, bodyUnauthorized},
			{"alice reads a missing one", "/personal_access_tokens/" + itoa(unknownID), alice.Token, 401, bodyUnauthorized},
			{"admin reads a missing one", "/personal_access_tokens/" + itoa(unknownID), s.RootToken, 404, `{"message":"404 Not Found"}`},
			{"anonymous", "/personal_access_tokens/" + itoa(aliceID), "", 401, bodyUnauthorized},
			{"non-numeric id", "/personal_access_tokens/abc", s.RootToken, 404, bodyNoRoute},
			{"read_user token", "/personal_access_tokens/" + itoa(aliceID), s.NewToken(t, alice.ID, "read_user"), 403, scopeBody("api read_api")},
		}
		for _, c := range cases {
			r := s.Get(t, c.path, c.token)
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d (%s)", c.name, r.Status, c.status, r.Body)
				continue
			}
			if c.want != "" {
				usrBody(t, c.name, r, c.want)
			} else if m := r.Object(t); usrID(t, m) != aliceID || m["user_id"] != float64(alice.ID) {
				t.Errorf("%s: got %v; want alice's token", c.name, m)
			}
		}
	})
}

// ---------------------------------------------------------------------------
// DELETE /personal_access_tokens/:id and /self

func TestTokens_Revoke_byID(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		spare := s.NewToken(t, alice.ID)
		aliceID := tokSelfID(t, s, alice.Token)
		bobID := tokSelfID(t, s, bob.Token)
		// Someone else's token: 400, and it keeps working.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + itoa(bobID), Token: alice.Token}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"400 Bad request"}`)
		s.Get(t, "/user", bob.Token).Want(t, http.StatusOK)
		// Own token, with another of one's tokens.
		resp, err := s.Client(t, spare).PersonalAccessTokens.RevokePersonalAccessTokenByID(aliceID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("revoke status got %d; want 204", resp.StatusCode)
		}
		r := s.Get(t, "/user", alice.Token).Want(t, http.StatusUnauthorized)
		r.WantBody(t, bodyRevoked)
		if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, `Bearer realm="The API"`) || !strings.Contains(h, `error="invalid_token"`) {
			t.Errorf("WWW-Authenticate got %q; want Bearer realm=\"The API\", error=\"invalid_token\", ...", h)
		}
		if m := s.Get(t, "/personal_access_tokens/"+itoa(aliceID), spare).Want(t, http.StatusOK).Object(t); m["revoked"] != true || m["active"] != false {
			t.Errorf("revoked token reads revoked %v active %v; want true false", m["revoked"], m["active"])
		}
		// Revoking twice.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + itoa(aliceID), Token: spare}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":"400 Bad request"}`)
		// Admin revokes bob's.
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + itoa(bobID), Token: s.RootToken}).Want(t, http.StatusNoContent)
		s.Get(t, "/user", bob.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		// Missing token: PersonalAccessToken.find raises RecordNotFound.
		usrWant(t, "revoke a missing token", s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + itoa(unknownID), Token: s.RootToken}),
			http.StatusNotFound, `{"message":"404 Not found"}`)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/" + itoa(aliceID)}).Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
	})
}

func TestTokens_Revoke_self(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		other := s.NewToken(t, u.ID)
		resp, err := s.Client(t, u.Token).PersonalAccessTokens.RevokePersonalAccessTokenSelf()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("status got %d; want 204", resp.StatusCode)
		}
		r := s.Get(t, "/personal_access_tokens/self", u.Token).Want(t, http.StatusUnauthorized)
		r.WantBody(t, bodyRevoked)
		if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
			t.Errorf("WWW-Authenticate got %q; want invalid_token", h)
		}
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: u.Token}).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		// The user's other token is untouched.
		s.Get(t, "/user", other).Want(t, http.StatusOK)
		// Any scope may revoke itself.
		ro := s.NewToken(t, u.ID, "read_repository")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: ro}).Want(t, http.StatusNoContent)
		s.Get(t, "/personal_access_tokens/self", ro).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self"}).Want(t, http.StatusUnauthorized).WantBody(t, bodyUnauthorized)
	})
}

// ---------------------------------------------------------------------------
// POST /personal_access_tokens/:id/rotate

func TestTokens_Rotate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		orig := tokCreate(t, s, u.ID, map[string]any{"name": "rotor", "scopes": []string{"api", "read_user"}, "description": "d"})
		oldSecret := orig["token"].(string)
		oldID := usrID(t, orig)
		tok, resp, err := s.Client(t, oldSecret).PersonalAccessTokens.RotatePersonalAccessTokenByID(oldID, &gitlab.RotatePersonalAccessTokenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("rotate status got %d; want 200", resp.StatusCode)
		}
		week := time.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02")
		if tok.ID == oldID || tok.Token == "" || tok.Token == oldSecret || tok.Name != "rotor" || tok.UserID != u.ID ||
			strings.Join(tok.Scopes, ",") != "api,read_user" || tok.Revoked || !tok.Active || tok.ExpiresAt == nil || tok.ExpiresAt.String() != week {
			t.Errorf("rotated token %+v; want a new active secret, same name and scopes, expiring %s", tok, week)
		}
		// The new secret works; the old one is revoked.
		if me := s.Get(t, "/user", tok.Token).Want(t, http.StatusOK).Object(t); me["username"] != "holder" {
			t.Errorf("rotated token acts as %v", me["username"])
		}
		s.Get(t, "/user", oldSecret).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		if m := s.Get(t, "/personal_access_tokens/"+itoa(oldID), s.RootToken).Want(t, http.StatusOK).Object(t); m["revoked"] != true || m["active"] != false {
			t.Errorf("old token reads revoked %v active %v; want true false", m["revoked"], m["active"])
		}
		// The body has every field and the secret.
		m := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(tok.ID) + "/rotate", Token: s.RootToken}).Want(t, http.StatusOK).Object(t)
		want := map[string]string{"token": "string"}
		for k, v := range tokenFields {
			want[k] = v
		}
		usrWantTypes(t, "rotated token", m, want)
		s.Get(t, "/user", tok.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		s.Get(t, "/user", m["token"].(string)).Want(t, http.StatusOK)
	})
}

func TestTokens_Rotate_expiresAt(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		id := tokSelfID(t, s, u.Token)
		m := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(id) + "/rotate", Token: u.Token,
			JSON: map[string]any{"expires_at": "2099-12-31"}}).Want(t, http.StatusOK).Object(t)
		if m["expires_at"] != "2099-12-31" {
			t.Errorf("expires_at got %v; want 2099-12-31", m["expires_at"])
		}
		fresh := m["token"].(string)
		newID := usrID(t, m)
		s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(newID) + "/rotate", Token: fresh,
			JSON: map[string]any{"expires_at": "later"}}).Want(t, http.StatusBadRequest).WantBody(t, `{"error":"expires_at is invalid"}`)
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(newID) + "/rotate", Token: fresh,
			JSON: map[string]any{"expires_at": "2001-01-01"}}).Want(t, http.StatusBadRequest)
		var body map[string]any
		r.JSON(t, &body)
		if _, ok := body["message"].(string); !ok {
			t.Errorf("past expires_at body %s; want a message", r.Body)
		}
		// Failed rotations leave the token working.
		s.Get(t, "/user", fresh).Want(t, http.StatusOK)
	})
}

func TestTokens_Rotate_refused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		unknownID := s.AbsentID(t)
		alice := s.NewUser(t, "alice")
		bob := s.NewUser(t, "bob")
		bobID := tokSelfID(t, s, bob.Token)
		revokedID, revokedSecret := tokIssue(t, s, alice.ID, "gone", "2099-01-01")
		s.Do(t, apitest.Request{Method: "DELETE", Path: "/personal_access_tokens/self", Token: revokedSecret}).Want(t, http.StatusNoContent)
		cases := []struct {
			name, path, token string
			status            int
			want              string
		}{
			// Newer GitLab: "Only admins should be informed if the token
			// doesn't exist" — non-admins get 401, admins 404.
			{"alice rotates bob's", "/personal_access_tokens/" + itoa(bobID) + "/rotate", alice.Token, 401, bodyUnauthorized},
			{"alice rotates a missing one", "/personal_access_tokens/" + itoa(unknownID) + "/rotate", alice.Token, 401, bodyUnauthorized},
			{"admin rotates a missing one", "/personal_access_tokens/" + itoa(unknownID) + "/rotate", s.RootToken, 404, `{"message":"404 Not Found"}`},
			// RotateService error → bad_request!(message).
			{"revoked token", "/personal_access_tokens/" + itoa(revokedID) + "/rotate", s.RootToken, 400, `{"message":"400 Bad request - Token already revoked"}`},
			{"anonymous", "/personal_access_tokens/" + itoa(bobID) + "/rotate", "", 401, bodyUnauthorized},
			{"read_api token", "/personal_access_tokens/" + itoa(bobID) + "/rotate", s.NewToken(t, bob.ID, "read_api"), 403, scopeBody("api")},
		}
		for _, c := range cases {
			r := s.Do(t, apitest.Request{Method: "POST", Path: c.path, Token: c.token})
			if r.Status != c.status {
				t.Errorf("%s: status %d; want %d (%s)", c.name, r.Status, c.status, r.Body)
				continue
			}
			usrBody(t, c.name, r, c.want)
		}
		// Bob's token survived.
		s.Get(t, "/user", bob.Token).Want(t, http.StatusOK)
		// An admin may rotate anyone's.
		m := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/" + itoa(bobID) + "/rotate", Token: s.RootToken}).Want(t, http.StatusOK).Object(t)
		if m["user_id"] != float64(bob.ID) {
			t.Errorf("admin rotation got user_id %v; want bob", m["user_id"])
		}
		s.Get(t, "/user", bob.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
	})
}

func TestTokens_Rotate_self(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		u := s.NewUser(t, "holder")
		tok, _, err := s.Client(t, u.Token).PersonalAccessTokens.RotatePersonalAccessTokenSelf(&gitlab.RotatePersonalAccessTokenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tok.Token == "" || tok.UserID != u.ID {
			t.Errorf("self rotation got %+v", tok)
		}
		s.Get(t, "/user", u.Token).Want(t, http.StatusUnauthorized).WantBody(t, bodyRevoked)
		s.Get(t, "/user", tok.Token).Want(t, http.StatusOK)
		// self_rotate is enough; read_user is not.
		sr := s.NewToken(t, u.ID, "self_rotate")
		m := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/self/rotate", Token: sr}).Want(t, http.StatusOK).Object(t)
		if fmt.Sprint(m["scopes"]) != "[self_rotate]" {
			t.Errorf("rotated self_rotate token scopes %v; want [self_rotate]", m["scopes"])
		}
		ru := s.NewToken(t, u.ID, "read_user")
		r := s.Do(t, apitest.Request{Method: "POST", Path: "/personal_access_tokens/self/rotate", Token: ru}).Want(t, http.StatusForbidden)
		var body map[string]any
		r.JSON(t, &body)
		if body["error"] != "insufficient_scope" || !strings.Contains(fmt.Sprint(body["scope"]), "api") {
			t.Errorf("read_user self rotation body %s; want insufficient_scope naming api", r.Body)
		}
		s.Get(t, "/user", ru).Want(t, http.StatusOK)
	})
}
