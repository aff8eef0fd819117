package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/web"
)

// browser is a client of the web pages: it keeps the session cookie
// itself and does not follow redirects, so tests see each answer.
type browser struct {
	s      *apitest.Server
	cookie string // the session id, "" when signed out
	client *http.Client
}

func newBrowser(s *apitest.Server) *browser {
	return &browser{s: s, client: &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer of the web.
type page struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to a web path as a browser would (Accept: text/html)
// with the session cookie; headers add to or replace those.
func (b *browser) do(t testing.TB, method, path string, form url.Values, headers map[string]string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.cookie != "" {
		req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: b.cookie})
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			b.cookie = c.Value
			if c.MaxAge < 0 {
				b.cookie = ""
			}
		}
	}
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(data)}
}

func (b *browser) get(t testing.TB, path string) page {
	t.Helper()
	return b.do(t, "GET", path, nil, nil)
}

// signIn posts the sign-in form.
func (b *browser) signIn(t testing.TB, login, password string) page {
	t.Helper()
	return b.do(t, "POST", "/users/sign_in", url.Values{"user[login]": {login}, "user[password]": {password}}, nil)
}

func (p page) want(t testing.TB, status int) page {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d; want %d; body:\n%.600s", p.Status, status, p.Body)
	}
	return p
}

func (p page) contains(t testing.TB, subs ...string) page {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(p.Body, s) {
			t.Errorf("page lacks %q; body:\n%.1500s", s, p.Body)
		}
	}
	return p
}

func (p page) lacks(t testing.TB, subs ...string) page {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(p.Body, s) {
			t.Errorf("page has %q", s)
		}
	}
	return p
}

// webPassword is the password apitest gives the users it makes.
const webPassword = "Quarry-test-pass-1"

// webProject makes a project of owner's with files: a Markdown README
// (with an attempt at script), Go code, a folder, an image and a binary.
func webProject(t testing.TB, s *apitest.Server, token, name, visibility string) map[string]any {
	t.Helper()
	p := s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: token, JSON: map[string]any{
		"name": name, "visibility": visibility, "description": "A demo of " + name, "topics": []string{"demo", "go"},
		"initialize_with_readme": true}}).Want(t, http.StatusCreated).Object(t)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\x0dIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	actions := []map[string]any{
		{"action": "update", "file_path": "README.md", "content": "# Hello " + name + "\n\nSome *words*.\n\n<script>alert('readme')</script>\n"},
		{"action": "create", "file_path": "main.go", "content": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi <b>\")\n}\n"},
		{"action": "create", "file_path": "docs/guide.md", "content": "## Guide\n\nRead [me](../README.md).\n"},
		{"action": "create", "file_path": "logo.png", "encoding": "base64", "content": base64.StdEncoding.EncodeToString(png)},
		{"action": "create", "file_path": "data.bin", "encoding": "base64", "content": base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3, 0, 255})},
		{"action": "create", "file_path": "<img src=x onerror=alert(1)>.txt", "content": "x\n"},
	}
	s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%v/repository/commits", p["id"]), Token: token,
		JSON: map[string]any{"branch": "main", "commit_message": "Add files <em>now</em>", "actions": actions}}).Want(t, http.StatusCreated)
	return p
}
