// Package web serves Quarry's HTML pages at GitLab's web paths, beside the
// API on the same server: sign-in and sessions, the explore and home
// lists, a project's overview and its repository (tree, blob, raw).
//
// Pages call the same services as the API (projects, users, repofiles)
// with the actor a session signs in, so what a page shows is exactly what
// the API would; the package runs no SQL and no git. Templates are
// html/template (escaping everywhere); assets are embedded, fingerprinted
// and compressed once at start. Every response carries a strict
// Content-Security-Policy (no inline script), and every state-changing
// form is refused from another origin (http.CrossOriginProtection).
package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"quarry/internal/approvals"
	"quarry/internal/auth"
	"quarry/internal/bytelru"
	"quarry/internal/ci"
	"quarry/internal/groups"
	"quarry/internal/issues"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
	"quarry/internal/notes"
	"quarry/internal/projects"
	"quarry/internal/ratelimit"
	"quarry/internal/releases"
	"quarry/internal/repofiles"
	"quarry/internal/snippets"
	"quarry/internal/tokens"
	"quarry/internal/users"
	"quarry/internal/wikis"
)

// Deps are what the pages need from the rest of Quarry.
type Deps struct {
	Users    *users.Service
	Groups   *groups.Service
	Projects *projects.Service
	Files    *repofiles.Service
	Wikis    *wikis.Service
	Snippets *snippets.Service
	Tokens   *tokens.Service
	Releases *releases.Service
	// CI serves the pipelines and jobs pages.
	CI *ci.Service
	// ExternalURL is the instance's base URL (no trailing slash): clone
	// URLs, the Secure flag of cookies (https) and the trusted origin of
	// forms.
	ExternalURL string
	// SSHHost and SSHPort are where git over SSH is reached, as the API
	// hands them out in ssh_url_to_repo (host: the external URL's when
	// empty; port: 22 when 0).
	SSHHost string
	SSHPort int
	Log     *slog.Logger
	// Now is the clock of the sign-in limits (default time.Now).
	Now func() time.Time
	// SignInLimit bounds sign-in attempts per minute for one login; a
	// client address may try six times as many (default 10).
	SignInLimit int
	// CacheBytes bounds what the pages keep rendered (highlighted files,
	// READMEs, folders' listings, projects' heads, merge requests' diffs:
	// pageCache); 0 keeps nothing.
	CacheBytes int64

	// The merge request pages.
	MRs       *mergerequests.Service
	Approvals *approvals.Service
	// Issues serves the issue pages; Notes their comments and votes.
	Issues *issues.Service
	Notes  *notes.Service
}

// SessionCookie is the name of the cookie holding the session id.
const SessionCookie = "_quarry_session"

// Handler serves the pages.
type Handler struct {
	Deps
	assets   *assets
	pages    *pages
	cache    *pageCache // what pages render once and serve again
	byLogin  *ratelimit.Limiter
	byClient *ratelimit.Limiter
	secure   bool   // cookies are Secure (the external URL is https)
	sshHost  string // the host of SSH clone URLs
	handler  http.Handler
}

// New builds the handler: parses the templates and prepares the assets.
func New(d Deps) (*Handler, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.SignInLimit <= 0 {
		d.SignInLimit = 10
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{Deps: d, cache: bytelru.New[pageKey, any](d.CacheBytes)}
	var err error
	if h.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if h.pages, err = loadPages(); err != nil {
		return nil, err
	}
	h.byLogin = &ratelimit.Limiter{Max: d.SignInLimit, Window: time.Minute, Now: d.Now}
	h.byClient = &ratelimit.Limiter{Max: 6 * d.SignInLimit, Window: time.Minute, Now: d.Now}
	u, err := url.Parse(d.ExternalURL)
	if err != nil {
		return nil, err
	}
	h.secure = u.Scheme == "https"
	h.sshHost = d.SSHHost
	if h.sshHost == "" {
		h.sshHost = u.Hostname()
	}
	cop := http.NewCrossOriginProtection()
	if u.Scheme != "" && u.Host != "" {
		if err := cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, err
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.errorPage(w, r, auth.Anonymous, http.StatusForbidden, "Cross-site request refused",
			"This form was sent from another site. Open the page here and send it again.")
	}))
	h.handler = cop.Handler(http.HandlerFunc(h.route))
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w.Header())
	h.handler.ServeHTTP(w, r)
}

// contentSecurityPolicy allows the page's own scripts, styles and fonts
// only; images may also come from https (README badges) and data: URLs.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
	"font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
}

// route picks the page for a path (GitLab's web routes). Project paths
// nest ("group/sub/project"): what follows "/-/" is the project's page.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if strings.HasPrefix(p, assetPrefix) {
		h.assets.serve(w, r)
		return
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	post := r.Method == http.MethodPost
	switch {
	case p == "/users/sign_in" && get:
		h.signInPage(w, r)
		return
	case p == "/users/sign_in" && post:
		h.signIn(w, r)
		return
	case p == "/users/sign_out" && post:
		h.signOut(w, r)
		return
	}
	a := h.actor(w, r)
	if post && strings.Contains(p, "/-/merge_requests/") {
		h.mrAction(w, r, a, p)
		return
	}
	if post && h.ciPost(w, r, a) {
		return
	}
	if post && h.issuePost(w, r, a) {
		return
	}
	if post && h.releasePost(w, r, a) {
		return
	}
	if h.userSettings(w, r, a, p) {
		return
	}
	if !get {
		h.notFound(w, r, a)
		return
	}
	if id, ok := strings.CutPrefix(p, "/-/snippets/"); ok {
		h.snippet(w, r, a, "", id)
		return
	}
	switch p {
	case "/":
		h.home(w, r, a)
		return
	case "/explore", "/explore/projects":
		h.explore(w, r, a)
		return
	case "/explore/groups":
		h.exploreGroups(w, r, a)
		return
	}
	full, action, hasAction := strings.Cut(strings.Trim(p, "/"), "/-/")
	if full == "" || strings.Contains(full, "//") {
		h.notFound(w, r, a)
		return
	}
	if g, ok := strings.CutPrefix(full, "groups/"); ok && !hasAction {
		h.group(w, r, a, g)
		return
	}
	if !hasAction {
		if !strings.Contains(full, "/") {
			h.namespace(w, r, a, full)
			return
		}
		h.project(w, r, a, full)
		return
	}
	kind, rest, _ := strings.Cut(action, "/")
	switch kind {
	case "tree":
		h.tree(w, r, a, full, rest)
	case "blob":
		h.blob(w, r, a, full, rest)
	case "raw":
		h.raw(w, r, a, full, rest)
	case "commits":
		h.commits(w, r, a, full, rest)
	case "commit":
		h.commit(w, r, a, full, rest)
	case "branches":
		h.branches(w, r, a, full, rest)
	case "tags":
		h.tags(w, r, a, full, rest)
	case "compare":
		h.compare(w, r, a, full, rest)
	case "blame":
		h.blame(w, r, a, full, rest)
	case "merge_requests":
		h.mergeRequests(w, r, a, full, rest)
	case "wikis":
		h.wiki(w, r, a, full, rest)
	case "snippets":
		h.snippet(w, r, a, full, rest)
	case "releases":
		h.release(w, r, a, full, rest)
	case "issues":
		h.issues(w, r, a, full, rest)
	case "pipelines":
		h.pipelinesRoute(w, r, a, full, rest)
	case "jobs":
		h.jobsRoute(w, r, a, full, rest)
	default:
		h.notFound(w, r, a)
	}
}

// actor is the signed-in user of the request's session, or anonymous; a
// cookie naming no live session is cleared.
func (h *Handler) actor(w http.ResponseWriter, r *http.Request) auth.Actor {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return auth.Anonymous
	}
	a, _, err := h.Users.Session(r.Context(), c.Value)
	if err != nil {
		if !isKind(err, model.KindUnauthorized) {
			h.Log.Error("web session", "err", err)
		}
		h.clearCookie(w)
		return auth.Anonymous
	}
	return a
}

// setCookie hands the browser its session id: a cookie of the browser's
// session (no expiry, as GitLab's _gitlab_session), while the database
// decides how long the session lives.
func (h *Handler) setCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: id, Path: "/",
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

// isKind reports whether err is a classified error of kind k.
func isKind(err error, k model.Kind) bool {
	var me *model.Error
	return errors.As(err, &me) && me.Kind == k
}

func asError(err error, me **model.Error) bool { return errors.As(err, me) }

// fail answers a service's error: a resource the actor may not see is
// 404 for a signed-in user and a redirect to sign in for an anonymous
// browser (which learns nothing of what exists; a client not asking for
// HTML gets the API's JSON 404); bad input is 400; anything unclassified
// is logged and 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, a auth.Actor, err error) {
	var me *model.Error
	if !errors.As(err, &me) {
		if errors.Is(err, context.Canceled) {
			return
		}
		h.Log.Error("web page", "path", r.URL.Path, "err", err)
		h.errorPage(w, r, a, http.StatusInternalServerError, "500: Something went wrong",
			"Try again later, or tell the administrator of this instance.")
		return
	}
	switch me.Kind {
	case model.KindNotFound, model.KindForbidden, model.KindUnauthorized:
		if !a.SignedIn() && wantsHTML(r) {
			redirectToSignIn(w, r)
			return
		}
		h.notFound(w, r, a)
	case model.KindTooManyRequests:
		h.errorPage(w, r, a, http.StatusTooManyRequests, "429: Too many requests", "Retry later.")
	default:
		h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", me.Message)
	}
}

// failIn is fail inside a project the actor may see: what is missing
// there (a ref, a file) is a 404 for anyone.
func (h *Handler) failIn(w http.ResponseWriter, r *http.Request, a auth.Actor, err error) {
	if isKind(err, model.KindNotFound) || isKind(err, model.KindForbidden) {
		h.notFound(w, r, a)
		return
	}
	h.fail(w, r, a, err)
}

// redirectToSignIn sends an anonymous visitor to sign in, and back here
// after.
func redirectToSignIn(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/users/sign_in?redirect_to="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
}

// localPath reports whether a redirect_to names a path of this site: an
// absolute path, not a scheme-relative URL ("//host") nor one a browser
// reads as such ("/\host"), without a scheme, host or control characters.
func localPath(s string) bool {
	if len(s) == 0 || len(s) > 2048 || s[0] != '/' {
		return false
	}
	if len(s) > 1 && (s[1] == '/' || s[1] == '\\') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\' {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}
