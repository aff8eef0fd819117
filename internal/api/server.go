// Package api serves /api/v4 and the service endpoints (/-/health, metrics,
// uploads) on net/http's ServeMux. Handlers translate HTTP to one service
// call and back; services decide.
package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quarry/internal/activity"
	"quarry/internal/agents"
	"quarry/internal/alerts"
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	apioidc "quarry/internal/api/oidc"
	"quarry/internal/approvals"
	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/badges"
	"quarry/internal/boards"
	"quarry/internal/changelog"
	"quarry/internal/ci"
	"quarry/internal/errortracking"
	"quarry/internal/geo"
	"quarry/internal/groupexport"
	"quarry/internal/groups"
	"quarry/internal/housekeeping"
	"quarry/internal/issues"
	"quarry/internal/jobtokenscope"
	"quarry/internal/keys"
	"quarry/internal/labels"
	"quarry/internal/members"
	"quarry/internal/mergerequests"
	"quarry/internal/milestones"
	"quarry/internal/model"
	"quarry/internal/notes"
	"quarry/internal/oidc"
	"quarry/internal/projects"
	"quarry/internal/protectedenvs"
	"quarry/internal/releases"
	"quarry/internal/repofiles"
	"quarry/internal/runners"
	"quarry/internal/schedules"
	"quarry/internal/settings"
	"quarry/internal/snippets"
	"quarry/internal/storagemoves"
	"quarry/internal/tokens"
	"quarry/internal/topics"
	"quarry/internal/uploads"
	"quarry/internal/users"
	"quarry/internal/wikis"
)

// Pinger checks a dependency for readiness.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the API needs from the rest of Quarry.
type Deps struct {
	// EntityCacheBytes bounds the entity cache (0: off).
	EntityCacheBytes int64

	Users      *users.Service
	Tokens     *tokens.Service
	Projects   *projects.Service
	Groups     *groups.Service
	Topics     *topics.Service
	Attributes *attributes.Service
	Members    *members.Service
	Files      *repofiles.Service
	Changelog  *changelog.Service
	CI         *ci.Service
	Runners    *runners.Service
	MRs        *mergerequests.Service
	Approvals  *approvals.Service
	Wikis      *wikis.Service
	Snippets   *snippets.Service
	Badges     *badges.Service
	Labels     *labels.Service
	Milestones *milestones.Service
	Issues     *issues.Service
	// Notes are issues' notes and award emoji.
	Notes    *notes.Service
	Boards   *boards.Service
	Settings *settings.Service
	// Agents are agents for Kubernetes; JobTokenScope, CI job token scopes.
	Agents        *agents.Service
	JobTokenScope *jobtokenscope.Service
	// Geo is geo nodes; a process that is a secondary node refuses every
	// write (ReadOnly).
	Geo *geo.Service
	// Moves are repository storage moves.
	Moves *storagemoves.Service
	// Housekeeping is repository housekeeping.
	Housekeeping *housekeeping.Service
	// GroupTransfers are group exports and imports.
	GroupTransfers *groupexport.Service
	// Alerts are alert integrations, the intake and alerts.
	Alerts *alerts.Service
	// ErrorTracking is integrated error tracking (its client keys are the
	// integration keys of the Sentry collector).
	ErrorTracking *errortracking.Service
	// Releases are projects' releases and their asset links.
	Releases *releases.Service
	// ProtectedEnvironments are projects' protected environments.
	ProtectedEnvironments *protectedenvs.Service
	// OIDC publishes the discovery document and keys of CI ID tokens.
	OIDC *oidc.Service
	// Schedules are projects' pipeline schedules.
	Schedules *schedules.Service
	// Keys are users' SSH keys and deploy keys.
	Keys *keys.Service
	// Activity is the contributions feed (events).
	Activity *activity.Service
	// Git serves smart HTTP (clone and push) at <project>.git/….
	Git http.Handler
	// Web serves the HTML pages: every path outside /api/ that no row,
	// service endpoint, git, raw snippet or alert intake serves. It
	// answers the unknown ones (404) itself.
	Web         http.Handler
	Uploads     *uploads.Store
	DB          Pinger
	Log         *slog.Logger
	ExternalURL string
	// SSHHost and SSHPort are what ssh_url_to_repo shows.
	SSHHost  string
	SSHPort  int
	Version  string
	Revision string
	// MaxParsed bounds a known caller's parsed body; MaxFile, the content
	// of the files and commits APIs (endpoint.ContentFile).
	MaxParsed int64
	MaxFile   int64
	// BodyPace cuts off request bodies that stall or trickle.
	BodyPace BodyPace
	Registry *prometheus.Registry
	// Now is the clock entities render with (default time.Now).
	Now func() time.Time
}

// Server is the HTTP face of Quarry.
type Server struct {
	Deps
	log     *slog.Logger
	render  *entity.Renderer
	metrics *metrics
	handler http.Handler
	// snippetRaw serves /-/snippets/:id/raw… and its twins under
	// projects' paths.
	snippetRaw http.Handler
	// alertIntake serves the alert intake URLs under projects' paths.
	alertIntake http.Handler
}

// New builds the server and its route table; a table ServeMux cannot hold
// is an error.
func New(d Deps) (*Server, error) {
	if d.MaxParsed == 0 {
		d.MaxParsed = 10 << 20
	}
	if d.MaxFile == 0 {
		d.MaxFile = 100 << 20
	}
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Server{Deps: d, log: d.Log, render: entity.New(d.ExternalURL, d.Now)}
	s.render.Cache = entity.NewCache(d.EntityCacheBytes)
	s.render.SSHHost, s.render.SSHPort = d.SSHHost, d.SSHPort
	s.metrics = newMetrics(s.Registry)
	site := &endpoint.Site{ExternalURL: s.render.ExternalURL, MaxParsed: d.MaxParsed, ContentLimit: s.contentLimit, Log: d.Log,
		Personal: d.Tokens, Seen: seen, Jobs: secretFunc(d.CI.AuthenticateJobToken), Runners: secretFunc(d.Runners.Authenticate),
		Integrations: integrationKeys{errorTracking: d.ErrorTracking}}
	mux, err := endpoint.NewMux(site, s.Table(), shapes)
	if err != nil {
		return nil, err
	}
	mux.Fallback = d.Web
	s.snippetRaw = s.snippetRawHandler(site)
	s.alertIntake = s.alertIntakeHandler()
	// Service endpoints outside the API.
	mux.Handle("GET /-/health", http.HandlerFunc(s.health))
	mux.Handle("GET /-/liveness", http.HandlerFunc(s.liveness))
	mux.Handle("GET /-/readiness", http.HandlerFunc(s.readiness))
	mux.Handle("GET /-/metrics", s.metricsHandler())
	mux.Handle("GET /uploads/-/system/{path...}", http.HandlerFunc(s.upload))
	if d.OIDC != nil {
		h := apioidc.New(d.OIDC, d.Log)
		mux.Handle("GET /.well-known/openid-configuration", http.HandlerFunc(h.Discovery))
		mux.Handle("GET /oauth/discovery/keys", http.HandlerFunc(h.Keys))
	}
	mux.Handle("/api/v3/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		endpoint.WriteJSON(w, http.StatusGone, endpoint.ErrorBody{Error: "API V3 is no longer supported. Use API V4 instead."})
	}))
	s.handler = s.middleware(mux)
	return s, nil
}

// integrationKeys authenticates the keys of inbound integrations, each
// kind by its prefix: "glet_" is an error-tracking client key. Any other
// key is unknown (404, the collector's answer).
type integrationKeys struct {
	errorTracking *errortracking.Service
}

func (k integrationKeys) Authenticate(ctx context.Context, secret string) (auth.Actor, error) {
	if k.errorTracking != nil && strings.HasPrefix(secret, model.ErrorTrackingClientKeyPrefix) {
		return k.errorTracking.Authenticate(ctx, secret)
	}
	return auth.Anonymous, model.NotFound("")
}

// secretFunc adapts a function to endpoint.SecretAuthenticator.
type secretFunc func(ctx context.Context, secret string) (auth.Actor, error)

func (f secretFunc) Authenticate(ctx context.Context, secret string) (auth.Actor, error) {
	return f(ctx, secret)
}

// contentLimit is how much content a row carrying content takes: file
// content by the server's setting, wiki pages and attachments by the
// instance's settings.
func (s *Server) contentLimit(ctx context.Context, kind endpoint.Content) (int64, error) {
	if kind == endpoint.ContentFile {
		return s.MaxFile, nil
	}
	st, err := s.Settings.Current(ctx)
	if err != nil {
		return 0, err
	}
	switch kind {
	case endpoint.ContentWikiPage:
		return st.WikiPageMaxContentBytes, nil
	case endpoint.ContentAttachment:
		return int64(st.MaxAttachmentSize) << 20, nil
	case endpoint.ContentSnippet:
		return st.SnippetSizeLimit, nil
	}
	return 0, fmt.Errorf("no content limit for %q", kind)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

type infoKey struct{}

// requestInfo carries what the outer middleware logs about a request.
type requestInfo struct {
	userID int64
}

// seen records a request's actor for the access log.
func seen(r *http.Request, a auth.Actor) {
	if ri, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		ri.userID = a.UserID()
	}
}

// middleware wraps the mux with request ids, security headers, JSON 404 and
// 405 answers, panic recovery, metrics and the access log.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		h := w.Header()
		h.Set("X-Request-Id", id)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		if strings.HasPrefix(r.URL.Path, "/api/") {
			h.Set("Cache-Control", "max-age=0, private, must-revalidate")
		}
		ri := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, ri))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		s.pace(rec, r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic", "request_id", id, "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if !rec.wrote {
					endpoint.WriteJSON(rec, http.StatusInternalServerError, endpoint.MessageBody{Message: "500 Internal Server Error"})
				}
			}
			pattern := r.Pattern
			if pattern == "" {
				pattern = "unmatched"
			}
			d := time.Since(start)
			s.metrics.observe(r.Method, pattern, rec.status, d)
			s.log.Info("request", "request_id", id, "method", r.Method, "path", r.URL.Path, "route", pattern,
				"status", rec.status, "bytes", rec.bytes, "duration_ms", float64(d.Microseconds())/1000, "user_id", ri.userID)
		}()
		if len(r.RequestURI) > MaxRequestURI {
			endpoint.WriteError(rec, r, s.log, model.URITooLong())
			return
		}
		if s.Geo != nil && s.Geo.ReadOnly() && isWrite(r) {
			endpoint.WriteJSON(rec, http.StatusForbidden, endpoint.MessageBody{Message: geo.ReadOnlyMessage})
			return
		}
		if s.Git != nil && strings.Contains(r.URL.Path, ".git/") && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.Git.ServeHTTP(rec, r)
			return
		}
		if s.snippetRaw != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			isSnippetRaw(r.URL.Path) && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.snippetRaw.ServeHTTP(rec, r)
			return
		}
		if s.alertIntake != nil && isAlertIntake(r.URL.Path) {
			s.alertIntake.ServeHTTP(rec, r)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// isWrite reports whether r would change something: a POST, PUT, PATCH
// or DELETE of the API or of a web page's form (signing in writes a
// session), or a git push (either request of one). A clone's POST to
// git-upload-pack reads.
func isWrite(r *http.Request) bool {
	p := r.URL.Path
	if strings.Contains(p, ".git/") && !strings.HasPrefix(p, "/api/") {
		return strings.HasSuffix(p, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
	}
	if isAlertIntake(p) {
		return r.Method == http.MethodPost
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// recorder notes the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// ReadFrom passes bodies copied from files to the connection, which sends
// them with sendfile.
func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	r.wrote = true
	n, err := io.Copy(r.ResponseWriter, src)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

var idEncoding = base32.NewEncoding("0123456789ABCDEFGHJKMNPQRSTVWXYZ").WithPadding(base32.NoPadding)

// newRequestID returns a 26-character, time-ordered id (ULID-like).
func newRequestID() string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	return idEncoding.EncodeToString(b[:])
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
