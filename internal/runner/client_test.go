package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAPIBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8080":            "http://h:8080/api/v4/",
		"http://h:8080/":           "http://h:8080/api/v4/",
		"https://h/ci":             "https://h/api/v4/",
		"https://h/gitlab/ci/":     "https://h/gitlab/api/v4/",
		"http://h/sub?x=1#frag":    "http://h/sub/api/v4/",
		"http://h/civic":           "http://h/civic/api/v4/",
		"http://user:pw@h/":        "http://user:pw@h/api/v4/",
		"HTTP://h.example.com:1/a": "http://h.example.com:1/a/api/v4/",
	} {
		u, err := apiBase(in)
		if err != nil || u.String() != want {
			t.Errorf("apiBase(%q) = %v, %v; want %q", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "h:8080", "ftp://h", "http://", "://x"} {
		if _, err := apiBase(bad); err == nil {
			t.Errorf("apiBase(%q) accepted", bad)
		}
	}
}

func TestContentRangeAndRange(t *testing.T) {
	for _, tc := range []struct {
		start, n int
		want     string
	}{{0, 1, "0-0"}, {0, 10, "0-9"}, {10, 5, "10-14"}, {1048576, 1048576, "1048576-2097151"}} {
		if got := contentRange(tc.start, tc.n); got != tc.want {
			t.Errorf("contentRange(%d, %d) = %q; want %q", tc.start, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		h    string
		want int
		ok   bool
	}{{"0-0", 0, true}, {"0-1234", 1234, true}, {" 0-7 ", 7, true}, {"", 0, false}, {"5-9", 0, false},
		{"0-", 0, false}, {"0--1", 0, false}, {"bytes 0-5", 0, false}, {"0-x", 0, false}} {
		if got, ok := parseRange(tc.h); got != tc.want || ok != tc.ok {
			t.Errorf("parseRange(%q) = %d, %v; want %d, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
	// After a 416 the next patch starts at the size the server holds,
	// or from 0 when that size is missing or beyond what was written.
	for _, tc := range []struct{ remote, have, want int }{{5, 10, 5}, {0, 10, 0}, {10, 10, 10}, {11, 10, 0}, {-1, 10, 0}} {
		if got := nextOffset(tc.remote, tc.have); got != tc.want {
			t.Errorf("nextOffset(%d, %d) = %d; want %d", tc.remote, tc.have, got, tc.want)
		}
	}
}

func TestRemoteAccess(t *testing.T) {
	remote, env, err := remoteAccess("http://gitlab-ci-token:glcbt-secret@h:8080/g/p.git")
	if err != nil {
		t.Fatal(err)
	}
	if remote != "http://h:8080/g/p.git" {
		t.Errorf("remote %q", remote)
	}
	joined := strings.Join(env, "\n")
	if !strings.Contains(joined, "GIT_CONFIG_VALUE_0=Authorization: Basic "+strings.TrimPrefix(basicAuth("glcbt-secret"), "Basic ")) ||
		!strings.Contains(joined, "GIT_CONFIG_KEY_1=http.followRedirects\nGIT_CONFIG_VALUE_1=false") || !strings.Contains(joined, "GIT_CONFIG_COUNT=2") {
		t.Errorf("env %q", env)
	}
	if remote, env, err := remoteAccess("/local/repo.git"); err != nil || remote != "/local/repo.git" || env != nil {
		t.Errorf("local path: %q %q %v", remote, env, err)
	}
	if _, _, err := remoteAccess("http://gitlab-ci-token:glcbt-secret@h:bad port/"); err == nil || strings.Contains(err.Error(), "glcbt-secret") {
		t.Errorf("bad URL: %v", err)
	}
}

func TestDefaultRefspecs(t *testing.T) {
	for _, tc := range []struct {
		g    gitInfo
		want string
	}{
		{gitInfo{Ref: "main", RefType: "branch", Depth: 20}, "+refs/heads/main:refs/remotes/origin/main"},
		{gitInfo{Ref: "v1", RefType: "tag", Depth: 20}, "+refs/tags/v1:refs/tags/v1"},
		{gitInfo{Ref: "main", RefType: "branch"}, "+refs/heads/*:refs/remotes/origin/* +refs/tags/*:refs/tags/*"},
	} {
		if got := strings.Join(defaultRefspecs(tc.g), " "); got != tc.want {
			t.Errorf("%+v: %q; want %q", tc.g, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{min: 100 * time.Millisecond, max: 5 * time.Second}
	prevMax := time.Duration(0)
	for i := 0; i < 12; i++ {
		d := b.next()
		if d < b.cur/2 || d > b.cur || b.cur > 5*time.Second {
			t.Fatalf("wait %d: %v with step %v", i, d, b.cur)
		}
		if b.cur < prevMax {
			t.Fatalf("step shrank to %v", b.cur)
		}
		prevMax = b.cur
	}
	if b.cur != 5*time.Second {
		t.Errorf("step after 12 waits %v; want the 5s cap", b.cur)
	}
	b.reset()
	if d := b.next(); d > 100*time.Millisecond {
		t.Errorf("after reset %v", d)
	}
}

func TestIsObjectID(t *testing.T) {
	for s, want := range map[string]bool{strings.Repeat("a", 40): true, strings.Repeat("0", 64): true,
		strings.Repeat("A", 40): false, "-" + strings.Repeat("a", 39): false, "abc": false, "": false} {
		if isObjectID(s) != want {
			t.Errorf("isObjectID(%q) = %v", s, !want)
		}
	}
}

// The server's error bodies end up in the error, whatever their shape.
func TestErrorFrom(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"403 Forbidden"}`:          "POST /api/v4/runners: 403 Forbidden: 403 Forbidden",
		`{"message":{"tags_list":["is bad"]}}`: `POST /api/v4/runners: 403 Forbidden: {"tags_list":["is bad"]}`,
		`{"error":"token is missing"}`:         "POST /api/v4/runners: 403 Forbidden: token is missing",
		"not json":                             "POST /api/v4/runners: 403 Forbidden",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			w.Write([]byte(body))
		}))
		c, err := newClient(Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.register(context.Background(), registerRequest{Token: "x"})
		srv.Close()
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("body %s: %v; want …%s", body, err, want)
		}
	}
}

// A JSON answer must say it is JSON, as gitlab-runner insists.
func TestRequestJob_needsJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(201)
		w.Write([]byte(`{"id":1,"token":"t"}`))
	}))
	defer srv.Close()
	c, err := newClient(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if j, _, err := c.requestJob(context.Background(), "t", "s", ""); err == nil || j != nil {
		t.Errorf("text/plain job accepted: %v", err)
	}
}

// The sender hands the server's word on to the build: Job-Status
// canceling is a graceful cancel, 403 or canceled/failed an abort. The
// sender answers one patch before sending the next, so the event after the
// first patch is the reaction, or the second patch when there is none.
func TestJobLog_reactsToTheServer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		code      int
		jobStatus string
		want      string
	}{
		{"canceling", 202, "canceling", "cancel"},
		{"canceled", 403, "canceled", "abort"},
		{"failed meanwhile", 202, "failed", "abort"},
		{"forbidden", 403, "", "abort"},
		{"running", 202, "running", "patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := make(chan string, 100)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPatch {
					t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
				}
				b, _ := io.ReadAll(r.Body)
				w.Header().Set("Job-Status", tc.jobStatus)
				w.Header().Set("Range", "0-"+strconv.Itoa(len(b)))
				w.WriteHeader(tc.code)
				events <- "patch"
			}))
			defer srv.Close()
			c, err := newClient(Config{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			tm := testTiming()
			tm.keepAlive = time.Hour
			l := newJobLog(c, 1, "tok", nil, tm, newTestLog(t))
			l.onCancel = func() { events <- "cancel" }
			l.onAbort = func() { events <- "abort" }
			l.Write([]byte("hello"))
			l.start(context.Background())
			defer l.finish(context.Background(), result{Silent: true})
			next := func() string {
				select {
				case e := <-events:
					return e
				case <-time.After(20 * time.Second):
					t.Fatal("no event")
					return ""
				}
			}
			if e := next(); e != "patch" {
				t.Fatalf("first event %q", e)
			}
			l.Write([]byte(" more"))
			if e := next(); e != tc.want {
				t.Errorf("after the answer: %q; want %q", e, tc.want)
			}
		})
	}
}
