package endpoint

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

// PersonalTokens authenticates personal and OAuth access tokens and turns
// an administrator's actor into the user named by sudo.
type PersonalTokens interface {
	Authenticate(ctx context.Context, secret string) (auth.Actor, error)
	Sudo(ctx context.Context, a auth.Actor, ref string) (auth.Actor, error)
}

// SecretAuthenticator turns one kind of secret (a CI job token, a runner
// token, an integration key) into the actor the request runs as. An
// unknown or expired secret is an error (401 or 403, as the kind wants).
type SecretAuthenticator interface {
	Authenticate(ctx context.Context, secret string) (auth.Actor, error)
}

// Site is what every call shares: where the server is reached from
// outside, the body limits, one authenticator per credential kind and the
// log.
type Site struct {
	ExternalURL string
	// MaxParsed bounds a parsed body (JSON, a form, a multipart form) once
	// the caller is known; ContentLimit tells how much content a row
	// carrying content may take (a row's body may then be that much, plus
	// room for encoding and its other parameters).
	MaxParsed    int64
	ContentLimit func(ctx context.Context, kind Content) (int64, error)
	Log          *slog.Logger
	Personal     PersonalTokens
	// Jobs, Runners and Integrations authenticate the credential kinds of
	// the same names; a table with a row of a kind whose authenticator is
	// missing does not start (Handler panics).
	Jobs         SecretAuthenticator
	Runners      SecretAuthenticator
	Integrations SecretAuthenticator
	// Seen, if set, learns each request's actor (for the access log).
	Seen func(r *http.Request, a auth.Actor)
}

// MaxUnknownCallerBody bounds the body read from a caller not known yet:
// a caller that sends its credential in the body rather than a header
// (the runner protocol's token, private_token or job_token as a body
// parameter), and every NoAuth row, whose handler checks its secret
// itself. Those bodies are small (a runner's request is a few KiB); a
// larger one is refused unread.
const MaxUnknownCallerBody = 64 << 10

// Handler serves one row. The caller is known before its body is read:
// the row's credentials are looked for in the headers and the query
// first; a request without them whose body may carry them (the runner's
// token, a private_token parameter) has at most MaxUnknownCallerBody read
// to find them. A caller that fails authentication is answered without
// reading the rest (net/http then closes the connection rather than drain
// it). Only then is the body read, within the row's limit. Scopes are
// checked last, and the handler runs.
func (s *Site) Handler(rt Route) http.Handler {
	if err := rt.Check(); err != nil {
		panic("endpoint: " + err.Error())
	}
	if s.authenticator(rt.Auth) == nil && rt.Auth != NoAuth {
		panic(fmt.Sprintf("endpoint: %s: no authenticator for %s", rt.Pattern(), rt.Auth))
	}
	if rt.JobTokens && s.Jobs == nil {
		panic(fmt.Sprintf("endpoint: %s: no authenticator for job tokens", rt.Pattern()))
	}
	if rt.Body.Carries() != "" && s.ContentLimit == nil {
		panic(fmt.Sprintf("endpoint: %s: no content limit for %s", rt.Pattern(), rt.Body.Carries()))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &Call{W: w, R: r, site: s}
		var err error
		if c.P, err = parseQuery(r); err != nil {
			c.Fail(err)
			return
		}
		if rt.Body.IsStreamed() {
			c.body = http.MaxBytesReader(w, r.Body, rt.Body.Limit())
		}
		read := rt.Body.IsStreamed() || !hasBody(r)
		if !read && (rt.Auth == NoAuth || !s.credentialOutsideBody(rt, r, c.P)) {
			// The credential, if any, is in the body: read a small one.
			if err := c.P.readBody(r, min(MaxUnknownCallerBody, s.MaxParsed)); err != nil {
				if model.KindOf(err) == model.KindTooLarge && (rt.Auth == Token || rt.Auth == JobToken) {
					// Nobody known sends that much: the row's answer
					// to a caller without credentials.
					err = model.Unauthorized("")
				}
				c.Fail(err)
				return
			}
			read = true
		}
		if c.Actor, err = s.authenticateRow(rt, r, c.P); err != nil {
			c.Fail(err)
			return
		}
		if !read {
			limit, err := s.bodyLimit(r, rt.Body)
			if err == nil {
				err = c.P.readBody(r, limit)
			}
			if err != nil {
				c.Fail(err)
				return
			}
		}
		if c.Actor, err = s.sudo(rt, r, c.P, c.Actor); err != nil {
			c.Fail(err)
			return
		}
		if s.Seen != nil {
			s.Seen(r, c.Actor)
		}
		if !rt.Scopes.Allows(r.Method, c.Actor.Token) {
			c.Fail(&tokens.AuthError{Status: http.StatusForbidden, Code: "insufficient_scope",
				Description: "The request requires higher privileges than provided by the access token.",
				Scope:       auth.ScopeString(rt.Scopes.Accepted(r.Method))})
			return
		}
		if err := rt.Handle(c); err != nil {
			c.Fail(err)
		}
	})
}

// bodyLimit is how much of a known caller's parsed body a row reads: the
// server's parsed-body limit, or for a row carrying content what its
// setting allows (a third more for base64, plus the parsed limit for the
// rest of the parameters).
func (s *Site) bodyLimit(r *http.Request, b Body) (int64, error) {
	if b.Carries() == "" {
		return s.MaxParsed, nil
	}
	n, err := s.ContentLimit(r.Context(), b.Carries())
	if err != nil {
		return 0, err
	}
	if b.Carries() != ContentAttachment {
		n += n / 3
	}
	return n + s.MaxParsed, nil
}

// credentialOutsideBody reports whether the request carries a credential
// of the row's kind in its headers or query string.
func (s *Site) credentialOutsideBody(rt Route, r *http.Request, p *Params) bool {
	if rt.JobTokens && (r.Header.Get("Job-Token") != "" || param(p, "job_token") != "" || trimBearer(r.Header.Get("Authorization")) != "") {
		return true
	}
	return Credential(rt.Auth, r, p) != ""
}

func (s *Site) authenticator(a Auth) any {
	switch a {
	case Public, Token:
		if s.Personal != nil {
			return s.Personal
		}
	case JobToken:
		if s.Jobs != nil {
			return s.Jobs
		}
	case RunnerToken:
		if s.Runners != nil {
			return s.Runners
		}
	case IntegrationKey:
		if s.Integrations != nil {
			return s.Integrations
		}
	}
	return nil
}

// authenticateRow authenticates with the row's kind, or with a CI job
// token where the row takes one and the request carries one.
func (s *Site) authenticateRow(rt Route, r *http.Request, p *Params) (auth.Actor, error) {
	if rt.JobTokens {
		secret := first(r.Header.Get("Job-Token"), param(p, "job_token"))
		if b := trimBearer(r.Header.Get("Authorization")); secret == "" && strings.HasPrefix(b, model.JobTokenPrefix) {
			secret = b
		}
		if secret != "" {
			return s.Jobs.Authenticate(r.Context(), secret)
		}
	}
	return s.authenticate(rt.Auth, r, p)
}

// authenticate resolves the credentials of the row's kind to an actor.
// Missing credentials are the anonymous actor where the kind allows it and
// 401 otherwise; bad credentials are the authenticator's error.
func (s *Site) authenticate(kind Auth, r *http.Request, p *Params) (auth.Actor, error) {
	switch kind {
	case NoAuth:
		return auth.Anonymous, nil
	case Public, Token:
		a, err := s.personal(r, p)
		if err == nil && kind == Token && !a.SignedIn() {
			err = model.Unauthorized("")
		}
		return a, err
	}
	secret := Credential(kind, r, p)
	if secret == "" && kind == RunnerToken {
		return auth.Anonymous, model.Param("token is missing")
	}
	if secret == "" {
		return auth.Anonymous, model.Unauthorized("")
	}
	return s.authenticator(kind).(SecretAuthenticator).Authenticate(r.Context(), secret)
}

// personal authenticates a personal or OAuth token. No token is the
// anonymous actor, unless sudo was asked for.
func (s *Site) personal(r *http.Request, p *Params) (auth.Actor, error) {
	secret := Credential(Token, r, p)
	if secret == "" {
		if _, ok := p.String("sudo"); ok || r.Header.Get("Sudo") != "" {
			return auth.Anonymous, model.Unauthorized("")
		}
		return auth.Anonymous, nil
	}
	return s.Personal.Authenticate(r.Context(), secret)
}

// sudo turns an administrator's personal token into the user named by the
// Sudo header or the sudo parameter (the body's too, read by now).
func (s *Site) sudo(rt Route, r *http.Request, p *Params, a auth.Actor) (auth.Actor, error) {
	if (rt.Auth != Public && rt.Auth != Token) || a.User == nil || a.Job != nil {
		return a, nil
	}
	sudo := r.Header.Get("Sudo")
	if v, ok := p.String("sudo"); ok && sudo == "" {
		sudo = v
	}
	if sudo == "" {
		return a, nil
	}
	return s.Personal.Sudo(r.Context(), a, sudo)
}

// Credential finds the secret of a credential kind where GitLab's clients
// send it.
func Credential(kind Auth, r *http.Request, p *Params) string {
	param := func(key string) string { return param(p, key) }
	bearer := trimBearer(r.Header.Get("Authorization"))
	switch kind {
	case Public, Token:
		return first(r.Header.Get("Private-Token"), param("private_token"), bearer, param("access_token"))
	case JobToken:
		// The runner's job calls send "token"; clients in jobs use
		// JOB-TOKEN, job_token or a Bearer header.
		return first(r.Header.Get("Job-Token"), param("job_token"), param("token"), bearer)
	case RunnerToken:
		return first(param("token"), r.Header.Get("Runner-Token"))
	case IntegrationKey:
		return first(bearer, sentryKey(r.Header.Get("X-Sentry-Auth")), param("sentry_key"))
	}
	return ""
}

// sentryKey reads sentry_key out of an X-Sentry-Auth header
// ("Sentry sentry_version=7, sentry_key=…, sentry_client=…").
func sentryKey(h string) string {
	h = strings.TrimSpace(h)
	if len(h) >= 7 && strings.EqualFold(h[:7], "sentry ") {
		h = h[7:]
	}
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.TrimSpace(k) == "sentry_key" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// first is the first non-blank value.
func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// param is a parameter's value, "" when absent.
func param(p *Params, key string) string {
	v, _ := p.String(key)
	return v
}
