package e2e

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"quarry/internal/apitest"
	"quarry/internal/app"
	"quarry/internal/secrets"
)

// The OIDC ID tokens of CI jobs (id_tokens:): a real job on Quarry's
// runner gets its tokens as masked variables, writes them to an
// artifact, and the test verifies them against the instance's JWKS as a
// cloud provider would.

const oidcCI = `
default:
  id_tokens:
    FROM_DEFAULT: {aud: default-aud}
tokens:
  timeout: 10m
  id_tokens:
    ID_ONE:
      aud: https://vault.example
    ID_LIST:
      aud: [first, "$CI_SERVER_URL/x"]
  script:
    - printf '%s' "$ID_ONE" > one.jwt
    - printf '%s' "$ID_LIST" > list.jwt
    - echo "token is $ID_ONE"
    - echo "default is ${FROM_DEFAULT:-absent}"
  artifacts:
    paths: [one.jwt, list.jwt]
inherits:
  script:
    - printf '%s' "$FROM_DEFAULT" > default.jwt
  artifacts:
    paths: [default.jwt]
`

// TestOIDC_jobTokens runs a job with id_tokens: and verifies its tokens:
// RS256 with a kid the JWKS publishes, GitLab's claims, the audience as
// a string or a list (expanded), exp − iat the job's timeout; the log
// shows them masked.
func TestOIDC_jobTokens(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "oidcowner")
		p := newCIProject(t, s, owner, "oidc", nil)
		r := projectRunner(t, p, map[string]any{"description": "oidc"})
		quarryRunner(1)(t, s.URL, r.Token, t.TempDir())
		sha := p.commit(t, "main", map[string]string{".gitlab-ci.yml": oidcCI})
		var pl pipelineJSON
		eventuallyFor(t, time.Minute, "the push pipeline", func() bool {
			list := p.pipelines(t, "source=push")
			if len(list) > 0 {
				pl = list[0]
			}
			return len(list) > 0
		})
		trace := func(id int64) string {
			return string(s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/trace", p.ID, id), owner.Token).Body)
		}
		var job, inherits jobJSON
		eventuallyFor(t, 2*time.Minute, "the jobs succeeded", func() bool {
			job, inherits = p.job(t, pl.ID, "tokens"), p.job(t, pl.ID, "inherits")
			for _, j := range []jobJSON{job, inherits} {
				if j.Status == "failed" || j.Status == "canceled" {
					t.Fatalf("job %s %s (%s):\n%s", j.Name, j.Status, j.FailureReason, trace(j.ID))
				}
			}
			return job.Status == "success" && inherits.Status == "success"
		})
		// A job's own id_tokens: replace default:'s (GitLab's inheritance).
		if log := trace(job.ID); !strings.Contains(log, "default is absent") {
			t.Errorf("the job with its own id_tokens got default:'s:\n%s", log)
		}

		// The discovery document and the keys, public.
		disc := s.Do(t, apitest.Request{Path: s.URL + "/.well-known/openid-configuration"}).Want(t, http.StatusOK).Object(t)
		if disc["issuer"] != s.URL || disc["jwks_uri"] != s.URL+"/oauth/discovery/keys" ||
			fmt.Sprint(disc["id_token_signing_alg_values_supported"]) != "[RS256]" ||
			fmt.Sprint(disc["subject_types_supported"]) != "[public]" || fmt.Sprint(disc["response_types_supported"]) != "[code]" {
			t.Errorf("discovery %v", disc)
		}
		for _, k := range []string{"claims_supported", "scopes_supported"} {
			if l, _ := disc[k].([]any); len(l) == 0 {
				t.Errorf("discovery %s = %v", k, disc[k])
			}
		}
		keyfunc := jwksKeyfunc(t, s)
		verify := func(job jobJSON, file, aud string) jwt.MapClaims {
			t.Helper()
			raw := s.Get(t, fmt.Sprintf("/projects/%d/jobs/%d/artifacts/%s", p.ID, job.ID, file), owner.Token).Want(t, http.StatusOK).Body
			claims := jwt.MapClaims{}
			if _, err := jwt.ParseWithClaims(string(raw), claims, keyfunc, jwt.WithValidMethods([]string{"RS256"}),
				jwt.WithIssuer(s.URL), jwt.WithAudience(aud), jwt.WithIssuedAt(), jwt.WithExpirationRequired()); err != nil {
				t.Fatalf("%s does not verify: %v (%q)", file, err, raw)
			}
			if log := trace(job.ID); strings.Contains(log, string(raw)) {
				t.Errorf("the token shows in the log:\n%s", log)
			}
			return claims
		}
		if log := trace(job.ID); !strings.Contains(log, "token is [MASKED]") {
			t.Errorf("the token is not masked in the log:\n%s", log)
		}
		one := verify(job, "one.jwt", "https://vault.example")
		want := map[string]any{
			"aud": "https://vault.example", "iss": s.URL, "sub": "project_path:" + p.Path + ":ref_type:branch:ref:main",
			"project_id": fmt.Sprint(p.ID), "project_path": p.Path, "namespace_path": strings.Split(p.Path, "/")[0],
			"pipeline_id": fmt.Sprint(pl.ID), "pipeline_source": "push", "job_id": fmt.Sprint(job.ID),
			"ref": "main", "ref_type": "branch", "ref_path": "refs/heads/main", "sha": sha,
			"user_id": fmt.Sprint(owner.ID), "user_login": "oidcowner", "runner_environment": "self-hosted",
			"runner_id": float64(r.ID), "project_visibility": "private", "ci_config_sha": sha,
			"ci_config_ref_uri": strings.TrimPrefix(s.URL, "http://") + "/" + p.Path + "//.gitlab-ci.yml@refs/heads/main",
		}
		for k, v := range want {
			if one[k] != v {
				t.Errorf("claim %s = %#v; want %#v", k, one[k], v)
			}
		}
		for _, k := range []string{"namespace_id", "ref_protected", "jti", "user_email"} {
			if _, ok := one[k].(string); !ok {
				t.Errorf("claim %s = %#v; want a string", k, one[k])
			}
		}
		iat, _ := one["iat"].(float64)
		exp, _ := one["exp"].(float64)
		nbf, _ := one["nbf"].(float64)
		if exp-iat != 600 || iat-nbf != 5 {
			t.Errorf("iat %v nbf %v exp %v; want exp − iat = 600 (the job's timeout)", iat, nbf, exp)
		}
		list := verify(job, "list.jwt", "first")
		if fmt.Sprint(list["aud"]) != fmt.Sprintf("[first %s/x]", s.URL) {
			t.Errorf("list aud = %v", list["aud"])
		}
		if list["jti"] == one["jti"] {
			t.Errorf("two tokens share jti %v", one["jti"])
		}
		if d := verify(inherits, "default.jwt", "default-aud"); d["job_id"] != fmt.Sprint(inherits.ID) {
			t.Errorf("default token's job_id %v; want %d", d["job_id"], inherits.ID)
		}
	})
}

// TestOIDC_secretsRefused: a configuration with secrets: is refused at
// creation (400 through the API, a failed pipeline with its yaml_errors
// on a push), so no job runs without the secret it asked for.
func TestOIDC_secretsRefused(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "secretsowner")
		const ci = "deploy:\n  script: [echo deploy]\n  secrets:\n    DB_PASSWORD:\n      vault: production/db/password@ops\n"
		const msg = "jobs:deploy:secrets config is not supported: Quarry has no secrets provider"
		p := newCIProject(t, s, owner, "secrets", map[string]string{".gitlab-ci.yml": ci})
		p.settle(t, 1)
		pushed := p.pipeline(t, p.pipelines(t, "ref=main")[0].ID)
		if pushed.Status != "failed" || pushed.YAMLErrors == nil || *pushed.YAMLErrors != msg {
			t.Errorf("push pipeline %+v (yaml_errors %s)", pushed, pushDeref(pushed.YAMLErrors))
		}
		if jobs := p.jobs(t, pushed.ID); len(jobs) != 0 {
			t.Errorf("jobs %+v", jobs)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", p.ID), Token: owner.Token,
			JSON: map[string]any{"ref": "main"}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"base":["`+msg+`"]}}`)
	})
}

// TestOIDC_keysSealedAndRotated: the signing key is sealed in the
// database with the secrets keyring, resealed by a keyring rotation and
// still the same key after a restart; an OIDC key rotation publishes the
// new key first and keeps the previous one.
func TestOIDC_keysSealedAndRotated(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		jwks := func(s *apitest.Server) []string {
			var set struct{ Keys []struct{ Kid string } }
			s.Do(t, apitest.Request{Path: s.URL + "/oauth/discovery/keys"}).Want(t, http.StatusOK).JSON(t, &set)
			var kids []string
			for _, k := range set.Keys {
				kids = append(kids, k.Kid)
			}
			return kids
		}
		first := jwks(s)
		if len(first) != 1 {
			t.Fatalf("jwks kids %v; want the one made on first use", first)
		}
		sealedWith := func() string {
			db, q := rawDB(t, s)
			defer db.Close()
			var v string
			if err := db.QueryRow(q("SELECT private_key FROM oidc_signing_keys")).Scan(&v); err != nil {
				t.Fatal(err)
			}
			id, ok := secrets.SealedWith(v)
			if !ok {
				t.Fatalf("the signing key is stored in plain text")
			}
			return id
		}
		cfg := s.App.Config
		s.Stop()
		before := sealedWith()
		_, next, err := app.RotateSecretsKey(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if after := sealedWith(); after != next.KeyID || after == before {
			t.Errorf("signing key sealed with %s after the keyring rotation; want %s (was %s)", after, next.KeyID, before)
		}
		s = restart(t, s)
		if got := jwks(s); fmt.Sprint(got) != fmt.Sprint(first) {
			t.Errorf("jwks after restart %v; want %v", got, first)
		}
		kid, err := s.App.OIDC.Rotate(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := jwks(s); len(got) != 2 || got[0] != kid || got[1] != first[0] {
			t.Errorf("jwks after rotation %v; want [%s %s]", got, kid, first[0])
		}
	}, shortPoll)
}

// jwksKeyfunc reads the instance's JWKS as a cloud provider does and
// checks its shape: one RSA signing key for RS256; the keyfunc finds a
// token's key by its kid.
func jwksKeyfunc(t *testing.T, s *apitest.Server) jwt.Keyfunc {
	t.Helper()
	var set struct {
		Keys []struct{ Kty, Kid, E, N, Use, Alg string }
	}
	s.Do(t, apitest.Request{Path: s.URL + "/oauth/discovery/keys"}).Want(t, http.StatusOK).JSON(t, &set)
	if len(set.Keys) != 1 || set.Keys[0].Kty != "RSA" || set.Keys[0].Use != "sig" || set.Keys[0].Alg != "RS256" {
		t.Fatalf("jwks %+v", set)
	}
	return func(tok *jwt.Token) (any, error) {
		for _, k := range set.Keys {
			if k.Kid == tok.Header["kid"] {
				n, err := base64.RawURLEncoding.DecodeString(k.N)
				if err != nil {
					return nil, err
				}
				e, err := base64.RawURLEncoding.DecodeString(k.E)
				if err != nil {
					return nil, err
				}
				return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
			}
		}
		return nil, fmt.Errorf("kid %v not published", tok.Header["kid"])
	}
}
