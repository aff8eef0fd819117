package endpoint

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// secrets authenticates one known secret per kind: the actor's user name
// says which authenticator answered.
type secrets map[string]string

func (s secrets) Authenticate(_ context.Context, secret string) (auth.Actor, error) {
	name, ok := s[secret]
	if !ok {
		return auth.Anonymous, model.Forbidden("")
	}
	return auth.Actor{User: &model.User{ID: 7, Username: name}}, nil
}

func (s secrets) Sudo(_ context.Context, a auth.Actor, ref string) (auth.Actor, error) {
	return auth.Actor{User: &model.User{ID: 8, Username: "sudo:" + ref}, Sudoer: a.User}, nil
}

func testSite() *Site {
	return &Site{ExternalURL: "http://quarry.test", MaxParsed: 1 << 10, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Personal: secrets{"pat": "personal"}, Jobs: secrets{"job": "job"}, Runners: secrets{"run": "runner"},
		Integrations: secrets{"key": "integration"}}
}

// whoami answers with the actor's user name.
func whoami(c *Call) error {
	name := "anonymous"
	if c.Actor.User != nil {
		name = c.Actor.User.Username
	}
	_, err := io.WriteString(c.W, name)
	return err
}

func serve(t *testing.T, s *Site, rt Route, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	s.Handler(rt).ServeHTTP(w, req)
	return w
}

func TestSite_credentialsByKind(t *testing.T) {
	jsonReq := func(body string) *http.Request {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	withHeader := func(r *http.Request, k, v string) *http.Request { r.Header.Set(k, v); return r }
	get := func(target string) *http.Request { return httptest.NewRequest("GET", target, nil) }
	for _, c := range []struct {
		name   string
		auth   Auth
		req    *http.Request
		status int
		body   string
	}{
		{"no auth reads nothing", NoAuth, withHeader(get("/x"), "Private-Token", "pat"), 200, "anonymous"},
		{"public without token", Public, get("/x"), 200, "anonymous"},
		{"public with PRIVATE-TOKEN", Public, withHeader(get("/x"), "Private-Token", "pat"), 200, "personal"},
		{"token as Bearer", Token, withHeader(get("/x"), "Authorization", "Bearer pat"), 200, "personal"},
		{"token as private_token", Token, get("/x?private_token=pat"), 200, "personal"},
		{"token as access_token", Token, get("/x?access_token=pat"), 200, "personal"},
		{"token required", Token, get("/x"), 401, `{"message":"401 Unauthorized"}`},
		{"sudo", Token, withHeader(withHeader(get("/x"), "Private-Token", "pat"), "Sudo", "alice"), 200, "sudo:alice"},
		{"sudo without token", Public, get("/x?sudo=alice"), 401, `{"message":"401 Unauthorized"}`},
		{"job token header", JobToken, withHeader(get("/x"), "Job-Token", "job"), 200, "job"},
		{"job token parameter", JobToken, get("/x?job_token=job"), 200, "job"},
		{"job token as Bearer", JobToken, withHeader(get("/x"), "Authorization", "Bearer job"), 200, "job"},
		{"job token in the runner's body", JobToken, jsonReq(`{"token":"job"}`), 200, "job"},
		{"a personal token is no job token", JobToken, withHeader(get("/x"), "Private-Token", "pat"), 401, `{"message":"401 Unauthorized"}`},
		{"job token unknown", JobToken, withHeader(get("/x"), "Job-Token", "nope"), 403, `{"message":"403 Forbidden"}`},
		{"runner token in body", RunnerToken, jsonReq(`{"token":"run","info":{"name":"r"}}`), 200, "runner"},
		{"runner token header", RunnerToken, withHeader(get("/x"), "Runner-Token", "run"), 200, "runner"},
		{"runner token missing", RunnerToken, jsonReq(`{}`), 400, `{"error":"token is missing"}`},
		{"integration Bearer", IntegrationKey, withHeader(jsonReq(`{"title":"a"}`), "Authorization", "Bearer key"), 200, "integration"},
		{"integration X-Sentry-Auth", IntegrationKey, withHeader(get("/x"), "X-Sentry-Auth", "Sentry sentry_version=7, sentry_key=key, sentry_client=go"), 200, "integration"},
		{"integration sentry_key", IntegrationKey, get("/x?sentry_key=key"), 200, "integration"},
		{"integration missing", IntegrationKey, get("/x"), 401, `{"message":"401 Unauthorized"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := serve(t, testSite(), Row(c.req.Method, "/x", c.auth, ScopeAPI, Parsed, whoami), c.req)
			if w.Code != c.status || strings.TrimSpace(w.Body.String()) != c.body {
				t.Errorf("got %d %s; want %d %s", w.Code, w.Body, c.status, c.body)
			}
		})
	}
}

func TestSite_missingAuthenticatorRefusesTheRow(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a job-token row mounted without a job authenticator")
		}
	}()
	s := testSite()
	s.Jobs = nil
	s.Handler(Row("GET", "/job", JobToken, ScopeAPI, Parsed, whoami))
}

func TestSite_streamedBody(t *testing.T) {
	read := func(c *Call) error {
		n, err := io.Copy(io.Discard, c.Body())
		if err != nil {
			return BodyError(err)
		}
		v, _ := c.P.String("q")
		return c.JSON(200, map[string]any{"bytes": n, "q": v, "form": c.P.Has("a")})
	}
	rt := Row("PUT", "/upload", Public, ScopeAPI, Streamed(64), read)
	// The body reaches the handler untouched (a form body is not parsed),
	// the query is.
	r := httptest.NewRequest("PUT", "/upload?q=1", strings.NewReader("a=1&b=2"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := serve(t, testSite(), rt, r)
	if w.Code != 200 || w.Body.String() != `{"bytes":7,"form":false,"q":"1"}` {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
	// Past the row's limit: 413, though the server's parsed limit is higher
	// or lower.
	w = serve(t, testSite(), rt, httptest.NewRequest("PUT", "/upload", strings.NewReader(strings.Repeat("x", 65))))
	if w.Code != 413 || w.Body.String() != `{"message":"413 Request Entity Too Large"}` {
		t.Errorf("over the limit: %d %s", w.Code, w.Body)
	}
	// A parsed body over the server's limit is a 413 as well.
	r = httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":"`+strings.Repeat("x", 2<<10)+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w = serve(t, testSite(), Row("POST", "/x", Public, ScopeAPI, Parsed, whoami), r)
	if w.Code != 413 {
		t.Errorf("parsed over the limit: %d %s", w.Code, w.Body)
	}
}

func TestSite_scopes(t *testing.T) {
	s := testSite()
	s.Personal = scoped{}
	w := serve(t, s, Row("POST", "/x", Token, ScopeAPI, Parsed, whoami), withToken(httptest.NewRequest("POST", "/x", nil)))
	if w.Code != 403 || !strings.Contains(w.Body.String(), `"error":"insufficient_scope"`) || !strings.Contains(w.Body.String(), `"scope":"api"`) {
		t.Errorf("read_user token on a write: %d %s", w.Code, w.Body)
	}
	w = serve(t, s, Row("GET", "/x", Token, ScopeUser, Parsed, whoami), withToken(httptest.NewRequest("GET", "/x", nil)))
	if w.Code != 200 {
		t.Errorf("read_user token on a user read: %d %s", w.Code, w.Body)
	}
}

// scoped authenticates every token as a read_user token.
type scoped struct{}

func (scoped) Authenticate(context.Context, string) (auth.Actor, error) {
	return auth.Actor{User: &model.User{ID: 1, Username: "reader"}, Token: &model.PersonalAccessToken{Scopes: []model.Scope{model.ScopeReadUser}}}, nil
}

func (scoped) Sudo(_ context.Context, a auth.Actor, _ string) (auth.Actor, error) { return a, nil }

func withToken(r *http.Request) *http.Request { r.Header.Set("Private-Token", "t"); return r }

func TestMux_shapesAndUnknownPaths(t *testing.T) {
	echo := func(name string) Handler {
		return func(c *Call) error {
			return c.JSON(200, map[string]string{"row": name, "id": c.Path("id"), "user_id": c.Path("user_id")})
		}
	}
	rows := []Route{
		Row("POST", "/projects/{id}/star", Token, ScopeAPI, Parsed, echo("star")),
		Row("POST", "/projects/user/{user_id}", Token, ScopeAPI, Parsed, echo("for-user")),
		Row("GET", "/projects/{id}", Public, ScopeAPI, Parsed, echo("get")),
		Row("GET", "/projects/{id}/languages", Public, ScopeAPI, Parsed, echo("languages")),
	}
	if _, err := NewMux(testSite(), rows, nil); err == nil {
		t.Fatal("ServeMux took conflicting rows without a shape")
	}
	if _, err := NewMux(testSite(), rows, []string{"GET /nothing/{}"}); err == nil {
		t.Fatal("a shape no row fits was accepted")
	}
	m, err := NewMux(testSite(), rows, []string{"POST /projects/{}/{}"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/api/v4/projects/12/star", `{"id":"12","row":"star","user_id":""}`},
		{"POST", "/api/v4/projects/user/5", `{"id":"","row":"for-user","user_id":"5"}`},
		{"POST", "/api/v4/projects/g%2Fp/star", `{"id":"g/p","row":"star","user_id":""}`},
		// Both fit: the leftmost literal wins.
		{"POST", "/api/v4/projects/user/star", `{"id":"","row":"for-user","user_id":"star"}`},
		{"POST", "/api/v4/projects/12/frob", `{"error":"404 Not Found"}`},
		// The shape's method, no row of it, but another method serves the
		// path.
		{"POST", "/api/v4/projects/12/languages", `{"error":"405 Not Allowed"}`},
		{"GET", "/api/v4/projects/12/frob", `{"error":"404 Not Found"}`},
		{"GET", "/api/v4/projects/12/star", `{"error":"405 Not Allowed"}`},
		{"DELETE", "/api/v4/projects/12", `{"error":"405 Not Allowed"}`},
		{"GET", "/api/v4/nowhere", `{"error":"404 Not Found"}`},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set("Private-Token", "pat")
		m.ServeHTTP(w, r)
		if got := w.Body.String(); got != c.want {
			t.Errorf("%s %s: %d %s; want %s", c.method, c.path, w.Code, got, c.want)
		}
		if c.want == `{"error":"405 Not Allowed"}` && w.Header().Get("Allow") == "" {
			t.Errorf("%s %s: no Allow header", c.method, c.path)
		}
	}
}
