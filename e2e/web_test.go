package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/auth"
	cfgpkg "quarry/internal/config"
	"quarry/internal/storetest"
)

// wantSecurityHeaders checks the headers every page carries.
func wantSecurityHeaders(t *testing.T, path string, p page) {
	t.Helper()
	csp := p.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("%s: Content-Security-Policy %q", path, csp)
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "strict-origin-when-cross-origin",
		"X-Content-Type-Options": "nosniff"} {
		if got := p.Header.Get(h); got != want {
			t.Errorf("%s: %s %q; want %q", path, h, got, want)
		}
	}
}

// TestWeb_pages: the pages of a public project answer anyone with HTML,
// the security headers and no shared caching; code is highlighted with
// line anchors, Markdown rendered and sanitised, images shown, binaries
// offered as downloads, raw files served as inert text.
func TestWeb_pages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		webProject(t, s, alice.Token, "demo", "public")
		b := newBrowser(s)

		for _, path := range []string{"/", "/explore", "/explore/projects", "/alice/demo", "/alice/demo/-/tree/main",
			"/alice/demo/-/tree/main/docs", "/alice/demo/-/blob/main/main.go", "/users/sign_in"} {
			p := b.get(t, path).want(t, http.StatusOK)
			wantSecurityHeaders(t, path, p)
			if ct := p.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", path, ct)
			}
			if cc := p.Header.Get("Cache-Control"); !strings.Contains(cc, "private") {
				t.Errorf("%s: Cache-Control %q; want private", path, cc)
			}
			if strings.Contains(p.Body, "<script>") {
				t.Errorf("%s: inline script in the page", path)
			}
		}
		b.get(t, "/explore/projects").contains(t, `href="/alice/demo"`, "Alice / demo", "A demo of demo")
		b.get(t, "/explore/projects?name=nothing-like-it").lacks(t, `href="/alice/demo"`)
		b.get(t, "/explore/projects?page=0").want(t, http.StatusBadRequest)
		b.get(t, "/explore/projects?page=x").want(t, http.StatusBadRequest)

		ov := b.get(t, "/alice/demo").contains(t, "A demo of demo", "<li>demo</li>", "<li>go</li>",
			`value="`+s.URL+`/alice/demo.git"`, `value="git@127.0.0.1:alice/demo.git"`, `data-copy=`,
			`<h1>Hello demo</h1>`, "<em>words</em>", `data-testid="default-branch">main<`, "Add files &lt;em&gt;now&lt;/em&gt;",
			`href="/alice/demo/-/blob/main/main.go"`, `href="/alice/demo/-/tree/main/docs"`, "★ 0 stars")
		ov.lacks(t, "alert('readme')", "<img src=x")
		if i, j := strings.Index(ov.Body, ">docs<"), strings.Index(ov.Body, ">README.md<"); i < 0 || j < 0 || i > j {
			t.Errorf("folders are not listed before files")
		}

		b.get(t, "/alice/demo/-/tree/main/docs").contains(t, `href="/alice/demo/-/blob/main/docs/guide.md"`, `href="/alice/demo/-/tree/main"`)
		b.get(t, "/alice/demo/-/tree/main/main.go").want(t, http.StatusFound)
		b.get(t, "/alice/demo/-/tree/no-such-branch").want(t, http.StatusNotFound)

		code := b.get(t, "/alice/demo/-/blob/main/main.go").contains(t, `class="chroma"`, `id="L1"`, `href="#L7"`,
			`<span class="kn">package</span>`, "&lt;b&gt;", `href="/alice/demo/-/raw/main/main.go"`)
		code.lacks(t, "<b>")
		b.get(t, "/alice/demo/-/blob/main/README.md").contains(t, `data-testid="markdown"`, "<h1>Hello demo</h1>", "?plain=1").lacks(t, "alert(")
		b.get(t, "/alice/demo/-/blob/main/docs/guide.md").contains(t, `<a href="/alice/demo/-/blob/main/README.md"`)
		b.get(t, "/alice/demo/-/blob/main/README.md?plain=1").contains(t, `class="chroma"`, "Rendered")
		b.get(t, "/alice/demo/-/blob/main/logo.png").contains(t, `<img src="/alice/demo/-/raw/main/logo.png"`)
		b.get(t, "/alice/demo/-/blob/main/data.bin").contains(t, "binary format", `href="/alice/demo/-/raw/main/data.bin?inline=false"`)
		b.get(t, "/alice/demo/-/blob/main/"+url.PathEscape("<img src=x onerror=alert(1)>.txt")).want(t, http.StatusOK).
			contains(t, "&lt;img src=x onerror=alert(1)&gt;.txt").lacks(t, "<img src=x")
		b.get(t, "/alice/demo/-/blob/main/nothing.go").want(t, http.StatusNotFound).contains(t, "404: Page not found")

		raw := b.get(t, "/alice/demo/-/raw/main/main.go").want(t, http.StatusOK)
		if raw.Body != "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi <b>\")\n}\n" ||
			raw.Header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.Contains(raw.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("raw: %q %v", raw.Body, raw.Header)
		}
		dl := b.get(t, "/alice/demo/-/raw/main/data.bin?inline=false").want(t, http.StatusOK)
		if dl.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(dl.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("download: %v", dl.Header)
		}
		if img := b.get(t, "/alice/demo/-/raw/main/logo.png"); img.Header.Get("Content-Type") != "image/png" {
			t.Errorf("image: %v", img.Header)
		}

		// Unknown paths: a sign-in for an anonymous browser (any path may
		// be a private project's), GitLab's 404 page for a signed-in one,
		// and the API's JSON 404 to any other client, as before the pages.
		b.get(t, "/no/such/thing").want(t, http.StatusFound)
		b.get(t, "/alice/demo/-/nothing").want(t, http.StatusNotFound).contains(t, "404: Page not found", "Sign in")
		signed := newBrowser(s)
		signed.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		signed.get(t, "/no/such/thing").want(t, http.StatusNotFound).contains(t, "404: Page not found").lacks(t, `href="/users/sign_in"`)
		wantSecurityHeaders(t, "404", signed.get(t, "/no/such/thing"))
		api := s.Do(t, apitest.Request{Path: "http" + strings.TrimPrefix(s.URL, "http") + "/no/such/thing"}).Want(t, http.StatusNotFound)
		api.WantBody(t, `{"error":"404 Not Found"}`)
		s.Do(t, apitest.Request{Path: "/no-such-endpoint"}).Want(t, http.StatusNotFound).WantBody(t, `{"error":"404 Not Found"}`)
		s.Get(t, "/projects/alice%2Fdemo", "").Want(t, http.StatusOK)
		s.Do(t, apitest.Request{Path: "/-/health"}).Want(t, http.StatusOK)
		refs := b.get(t, "/alice/demo.git/info/refs?service=git-upload-pack").want(t, http.StatusOK)
		if refs.Header.Get("Content-Type") != "application/x-git-upload-pack-advertisement" {
			t.Errorf("git smart HTTP: %v", refs.Header)
		}
	})
}

// TestWeb_assets: assets have fingerprinted names, are cached for a year
// and sent gzip-compressed to a client that takes it.
func TestWeb_assets(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		b := newBrowser(s)
		home := b.get(t, "/").want(t, http.StatusOK)
		css := regexp.MustCompile(`href="(/assets/app-[0-9a-f]{16}\.css)"`).FindStringSubmatch(home.Body)
		js := regexp.MustCompile(`src="(/assets/app-[0-9a-f]{16}\.js)"`).FindStringSubmatch(home.Body)
		if css == nil || js == nil {
			t.Fatalf("no fingerprinted assets in the page:\n%s", home.Body)
		}
		for _, c := range []struct {
			path, ctype string
		}{{css[1], "text/css; charset=utf-8"}, {js[1], "text/javascript; charset=utf-8"}} {
			plain := b.do(t, "GET", c.path, nil, map[string]string{"Accept-Encoding": "identity"}).want(t, http.StatusOK)
			if plain.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || plain.Header.Get("Content-Type") != c.ctype ||
				plain.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s: %v", c.path, plain.Header)
			}
			gz := b.do(t, "GET", c.path, nil, map[string]string{"Accept-Encoding": "gzip, deflate"}).want(t, http.StatusOK)
			if gz.Header.Get("Content-Encoding") != "gzip" || len(gz.Body) >= len(plain.Body) {
				t.Errorf("%s gzip: %v, %d bytes of %d", c.path, gz.Header, len(gz.Body), len(plain.Body))
			}
		}
		if !strings.Contains(b.get(t, css[1]).Body, "prefers-color-scheme: dark") {
			t.Errorf("the style sheet has no dark scheme")
		}
		b.get(t, "/assets/app-0000000000000000.css").want(t, http.StatusNotFound)
	})
}

// TestWeb_visibility: a page of a private project is a 404 for a signed-in
// user who may not see it and a redirect to sign in (and back) for an
// anonymous visitor, exactly as the API decides.
func TestWeb_visibility(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice, _ := s.NewUser(t, "alice"), s.NewUser(t, "bob")
		webProject(t, s, alice.Token, "secret", "private")
		paths := []string{"/alice/secret", "/alice/secret/-/tree/main", "/alice/secret/-/blob/main/main.go", "/alice/secret/-/raw/main/main.go",
			"/alice/missing", "/alice/missing/-/tree/main"}

		anon := newBrowser(s)
		for _, p := range paths {
			r := anon.get(t, p).want(t, http.StatusFound)
			if want := "/users/sign_in?redirect_to=" + url.QueryEscape(p); r.Header.Get("Location") != want {
				t.Errorf("%s: Location %q; want %q", p, r.Header.Get("Location"), want)
			}
		}
		anon.get(t, "/explore/projects").lacks(t, "secret")

		bob := newBrowser(s)
		bob.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)
		for _, p := range paths {
			bob.get(t, p).want(t, http.StatusNotFound).contains(t, "404: Page not found")
		}
		bob.get(t, "/").lacks(t, "secret")

		ab := newBrowser(s)
		ab.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		for _, p := range paths[:4] {
			ab.get(t, p).want(t, http.StatusOK)
		}
		ab.get(t, "/").want(t, http.StatusOK).contains(t, `href="/alice/secret"`, "Your projects", "@alice")
		// Through sign-in and back where the visitor was going.
		back := newBrowser(s)
		back.get(t, "/users/sign_in?redirect_to=%2Falice%2Fsecret%2F-%2Ftree%2Fmain").want(t, http.StatusOK).
			contains(t, `name="redirect_to" value="/alice/secret/-/tree/main"`)
		r := back.do(t, "POST", "/users/sign_in", url.Values{"user[login]": {"alice"}, "user[password]": {webPassword},
			"redirect_to": {"/alice/secret/-/tree/main"}}, nil).want(t, http.StatusSeeOther)
		if r.Header.Get("Location") != "/alice/secret/-/tree/main" {
			t.Errorf("after sign-in: Location %q", r.Header.Get("Location"))
		}
	})
}

// TestWeb_redirectTo: sign-in goes back only to a path of this site.
func TestWeb_redirectTo(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "alice")
		for _, c := range []struct{ to, want string }{
			{"/alice", "/alice"},
			{"/explore/projects?page=2", "/explore/projects?page=2"},
			{"//evil.example/x", "/"},
			{"/\\evil.example", "/"},
			{"https://evil.example/", "/"},
			{"javascript:alert(1)", "/"},
			{"evil.example", "/"},
			{"/a\r\nSet-Cookie: x=y", "/"},
			{"", "/"},
		} {
			b := newBrowser(s)
			r := b.do(t, "POST", "/users/sign_in", url.Values{"user[login]": {"alice"}, "user[password]": {webPassword},
				"redirect_to": {c.to}}, nil).want(t, http.StatusSeeOther)
			if got := r.Header.Get("Location"); got != c.want {
				t.Errorf("redirect_to %q: Location %q; want %q", c.to, got, c.want)
			}
		}
	})
}

// TestWeb_sessions: sign-in by username or e-mail sets a session cookie
// (HttpOnly, SameSite=Lax, not Secure on http, no expiry of its own: the
// database's session decides) whose id the database
// keeps only as a digest; a fresh id each sign-in; sign-out ends the
// session for good; a wrong password or a blocked user is refused.
func TestWeb_sessions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		webProject(t, s, alice.Token, "secret", "private")

		b := newBrowser(s)
		b.signIn(t, "alice", "wrong-password").want(t, http.StatusUnauthorized).contains(t, "Invalid login or password.", `value="alice"`)
		b.signIn(t, "nobody", "wrong-password").want(t, http.StatusUnauthorized).contains(t, "Invalid login or password.")
		if b.cookie != "" {
			t.Fatalf("a failed sign-in set a session")
		}
		b.cookie = "qs_planted-by-someone-else"
		r := b.signIn(t, "ALICE@example.com", webPassword).want(t, http.StatusSeeOther)
		if r.Header.Get("Location") != "/" || b.cookie == "" || b.cookie == "qs_planted-by-someone-else" {
			t.Fatalf("sign-in by e-mail: %v, cookie %q", r.Header, b.cookie)
		}
		set := r.Header.Get("Set-Cookie")
		if !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") || strings.Contains(set, "Secure") ||
			!strings.Contains(set, "Path=/") || strings.Contains(set, "Expires=") || strings.Contains(set, "Max-Age") {
			t.Errorf("Set-Cookie %q", set)
		}
		ctx := context.Background()
		if _, _, err := s.App.DB.WebSessionWithUser(ctx, b.cookie); err == nil {
			t.Errorf("the session id itself is stored")
		}
		ws, u, err := s.App.DB.WebSessionWithUser(ctx, auth.Digest(b.cookie))
		if err != nil || u.Username != "alice" || !ws.ExpiresAt.After(ws.CreatedAt.Add(6*24*time.Hour)) {
			t.Fatalf("stored session %+v of %q: %v (want one of a week: session_expire_delay's default)", ws, u.Username, err)
		}
		b.get(t, "/alice/secret").want(t, http.StatusOK)
		b.get(t, "/users/sign_in").want(t, http.StatusFound)

		// A second sign-in by username is another session.
		b2 := newBrowser(s)
		b2.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		if b2.cookie == b.cookie {
			t.Errorf("two sign-ins share a session id")
		}

		old := b.cookie
		b.do(t, "POST", "/users/sign_out", url.Values{}, nil).want(t, http.StatusSeeOther)
		if b.cookie != "" {
			t.Errorf("sign-out left the cookie")
		}
		b.cookie = old
		b.get(t, "/alice/secret").want(t, http.StatusFound)
		b2.get(t, "/alice/secret").want(t, http.StatusOK)

		// Blocking ends the user's sessions and refuses new ones.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/users/%d/block", alice.ID), Token: s.RootToken}).Want(t, http.StatusCreated)
		b2.get(t, "/alice/secret").want(t, http.StatusFound)
		b3 := newBrowser(s)
		b3.signIn(t, "alice", webPassword).want(t, http.StatusForbidden).contains(t, "Your account has been blocked.")
		if b3.cookie != "" {
			t.Errorf("a blocked user got a session")
		}
	})
}

// TestWeb_crossOrigin: a state-changing form sent from another site is
// refused, and changes nothing.
func TestWeb_crossOrigin(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "alice")
		b := newBrowser(s)
		form := url.Values{"user[login]": {"alice"}, "user[password]": {webPassword}}
		for _, h := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Origin": "http://evil.example"},
			{"Sec-Fetch-Site": "same-site"},
		} {
			b.do(t, "POST", "/users/sign_in", form, h).want(t, http.StatusForbidden).contains(t, "Cross-site request refused")
			if b.cookie != "" {
				t.Fatalf("a cross-origin sign-in set a session (%v)", h)
			}
		}
		b.do(t, "POST", "/users/sign_in", form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.URL}).want(t, http.StatusSeeOther)
		b.do(t, "POST", "/users/sign_out", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}).want(t, http.StatusForbidden)
		b.get(t, "/").contains(t, "@alice")
	})
}

// TestWeb_signInLimit: a login's sign-in attempts are limited per minute;
// past the limit even the right password is refused, with 429.
func TestWeb_signInLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		s.NewUser(t, "alice")
		s.NewUser(t, "bob")
		b := newBrowser(s)
		for range 10 {
			b.signIn(t, "alice", "wrong-password").want(t, http.StatusUnauthorized)
		}
		r := b.signIn(t, "alice", webPassword).want(t, http.StatusTooManyRequests).contains(t, "Too many sign-in attempts")
		if r.Header.Get("Retry-After") == "" || b.cookie != "" {
			t.Errorf("limited sign-in: %v, cookie %q", r.Header, b.cookie)
		}
		b.signIn(t, "bob", webPassword).want(t, http.StatusSeeOther)

		// A sign-in form past its 16 KiB is refused before it is read.
		newBrowser(s).do(t, "POST", "/users/sign_in", url.Values{"user[login]": {"bob"}, "user[password]": {strings.Repeat("p", 17<<10)}}, nil).
			want(t, http.StatusRequestEntityTooLarge)
	})
}

// TestWeb_sessionExpiry: a session ends session_expire_delay minutes after
// its last use, by the server's clock.
func TestWeb_sessionExpiry(t *testing.T) {
	t.Parallel()
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		t.Parallel()
		clock := &testClock{now: start}
		s := apitest.Start(t, target, func(c *cfgpkg.Config) { c.Clock = clock.Now })
		alice := s.NewUser(t, "alice")
		webProject(t, s, alice.Token, "secret", "private")
		s.Do(t, apitest.Request{Method: "PUT", Path: "/application/settings", Token: s.RootToken,
			JSON: map[string]any{"session_expire_delay": 10}}).Want(t, http.StatusOK)
		b := newBrowser(s)
		b.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		id := b.cookie
		clock.Set(start.Add(9 * time.Minute))
		b.get(t, "/alice/secret").want(t, http.StatusOK) // used: ends 10 minutes from now
		clock.Set(start.Add(18 * time.Minute))
		b.get(t, "/alice/secret").want(t, http.StatusOK)
		clock.Set(start.Add(28*time.Minute + time.Second))
		b.get(t, "/alice/secret").want(t, http.StatusFound)
		if b.cookie != "" {
			t.Errorf("an ended session's cookie was kept")
		}
		b.cookie = id
		b.get(t, "/alice/secret").want(t, http.StatusFound)
	})
}

// TestWeb_secureCookie: behind an https external URL the session cookie
// is Secure, and clone URLs name the external host.
func TestWeb_secureCookie(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		alice := s.NewUser(t, "alice")
		webProject(t, s, alice.Token, "demo", "public")
		b := newBrowser(s)
		r := b.signIn(t, "alice", webPassword).want(t, http.StatusSeeOther)
		if set := r.Header.Get("Set-Cookie"); !strings.Contains(set, "; Secure") || !strings.Contains(set, "HttpOnly") {
			t.Errorf("Set-Cookie %q; want Secure", set)
		}
		b.get(t, "/alice/demo").want(t, http.StatusOK).contains(t, `value="https://quarry.example/alice/demo.git"`, `value="git@quarry.example:alice/demo.git"`)
		// A form from the external URL's origin is this site's.
		b.do(t, "POST", "/users/sign_out", url.Values{}, map[string]string{"Origin": "https://quarry.example"}).want(t, http.StatusSeeOther)
	}, func(c *cfgpkg.Config) { c.ExternalURL = "https://quarry.example" })
}
