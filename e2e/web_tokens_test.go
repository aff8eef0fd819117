package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
)

const webTokensPath = "/-/user_settings/personal_access_tokens"

var newTokenValue = regexp.MustCompile(`value="([^"]+)" data-testid="new-token-value"`)

// apiUser is GET /user with a token: the status and the username.
func apiUser(t testing.TB, s *apitest.Server, token string) (int, string) {
	t.Helper()
	r := s.Get(t, "/user", token)
	if r.Status != http.StatusOK {
		return r.Status, ""
	}
	name, _ := r.Object(t)["username"].(string)
	return r.Status, name
}

// tokenID is the id of owner's token named name, by the API.
func tokenID(t testing.TB, s *apitest.Server, ownerToken, name string) int64 {
	t.Helper()
	for _, tk := range s.Get(t, "/personal_access_tokens?state=active", ownerToken).Want(t, http.StatusOK).Array(t) {
		if tk["name"] == name {
			return int64(tk["id"].(float64))
		}
	}
	t.Fatalf("no active token %q", name)
	return 0
}

// TestWeb_tokens: the personal access tokens page: anonymous visitors
// sign in first; a token made with the form is shown once (in the
// answer only, never cached) and works against the API; the form's
// refusals are the service's; revoking makes the token fail with 401;
// another user's token cannot be revoked; a cross-site form is refused.
func TestWeb_tokens(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, bob := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		anon, ab := newBrowser(s), newBrowser(s)

		r := anon.get(t, webTokensPath).want(t, http.StatusFound)
		if want := "/users/sign_in?redirect_to=" + url.QueryEscape(webTokensPath); r.Header.Get("Location") != want {
			t.Errorf("anonymous: Location %q; want %q", r.Header.Get("Location"), want)
		}
		r = anon.do(t, "POST", webTokensPath, url.Values{"name": {"x"}, "scopes[]": {"api"}}, nil)
		if r.Status != http.StatusFound || !strings.HasPrefix(r.Header.Get("Location"), "/users/sign_in") {
			t.Errorf("anonymous create: %d %q", r.Status, r.Header.Get("Location"))
		}
		r = anon.get(t, "/-/profile/personal_access_tokens").want(t, http.StatusMovedPermanently)
		if r.Header.Get("Location") != webTokensPath {
			t.Errorf("old path: Location %q", r.Header.Get("Location"))
		}

		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		ab.get(t, "/").contains(t, `href="`+webTokensPath+`"`)
		pg := ab.get(t, webTokensPath).want(t, http.StatusOK)
		wantSecurityHeaders(t, webTokensPath, pg)
		pg.contains(t, `data-testid="token-form"`, `value="api"`, `value="read_user"`, `data-testid="token-row"`).
			lacks(t, `value="sudo"`, `value="admin_mode"`)

		// Refusals, in the service's words; nothing is made.
		expires := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
		for _, c := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"name": {" "}, "scopes[]": {"api"}}, "Name can&#39;t be blank"},
			{url.Values{"name": {"n"}}, "Scopes can&#39;t be blank"},
			{url.Values{"name": {"n"}, "scopes[]": {"sudo"}}, "Scopes can only contain available scopes"},
			{url.Values{"name": {"n"}, "scopes[]": {"nope"}}, "Scopes can only contain available scopes"},
			{url.Values{"name": {"n"}, "scopes[]": {"api"}, "expires_at": {"2001-01-01"}}, "Expiration date must be in the future"},
			{url.Values{"name": {"n"}, "scopes[]": {"api"}, "expires_at": {"soon"}}, "Expiration date is invalid"},
			{url.Values{"name": {strings.Repeat("n", 256)}, "scopes[]": {"api"}}, "Name is too long"},
		} {
			ab.do(t, "POST", webTokensPath, c.form, nil).want(t, http.StatusBadRequest).contains(t, c.want).lacks(t, `data-testid="new-token"`)
		}
		if n := len(s.Get(t, "/personal_access_tokens?state=active", alice.Token).Want(t, http.StatusOK).Array(t)); n != 1 {
			t.Fatalf("refused forms made tokens: %d active", n)
		}

		// A cross-site form makes nothing.
		form := url.Values{"name": {"CI <b>token</b>"}, "scopes[]": {"read_user", "api"}, "expires_at": {expires}}
		ab.do(t, "POST", webTokensPath, form, map[string]string{"Sec-Fetch-Site": "cross-site"}).want(t, http.StatusForbidden).
			contains(t, "Cross-site request refused")
		ab.do(t, "POST", webTokensPath, form, map[string]string{"Origin": "http://evil.example"}).want(t, http.StatusForbidden)
		if n := len(s.Get(t, "/personal_access_tokens?state=active", alice.Token).Want(t, http.StatusOK).Array(t)); n != 1 {
			t.Fatalf("a cross-site form made a token: %d active", n)
		}

		// Created: the value once, in this answer.
		created := ab.do(t, "POST", webTokensPath, form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.URL}).want(t, http.StatusOK)
		if cc := created.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("Cache-Control %q; want no-store", cc)
		}
		if created.Header.Get("Location") != "" || created.Header.Get("Set-Cookie") != "" {
			t.Errorf("the answer redirects or sets a cookie: %v", created.Header)
		}
		m := newTokenValue.FindStringSubmatch(created.Body)
		if m == nil {
			t.Fatalf("no new token shown:\n%.3000s", created.Body)
		}
		secret := m[1]
		created.contains(t, "CI &lt;b&gt;token&lt;/b&gt;").lacks(t, "<b>token</b>")
		if st, who := apiUser(t, s, secret); st != http.StatusOK || who != "alice" {
			t.Fatalf("the new token: GET /user %d %q", st, who)
		}
		id := tokenID(t, s, alice.Token, "CI <b>token</b>")
		tk := s.Get(t, fmt.Sprintf("/personal_access_tokens/%d", id), alice.Token).Want(t, http.StatusOK).Object(t)
		if tk["expires_at"] != expires || fmt.Sprint(tk["scopes"]) != "[api read_user]" {
			t.Errorf("token %v", tk)
		}
		// Never again: the list names it, without its value.
		list := ab.get(t, webTokensPath).want(t, http.StatusOK).contains(t, "CI &lt;b&gt;token&lt;/b&gt;", "api, read_user", expires)
		if strings.Contains(list.Body, secret) {
			t.Fatal("the token's value is shown again")
		}

		// Another user's token cannot be revoked here, as through the API.
		bobID := tokenID(t, s, bob.Token, tokenName(t, s, bob.Token))
		revoke := func(id int64, h map[string]string) page {
			return ab.do(t, "POST", fmt.Sprintf("%s/%d/revoke", webTokensPath, id), url.Values{}, h)
		}
		revoke(bobID, nil).want(t, http.StatusBadRequest)
		s.Do(t, apitest.Request{Method: "DELETE", Path: fmt.Sprintf("/personal_access_tokens/%d", bobID), Token: alice.Token}).Want(t, http.StatusBadRequest)
		if st, _ := apiUser(t, s, bob.Token); st != http.StatusOK {
			t.Fatalf("bob's token: %d", st)
		}
		revoke(99999999, nil).want(t, http.StatusNotFound)
		ab.do(t, "POST", webTokensPath+"/abc/revoke", url.Values{}, nil).want(t, http.StatusNotFound)

		// A cross-site revoke changes nothing; a same-site one revokes.
		revoke(id, map[string]string{"Sec-Fetch-Site": "cross-site"}).want(t, http.StatusForbidden)
		if st, _ := apiUser(t, s, secret); st != http.StatusOK {
			t.Fatalf("a cross-site revoke revoked: %d", st)
		}
		if !strings.Contains(list.Body, fmt.Sprintf(`action="%s/%d/revoke"`, webTokensPath, id)) {
			t.Errorf("the list has no revoke button for the token")
		}
		r = revoke(id, nil).want(t, http.StatusSeeOther)
		if r.Header.Get("Location") != webTokensPath {
			t.Errorf("revoke: Location %q", r.Header.Get("Location"))
		}
		if st, _ := apiUser(t, s, secret); st != http.StatusUnauthorized {
			t.Errorf("a revoked token: GET /user %d; want 401", st)
		}
		ab.get(t, webTokensPath).want(t, http.StatusOK).lacks(t, "CI &lt;b&gt;token&lt;/b&gt;")
		revoke(id, nil).want(t, http.StatusBadRequest) // revoked already, as the API says

		// Signed out, the page is a sign-in again.
		ab.do(t, "POST", "/users/sign_out", url.Values{}, nil).want(t, http.StatusSeeOther)
		ab.get(t, webTokensPath).want(t, http.StatusFound)
	})
}

// tokenName is the name of the token in use.
func tokenName(t testing.TB, s *apitest.Server, token string) string {
	t.Helper()
	return s.Get(t, "/personal_access_tokens/self", token).Want(t, http.StatusOK).Object(t)["name"].(string)
}

// TestWeb_tokensAdminScopes: an administrator may give sudo and
// admin_mode.
func TestWeb_tokensAdminScopes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.Do(t, apitest.Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
			"username": "admin1", "email": "admin1@example.com", "name": "Admin", "password": webPassword,
			"skip_confirmation": true, "admin": true}}).Want(t, http.StatusCreated)
		b := newBrowser(s)
		b.signIn(t, "admin1", webPassword).want(t, http.StatusSeeOther)
		b.get(t, webTokensPath).want(t, http.StatusOK).contains(t, `value="sudo"`, `value="admin_mode"`)
		created := b.do(t, "POST", webTokensPath, url.Values{"name": {"ops"}, "scopes[]": {"api", "sudo"}}, nil).want(t, http.StatusOK)
		m := newTokenValue.FindStringSubmatch(created.Body)
		if m == nil {
			t.Fatal("no new token shown")
		}
		if st, who := apiUser(t, s, m[1]); st != http.StatusOK || who != "admin1" {
			t.Fatalf("GET /user %d %q", st, who)
		}
		// The default expiry: a year.
		tk := s.Get(t, "/personal_access_tokens/self", m[1]).Want(t, http.StatusOK).Object(t)
		if want := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02"); tk["expires_at"] != want && tk["expires_at"] != time.Now().UTC().AddDate(0, 0, 365).Format("2006-01-02") {
			t.Errorf("expires_at %v; want about %s", tk["expires_at"], want)
		}
	})
}
