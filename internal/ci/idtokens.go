package ci

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/oidc"
)

// SetOIDC gives the service the signer of CI ID tokens (before use).
// Without one, a job with id_tokens: fails to start (its payload is an
// error), never runs without its tokens.
func (s *Service) SetOIDC(o *oidc.Service) { s.oidc = o }

// idTokens are the variables of the ID tokens job j asks for
// (id_tokens:), in name order: each a signed JWT, masked, its audience
// expanded with vars (GitLab expands $CI_… in aud:), living as long as
// the job may run.
func (s *Service) idTokens(ctx context.Context, p model.Project, pl model.Pipeline, j model.Job, r model.Runner, opts jobOptions,
	vars []RequestVariable, timeout int) ([]RequestVariable, error) {
	toks := opts.IDTokens()
	if len(toks) == 0 {
		return nil, nil
	}
	if s.oidc == nil {
		return nil, errors.New("id tokens: no signer")
	}
	values := make(map[string]string, len(vars))
	for _, v := range vars {
		values[v.Key] = v.Value
	}
	var user *model.User
	if j.UserID != 0 {
		u, err := s.db.UserByID(ctx, j.UserID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			user = &u
		}
	}
	key, err := s.oidc.Current(ctx)
	if err != nil {
		return nil, fmt.Errorf("id tokens of job %d: %w", j.ID, err)
	}
	configPath := s.configPath(ctx, p)
	envName, envProtected, tier, err := s.environmentClaims(ctx, j, opts)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(toks))
	for name := range toks {
		names = append(names, name)
	}
	slices.Sort(names)
	now := time.Now()
	out := make([]RequestVariable, 0, len(names))
	for _, name := range names {
		var aud any
		switch a := toks[name].(type) {
		case string:
			aud = ciconfig.Expand(a, values)
		case []string:
			l := make([]string, len(a))
			for i, x := range a {
				l[i] = ciconfig.Expand(x, values)
			}
			aud = l
		}
		claims, err := oidc.Claims(oidc.Job{Issuer: s.oidc.Issuer(), Aud: aud, Project: p, Pipeline: pl, User: user, JobID: j.ID,
			RunnerID: r.ID, ConfigPath: configPath, ConfigFromRepo: !pl.Child(), Now: now,
			Environment: envName, EnvironmentProtected: envProtected, DeploymentTier: tier,
			TTL: time.Duration(timeout) * time.Second})
		if err != nil {
			return nil, err
		}
		tok, err := key.Sign(claims)
		if err != nil {
			return nil, fmt.Errorf("id token %s of job %d: %w", name, j.ID, err)
		}
		out = append(out, RequestVariable{Key: name, Value: tok, Masked: true})
	}
	return out, nil
}
