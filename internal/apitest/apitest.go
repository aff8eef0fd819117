// Package apitest starts a real Quarry in-process for end-to-end tests: the
// whole application on an httptest server, a temp data folder, and SQLite
// or a fresh, migrated PostgreSQL database. It hands out the root token, official Go
// clients and a raw HTTP helper.
package apitest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	sqlite    string // the SQLite file, when Target is SQLite

	mu     sync.Mutex
	rootID int64 // 0 until RootID asked
}

// Option changes the configuration before the server starts.
type Option func(*config.Config)

// DelayedDeletion keeps deleted projects and groups restorable for a week
// (the default removes them at once).
func DelayedDeletion(c *config.Config) { c.DeletionDelay = 7 * 24 * time.Hour }

// Each runs body against a fresh server on every test database (SQLite,
// and PostgreSQL when QUARRY_TEST_DATABASE_URL is set). It calls
// t.Parallel, so the test runs alongside the package's other parallel
// tests, and runs the databases' subtests in parallel with each other:
// every server has its own port, data folder and SQLite file or
// PostgreSQL database, and shares nothing with the others but the process.
// The caller must not call t.Parallel or t.Setenv itself. A test that
// needs the process to itself (it changes process-wide state, measures
// the whole process's memory or processes, or depends on wall-clock
// timing) uses EachSerial.
func Each(t *testing.T, body func(t *testing.T, s *Server), opts ...Option) {
	t.Helper()
	t.Parallel()
	// Not storetest.Each, which makes the PostgreSQL schema before the body
	// runs: a subtest waiting for its turn would hold the schema's
	// connection, and a package of waiting subtests would exhaust the
	// server's connections. Here nothing exists until the subtest runs.
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			body(t, Start(t, NewTarget(t, d), opts...))
		})
	}
}

// EachSerial is Each without parallelism: the test and its subtests run
// alone (the package's parallel tests wait until every serial test has
// finished). Say at the call why the test must.
func EachSerial(t *testing.T, body func(t *testing.T, s *Server), opts ...Option) {
	t.Helper()
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			body(t, Start(t, NewTarget(t, d), opts...))
		})
	}
}

// EachTarget runs body once per test database, as subtests named after
// them that run in parallel with each other, each on a fresh target
// (NewTarget) made once the subtest runs: for a test that starts its
// servers itself (a clock or data folder of each server's own, a restart,
// two processes on one database). The subtests call t.Parallel; body must
// not.
func EachTarget(t *testing.T, body func(t *testing.T, target storetest.Target)) {
	t.Helper()
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			body(t, NewTarget(t, d))
		})
	}
}

// NewTarget returns a fresh database of dialect d ("sqlite" or "postgres")
// for servers to start on, gone when the test ends. On PostgreSQL it is a
// database of its own, already migrated (storetest.NewPostgresDatabase):
// the server's start migrates nothing, as on SQLite (seedSQLite), and
// creates its administrator as on an empty database. Migrating from empty
// is tested once per dialect in internal/store.
func NewTarget(t testing.TB, d string) storetest.Target {
	t.Helper()
	target := storetest.Target{Name: d}
	if d == "postgres" {
		target.DatabaseURL = storetest.NewPostgresDatabase(t)
	}
	return target
}

// migratedSQLite is an SQLite database file with every migration applied
// and nothing else, made once per test process.
var migratedSQLite struct {
	once sync.Once
	file []byte
	err  error
}

// seedSQLite puts a migrated, empty database at path unless a database is
// there already (a restart). The server then starts as on a fresh file,
// creating its administrator, but its migration finds nothing to do:
// migrating from empty costs more CPU than the rest of a short test, and
// is tested once per dialect in internal/store.
func seedSQLite(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	m := &migratedSQLite
	m.once.Do(func() {
		m.err = errors.New("the test that made it failed") // unless it returns
		dir, err := os.MkdirTemp("", "quarry-migrated-")
		if err != nil {
			m.err = err
			return
		}
		defer os.RemoveAll(dir)
		db := storetest.Open(t, storetest.Target{Name: "sqlite"}, dir)
		// Closing checkpoints the write-ahead log into the file.
		if m.err = db.Close(); m.err == nil {
			m.file, m.err = os.ReadFile(filepath.Join(dir, "quarry.db"))
		}
	})
	if m.err != nil {
		t.Fatalf("migrated SQLite database: %v", m.err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, m.file, 0o600); err != nil {
		t.Fatal(err)
	}
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
	cfg.SSHListen = "" // a test that serves git over SSH sets it (and starts the SSH server)
	for _, o := range opts {
		o(&cfg)
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("QUARRY_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	failures := &failureLog{Handler: slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}), mu: &sync.Mutex{}, seen: &[]string{}}
	log := slog.New(failures)
	// Registered before the server's own cleanup, so it runs after the
	// server stopped: every request has been answered by then.
	t.Cleanup(func() {
		if lines := failures.lines(); len(lines) > 0 {
			t.Errorf("the server answered 500 (every refusal must be a classified error):\n%s", strings.Join(lines, "\n"))
		}
	})
	if target.DatabaseURL == "" {
		seedSQLite(t, cfg.SQLitePath())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		ln.Close()
		t.Fatalf("start quarry on %s: %v", target.Name, err)
	}
	hs := &httptest.Server{Listener: a.Limit(ln), Config: &http.Server{Handler: a.Handler, MaxHeaderBytes: app.MaxHeaderBytes}}
	hs.Start()
	s := &Server{App: a, Target: target, DataDir: dir, http: hs, sqlite: cfg.SQLitePath()}
	t.Cleanup(s.Stop)
	tok, err := os.ReadFile(filepath.Join(dir, "initial_root_token"))
	if err != nil {
		t.Fatalf("initial root token: %v", err)
	}
	s.URL, s.RootToken = hs.URL, strings.TrimSpace(string(tok))
	return s
}

// failureLog passes records to its handler and keeps the ones that say a
// request failed on the server's side (an unclassified error, a panic).
type failureLog struct {
	slog.Handler
	mu   *sync.Mutex
	seen *[]string
}

func (f *failureLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && (r.Message == "request failed" || r.Message == "panic" || r.Message == "git access") {
		line := r.Message
		r.Attrs(func(a slog.Attr) bool {
			line += " " + a.String()
			return true
		})
		f.mu.Lock()
		*f.seen = append(*f.seen, line)
		f.mu.Unlock()
	}
	return f.Handler.Handle(ctx, r)
}

func (f *failureLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &failureLog{Handler: f.Handler.WithAttrs(attrs), mu: f.mu, seen: f.seen}
}

func (f *failureLog) WithGroup(name string) slog.Handler {
	return &failureLog{Handler: f.Handler.WithGroup(name), mu: f.mu, seen: f.seen}
}

func (f *failureLog) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), *f.seen...)
}

// SQLitePath is the server's SQLite database file ("" on PostgreSQL).
func (s *Server) SQLitePath() string {
	if s.Target.DatabaseURL != "" {
		return ""
	}
	return s.sqlite
}

// PostgresSchema is the schema the server's PostgreSQL connections use
// ("" on SQLite).
func (s *Server) PostgresSchema() string {
	if s.Target.DatabaseURL == "" {
		return ""
	}
	u, err := url.Parse(s.Target.DatabaseURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// Stop shuts the server down (also done when the test ends).
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.App.StopRunnerQueue()
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
	// Raw is a body sent as it is (set its Content-Type in Header).
	Raw []byte
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
	case r.Raw != nil:
		body = bytes.NewReader(r.Raw)
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

// WantText checks the body is exactly want (not JSON: logs, files).
func (r *Response) WantText(t testing.TB, want string) *Response {
	t.Helper()
	if string(r.Body) != want {
		t.Fatalf("body %q; want %q", r.Body, want)
	}
	return r
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

// RootID is the administrator's user id, as GET /user answers it for the
// root token (asked once per server). Tests never assume root is user 1.
func (s *Server) RootID(t testing.TB) int64 {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rootID == 0 {
		var u struct {
			ID int64 `json:"id"`
		}
		s.Get(t, "/user", s.RootToken).Want(t, http.StatusOK).JSON(t, &u)
		if u.ID == 0 {
			t.Fatal("GET /user as root: no id")
		}
		s.rootID = u.ID
	}
	return s.rootID
}

// absentMargin is how far past the highest id handed out AbsentID goes:
// more rows than any test inserts after asking.
const absentMargin = 1_000_000

// AbsentID returns an id that no row of any table holds, for requests
// about rows that must not exist: a million past the highest id the
// database has handed out so far (every id column counts up from one
// sequence per table: SQLite's AUTOINCREMENT, PostgreSQL's identity), so
// the rows the test inserts afterwards do not reach it either.
func (s *Server) AbsentID(t testing.TB) int64 {
	t.Helper()
	driver, dsn, q := "sqlite", "file:"+s.sqlite+"?_pragma=query_only(1)", "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence"
	if s.Target.DatabaseURL != "" {
		driver, dsn, q = "pgx", s.Target.DatabaseURL, "SELECT COALESCE(MAX(last_value), 0) FROM pg_sequences WHERE schemaname = current_schema()"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", s.Target.Name, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var highest int64
	if err := db.QueryRowContext(ctx, q).Scan(&highest); err != nil {
		t.Fatalf("highest id on %s: %v", s.Target.Name, err)
	}
	return highest + absentMargin
}

// MaxPages bounds every walk through a paginated list in tests: a server
// that keeps handing out next pages fails the test instead of hanging it.
const MaxPages = 1000

// Walk GETs first (a path or URL, as Do reads it) with token, then each
// rel="next" Link in turn until a response has none, and hands every
// response, which must be a 200, to page. It fails the test when a next
// page is still announced after MaxPages pages.
func (s *Server) Walk(t testing.TB, first, token string, page func(r *Response)) {
	t.Helper()
	next := first
	for n := 0; next != ""; n++ {
		if n == MaxPages {
			t.Fatalf("walk from %s: a next page after %d pages", first, MaxPages)
		}
		r := s.Get(t, next, token).Want(t, http.StatusOK)
		page(r)
		next = Links(t, r.Header)["next"]
	}
}

// Links parses a response's Link header into rel → URL; a malformed part
// fails the test.
func Links(t testing.TB, h http.Header) map[string]string {
	t.Helper()
	out := map[string]string{}
	l := h.Get("Link")
	if l == "" {
		return out
	}
	for _, part := range strings.Split(l, ", ") {
		i, j := strings.Index(part, "<"), strings.Index(part, ">")
		k := strings.Index(part, `rel="`)
		if i != 0 || j < 0 || k < j {
			t.Fatalf("malformed Link part %q in %q", part, l)
		}
		rel := strings.TrimSuffix(part[k+len(`rel="`):], `"`)
		out[rel] = part[i+1 : j]
	}
	return out
}
