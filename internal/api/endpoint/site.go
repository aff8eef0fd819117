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
// outside, the parsed-body limit, one authenticator per credential kind
// and the log.
type Site struct {
	ExternalURL string
	MaxBody     int64
	Log         *slog.Logger
	Personal    PersonalTokens
	// Jobs, Runners and Integrations authenticate the credential kinds of
	// the same names; a table with a row of a kind whose authenticator is
	// missing does not start (Handler panics).
	Jobs         SecretAuthenticator
	Runners      SecretAuthenticator
	Integrations SecretAuthenticator
	// Seen, if set, learns each request's actor (for the access log).
	Seen func(r *http.Request, a auth.Actor)
}

// Handler serves one row: read the parameters as the row's body mode says,
// authenticate with the row's kind, check signed-in and scopes, then run
// the handler and render its error.
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &Call{W: w, R: r, site: s}
		var err error
		if rt.Body.IsStreamed() {
			c.P, err = parseQuery(r)
			c.body = http.MaxBytesReader(w, r.Body, rt.Body.Limit())
		} else {
			c.P, err = parseParams(r, s.MaxBody)
		}
		if err != nil {
			c.Fail(err)
			return
		}
		if c.Actor, err = s.authenticateRow(rt, r, c.P); err != nil {
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

// personal authenticates a personal or OAuth token and applies sudo. No
// token is the anonymous actor, unless sudo was asked for.
func (s *Site) personal(r *http.Request, p *Params) (auth.Actor, error) {
	secret := Credential(Token, r, p)
	if secret == "" {
		if _, ok := p.String("sudo"); ok || r.Header.Get("Sudo") != "" {
			return auth.Anonymous, model.Unauthorized("")
		}
		return auth.Anonymous, nil
	}
	actor, err := s.Personal.Authenticate(r.Context(), secret)
	if err != nil {
		return actor, err
	}
	sudo := r.Header.Get("Sudo")
	if v, ok := p.String("sudo"); ok && sudo == "" {
		sudo = v
	}
	if sudo != "" {
		return s.Personal.Sudo(r.Context(), actor, sudo)
	}
	return actor, nil
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
