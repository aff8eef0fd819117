// Package api serves /api/v4 and the service endpoints (/-/health, metrics,
// uploads) on net/http's ServeMux. Handlers translate HTTP to one service
// call and back; services decide.
package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quarry/internal/attributes"
	"quarry/internal/auth"
	"quarry/internal/changelog"
	"quarry/internal/groups"
	"quarry/internal/members"
	"quarry/internal/model"
	"quarry/internal/projects"
	"quarry/internal/repofiles"
	"quarry/internal/tokens"
	"quarry/internal/topics"
	"quarry/internal/uploads"
	"quarry/internal/users"
)

// Pinger checks a dependency for readiness.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are what the API needs from the rest of Quarry.
type Deps struct {
	Users      *users.Service
	Tokens     *tokens.Service
	Projects   *projects.Service
	Groups     *groups.Service
	Topics     *topics.Service
	Attributes *attributes.Service
	Members    *members.Service
	Files      *repofiles.Service
	Changelog  *changelog.Service
	// Git serves smart HTTP (clone and push) at <project>.git/….
	Git         http.Handler
	Uploads     *uploads.Store
	DB          Pinger
	Log         *slog.Logger
	ExternalURL string
	Version     string
	Revision    string
	MaxBody     int64
	Registry    *prometheus.Registry
}

// Server is the HTTP face of Quarry.
type Server struct {
	Deps
	log         *slog.Logger
	externalURL string
	mux         *http.ServeMux
	metrics     *metrics
	handler     http.Handler
	now         func() time.Time
}

// New builds the server and its route table.
func New(d Deps) *Server {
	s := &Server{Deps: d, log: d.Log, externalURL: strings.TrimRight(d.ExternalURL, "/"), mux: http.NewServeMux(), now: time.Now}
	if s.MaxBody == 0 {
		s.MaxBody = 100 << 20
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	s.metrics = newMetrics(s.Registry)
	s.routes()
	s.handler = s.middleware(s.mux)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// access says whether a route needs a signed-in user.
type access int

const (
	// public routes accept anonymous callers (the handler may still refuse).
	public access = iota
	// signedIn routes answer 401 to anonymous callers.
	signedIn
)

// route is one row of the route table.
type route struct {
	method, path string
	access       access
	scopes       auth.ScopeRule
	h            handler
}

// register mounts a route under /api/v4.
func (s *Server) register(rt route) {
	s.mux.Handle(rt.method+" /api/v4"+rt.path, s.wrap(rt))
}

// wrap runs the steps every API request takes, in GitLab's order:
// authenticate, check the route's access and scopes, then the handler
// (which validates its parameters and calls one service).
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{w: w, r: r, s: s}
		p, err := parseParams(r, s.MaxBody)
		if err != nil {
			c.fail(err)
			return
		}
		c.p = p
		actor, err := s.authenticate(r, p)
		if err != nil {
			c.fail(err)
			return
		}
		c.actor = actor
		setActor(r, actor)
		if rt.access == signedIn && !actor.SignedIn() {
			c.fail(model.Unauthorized(""))
			return
		}
		if !rt.scopes.Allows(r.Method, actor.Token) {
			c.fail(&tokens.AuthError{Status: http.StatusForbidden, Code: "insufficient_scope",
				Description: "The request requires higher privileges than provided by the access token.",
				Scope:       auth.ScopeString(rt.scopes.Accepted(r.Method))})
			return
		}
		if err := rt.h(c); err != nil {
			c.fail(err)
		}
	})
}

// credential finds a personal access token where GitLab looks for one.
func credential(r *http.Request, p *Params) string {
	if t := r.Header.Get("Private-Token"); t != "" {
		return t
	}
	if v, ok := p.String("private_token"); ok && v != "" {
		return v
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if v, ok := p.String("access_token"); ok && v != "" {
		return v
	}
	return ""
}

// authenticate resolves the request's credentials and sudo to an Actor. No
// credentials is the anonymous actor; bad credentials are an error.
func (s *Server) authenticate(r *http.Request, p *Params) (auth.Actor, error) {
	secret := credential(r, p)
	if secret == "" {
		// Sudo needs a signed-in administrator.
		if _, ok := p.String("sudo"); ok || r.Header.Get("Sudo") != "" {
			return auth.Anonymous, model.Unauthorized("")
		}
		return auth.Anonymous, nil
	}
	actor, err := s.Tokens.Authenticate(r.Context(), secret)
	if err != nil {
		return actor, err
	}
	sudo := r.Header.Get("Sudo")
	if v, ok := p.String("sudo"); ok && sudo == "" {
		sudo = v
	}
	if sudo != "" {
		return s.Tokens.Sudo(r.Context(), actor, sudo)
	}
	return actor, nil
}

// requestInfo carries what the outer middleware logs about a request.
type requestInfo struct {
	userID int64
}

type infoKey struct{}

func setActor(r *http.Request, a auth.Actor) {
	if ri, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		ri.userID = a.UserID()
	}
}

// middleware wraps the mux with request ids, security headers, JSON 404 and
// 405 answers, panic recovery, metrics and the access log.
func (s *Server) middleware(next *http.ServeMux) http.Handler {
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
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic", "request_id", id, "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if !rec.wrote {
					writeJSON(rec, http.StatusInternalServerError, messageBody{Message: "500 Internal Server Error"})
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
		if s.Git != nil && strings.Contains(r.URL.Path, ".git/") && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.Git.ServeHTTP(rec, r)
			return
		}
		if _, pattern := next.Handler(r); pattern == "" {
			s.unmatched(rec, r, next)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// unmatched answers a request no route takes: GitLab's JSON 404, or 405
// with Allow when the path exists for other methods; redirects (path
// cleaning) pass through.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	probe := &probeWriter{header: http.Header{}}
	mux.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "405 Not Allowed"})
	case http.StatusNotFound, 0:
		writeJSON(w, http.StatusNotFound, errorBody{Error: "404 Not Found"})
	default:
		for k, v := range probe.header {
			w.Header()[k] = v
		}
		w.WriteHeader(probe.status)
	}
}

// probeWriter captures the mux's own answer to an unmatched request.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(status int)      { p.status = status }

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
