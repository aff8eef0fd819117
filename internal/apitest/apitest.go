// Package apitest starts a real Quarry in-process for end-to-end tests: the
// whole application on an httptest server, a temp data folder, and SQLite
// or a fresh PostgreSQL schema. It hands out the root token, official Go
// clients and a raw HTTP helper.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"quarry/internal/app"
	"quarry/internal/config"
	"quarry/internal/storetest"
)

// Server is a running Quarry.
type Server struct {
	URL       string // base URL, no trailing slash
	RootToken string
	App       *app.App
	Target    storetest.Target
	DataDir   string
	http      *httptest.Server
	stopOnce  sync.Once
}

// Option changes the configuration before the server starts.
type Option func(*config.Config)

// DelayedDeletion keeps deleted projects and groups restorable for a week
// (the default removes them at once).
func DelayedDeletion(c *config.Config) { c.DeletionDelay = 7 * 24 * time.Hour }

// Each runs body against a fresh server on every test database (SQLite,
// and PostgreSQL when QUARRY_TEST_DATABASE_URL is set).
func Each(t *testing.T, body func(t *testing.T, s *Server), opts ...Option) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		body(t, Start(t, target, opts...))
	})
}

// Start runs a server on target until the test ends.
func Start(t testing.TB, target storetest.Target, opts ...Option) *Server {
	t.Helper()
	return StartIn(t, target, t.TempDir(), opts...)
}

// StartIn runs a server on target with its data in dir; a second server on
// the same dir and target is a restart.
func StartIn(t testing.TB, target storetest.Target, dir string, opts ...Option) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.DatabaseURL = target.DatabaseURL
	cfg.ExternalURL = "http://" + ln.Addr().String()
	cfg.PasswordCost = 4
	cfg.LogLevel = "error"
	cfg.TaskLease = 2 * time.Second
	for _, o := range opts {
		o(&cfg)
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("QUARRY_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		ln.Close()
		t.Fatalf("start quarry on %s: %v", target.Name, err)
	}
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: a.Handler}}
	hs.Start()
	s := &Server{App: a, Target: target, DataDir: dir, http: hs}
	t.Cleanup(s.Stop)
	tok, err := os.ReadFile(filepath.Join(dir, "initial_root_token"))
	if err != nil {
		t.Fatalf("initial root token: %v", err)
	}
	s.URL, s.RootToken = hs.URL, strings.TrimSpace(string(tok))
	return s
}

// Stop shuts the server down (also done when the test ends).
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.http.Close()
		s.App.Close()
	})
}

// Client returns an official Go client using token ("" for anonymous).
func (s *Server) Client(t testing.TB, token string) *gitlab.Client {
	t.Helper()
	var c *gitlab.Client
	var err error
	opts := []gitlab.ClientOptionFunc{gitlab.WithBaseURL(s.URL + "/api/v4"), gitlab.WithoutRetries()}
	c, err = gitlab.NewClient(token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Root is the official client as the administrator.
func (s *Server) Root(t testing.TB) *gitlab.Client { return s.Client(t, s.RootToken) }

// Response is a finished raw request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request describes a raw API call.
type Request struct {
	Method string
	Path   string // under /api/v4 unless it starts with "/-/" or "http"
	Token  string
	Header map[string]string
	// Exactly one body form: JSON (any value), Form (urlencoded) or
	// Multipart (fields, plus Files name → file name/content).
	JSON      any
	Form      url.Values
	Multipart map[string]string
	Files     map[string]File
}

// File is a multipart file part.
type File struct {
	Name    string
	Content []byte
}

// Do performs a raw request.
func (s *Server) Do(t testing.TB, r Request) *Response {
	t.Helper()
	u := r.Path
	switch {
	case strings.HasPrefix(u, "http"):
	case strings.HasPrefix(u, "/-/"), strings.HasPrefix(u, "/uploads/"), strings.HasPrefix(u, "/api/"):
		u = s.URL + u
	default:
		u = s.URL + "/api/v4" + u
	}
	var body io.Reader
	ct := ""
	switch {
	case r.JSON != nil:
		b, err := json.Marshal(r.JSON)
		if err != nil {
			t.Fatal(err)
		}
		body, ct = bytes.NewReader(b), "application/json"
	case r.Form != nil:
		body, ct = strings.NewReader(r.Form.Encode()), "application/x-www-form-urlencoded"
	case r.Multipart != nil || r.Files != nil:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range r.Multipart {
			_ = mw.WriteField(k, v)
		}
		for k, f := range r.Files {
			fw, err := mw.CreateFormFile(k, f.Name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write(f.Content)
		}
		mw.Close()
		body, ct = &buf, mw.FormDataContentType()
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if r.Token != "" {
		req.Header.Set("PRIVATE-TOKEN", r.Token)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Get is a GET with a token.
func (s *Server) Get(t testing.TB, path, token string) *Response {
	t.Helper()
	return s.Do(t, Request{Path: path, Token: token})
}

// Want fails the test unless the response has the given status.
func (r *Response) Want(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d; want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Object decodes the body as a JSON object.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Array decodes the body as an array of objects.
func (r *Response) Array(t testing.TB) []map[string]any {
	t.Helper()
	var a []map[string]any
	r.JSON(t, &a)
	return a
}

// WantBody fails unless the body equals want as JSON.
func (r *Response) WantBody(t testing.TB, want string) *Response {
	t.Helper()
	var got, exp any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.Body, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("want %q is not JSON: %v", want, err)
	}
	g, _ := json.Marshal(got)
	e, _ := json.Marshal(exp)
	if !bytes.Equal(g, e) {
		t.Fatalf("body %s; want %s", g, e)
	}
	return r
}

// User is a user made for a test, with a token of its own.
type User struct {
	ID       int64
	Username string
	Token    string
}

// NewUser creates a user through the API and gives it a token with the
// given scopes (default: api).
func (s *Server) NewUser(t testing.TB, username string, scopes ...string) User {
	t.Helper()
	resp := s.Do(t, Request{Method: "POST", Path: "/users", Token: s.RootToken, JSON: map[string]any{
		"username": username, "email": username + "@example.com", "name": strings.ToUpper(username[:1]) + username[1:],
		"password": "Quarry-test-pass-1", "skip_confirmation": true,
	}}).Want(t, http.StatusCreated)
	var u struct {
		ID int64 `json:"id"`
	}
	resp.JSON(t, &u)
	return User{ID: u.ID, Username: username, Token: s.NewToken(t, u.ID, scopes...)}
}

// NewToken issues a token for a user through the admin API.
func (s *Server) NewToken(t testing.TB, userID int64, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{"api"}
	}
	resp := s.Do(t, Request{Method: "POST", Path: fmt.Sprintf("/users/%d/personal_access_tokens", userID), Token: s.RootToken,
		JSON: map[string]any{"name": "test", "scopes": scopes}}).Want(t, http.StatusCreated)
	var tok struct {
		Token string `json:"token"`
	}
	resp.JSON(t, &tok)
	return tok.Token
}
