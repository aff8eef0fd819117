package oidc

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/storetest"
)

func testJob() Job {
	p := model.Project{ID: 7, Path: "app", Visibility: model.Visibility("private"),
		Namespace: model.Namespace{ID: 3, FullPath: "grp/sub", Path: "sub"}}
	return Job{
		Issuer:   "https://quarry.example:8443/base",
		Aud:      "https://vault.example",
		Project:  p,
		Pipeline: model.Pipeline{ID: 11, Ref: "main", SHA: "0123abcd", Source: "push", Protected: true},
		User:     &model.User{ID: 5, Username: "alice", Email: "alice@example.com"},
		JobID:    13, RunnerID: 17, ConfigPath: ".gitlab-ci.yml", ConfigFromRepo: true,
		Now: time.Unix(1_700_000_000, 0), TTL: time.Hour,
	}
}

func TestClaims(t *testing.T) {
	tag := testJob()
	tag.Pipeline.Tag, tag.Pipeline.Ref, tag.Pipeline.Protected = true, "v1.0", false
	list := testJob()
	list.Aud = []string{"a", "b"}
	noUser := testJob()
	noUser.User, noUser.ConfigFromRepo = nil, false
	for _, tc := range []struct {
		name   string
		job    Job
		want   map[string]any
		absent []string
	}{
		{name: "branch", job: testJob(), want: map[string]any{
			"iss": "https://quarry.example:8443/base", "aud": "https://vault.example",
			"sub":          "project_path:grp/sub/app:ref_type:branch:ref:main",
			"namespace_id": "3", "namespace_path": "grp/sub", "project_id": "7", "project_path": "grp/sub/app",
			"user_id": "5", "user_login": "alice", "user_email": "alice@example.com",
			"pipeline_id": "11", "pipeline_source": "push", "job_id": "13", "ref": "main", "ref_type": "branch",
			"ref_path": "refs/heads/main", "ref_protected": "true", "runner_id": int64(17), "runner_environment": "self-hosted",
			"sha": "0123abcd", "project_visibility": "private",
			"ci_config_ref_uri": "quarry.example:8443/base/grp/sub/app//.gitlab-ci.yml@refs/heads/main", "ci_config_sha": "0123abcd",
			"iat": int64(1_700_000_000), "nbf": int64(1_699_999_995), "exp": int64(1_700_003_600),
		}, absent: []string{"environment", "environment_protected", "deployment_tier", "user_identities"}},
		{name: "tag", job: tag, want: map[string]any{
			"sub": "project_path:grp/sub/app:ref_type:tag:ref:v1.0", "ref_type": "tag", "ref_path": "refs/tags/v1.0",
			"ref_protected": "false", "ci_config_ref_uri": "quarry.example:8443/base/grp/sub/app//.gitlab-ci.yml@refs/tags/v1.0",
		}},
		{name: "audience list", job: list, want: map[string]any{"aud": []string{"a", "b"}}},
		{name: "no user, config not from the repository", job: noUser, want: map[string]any{"user_id": ""},
			absent: []string{"user_login", "user_email", "ci_config_ref_uri", "ci_config_sha"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Claims(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				got, _ := json.Marshal(c[k])
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Errorf("%s = %s; want %s", k, got, w)
				}
			}
			for _, k := range tc.absent {
				if _, ok := c[k]; ok {
					t.Errorf("%s present; want absent", k)
				}
			}
			if jti, _ := c["jti"].(string); len(jti) != 36 || jti[14] != '4' {
				t.Errorf("jti = %q; want a UUID v4", jti)
			}
		})
	}
	a, _ := Claims(testJob())
	b, _ := Claims(testJob())
	if a["jti"] == b["jti"] {
		t.Errorf("jti repeated: %v", a["jti"])
	}
}

// verify checks token's RS256 signature against the JWKS and returns its
// header's kid and claims.
func verify(t *testing.T, token string, set JWKS) (string, map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	enc := base64.RawURLEncoding
	var header struct{ Alg, Kid, Typ string }
	h, _ := enc.DecodeString(parts[0])
	if err := json.Unmarshal(h, &header); err != nil || header.Alg != "RS256" || header.Typ != "JWT" {
		t.Fatalf("header %s: %v", h, err)
	}
	var key *JWK
	for i := range set.Keys {
		if set.Keys[i].Kid == header.Kid {
			key = &set.Keys[i]
		}
	}
	if key == nil {
		t.Fatalf("kid %s not in the JWKS", header.Kid)
	}
	n, _ := enc.DecodeString(key.N)
	e, _ := enc.DecodeString(key.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	if Thumbprint(pub) != key.Kid {
		t.Errorf("kid %s is not the key's thumbprint %s", key.Kid, Thumbprint(pub))
	}
	sig, _ := enc.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	var claims map[string]any
	p, _ := enc.DecodeString(parts[1])
	if err := json.Unmarshal(p, &claims); err != nil {
		t.Fatal(err)
	}
	return header.Kid, claims
}

func TestService_keysAndRotation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db := storetest.Open(t, target, "")
		s := New(db, "http://quarry.test/")
		if s.Issuer() != "http://quarry.test" {
			t.Errorf("issuer %q", s.Issuer())
		}
		// First use creates the key; a second service on the same
		// database (another process) signs with the same one.
		tok, err := s.Sign(ctx, map[string]any{"sub": "x"})
		if err != nil {
			t.Fatal(err)
		}
		set, err := New(db, "http://quarry.test").JWKS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Keys) != 1 || set.Keys[0].Kty != "RSA" || set.Keys[0].Use != "sig" || set.Keys[0].Alg != "RS256" ||
			set.Keys[0].E != "AQAB" || len(set.Keys[0].N) != 342 {
			t.Fatalf("jwks %+v; want one RSA 2048 key", set)
		}
		first, claims := verify(t, tok, set)
		if claims["sub"] != "x" {
			t.Errorf("claims %v", claims)
		}
		// The key is sealed at rest.
		stored, err := db.OIDCKeys(ctx)
		if err != nil || len(stored) != 1 || stored[0].KID != first {
			t.Fatalf("stored %v, %v", stored, err)
		}
		// Rotation: the new key signs, the old one stays published, so a
		// token signed before still verifies.
		second, err := s.Rotate(ctx)
		if err != nil || second == first {
			t.Fatalf("rotate: %s, %v", second, err)
		}
		set, err = s.JWKS(ctx)
		if err != nil || len(set.Keys) != 2 || set.Keys[0].Kid != second || set.Keys[1].Kid != first {
			t.Fatalf("jwks after rotation %+v, %v", set, err)
		}
		verify(t, tok, set)
		tok2, err := s.Sign(ctx, map[string]any{"sub": "y"})
		if err != nil {
			t.Fatal(err)
		}
		if kid, _ := verify(t, tok2, set); kid != second {
			t.Errorf("signed with %s; want the new key %s", kid, second)
		}
		// A second rotation drops the first key.
		third, err := s.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		set, err = s.JWKS(ctx)
		if err != nil || len(set.Keys) != 2 || set.Keys[0].Kid != third || set.Keys[1].Kid != second {
			t.Fatalf("jwks after two rotations %+v, %v", set, err)
		}
	})
}

func TestDiscovery(t *testing.T) {
	d := New(nil, "http://quarry.test").Discovery()
	if d.Issuer != "http://quarry.test" || d.JWKSURI != "http://quarry.test/oauth/discovery/keys" ||
		len(d.IDTokenSigningAlgValuesSupported) != 1 || d.IDTokenSigningAlgValuesSupported[0] != "RS256" {
		t.Errorf("discovery %+v", d)
	}
}

// TestService_firstKeyRace: processes meeting an empty table at once
// (here, services on one database) make one key and all sign with it.
func TestService_firstKeyRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db := storetest.Open(t, target, "")
		const n = 4
		kids := make(chan string, n)
		errs := make(chan error, n)
		for range n {
			go func() {
				k, err := New(db, "http://quarry.test").Current(ctx)
				kids <- k.KID
				errs <- err
			}()
		}
		seen := map[string]bool{}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			seen[<-kids] = true
		}
		stored, err := db.OIDCKeys(ctx)
		if err != nil || len(stored) != 1 || len(seen) != 1 || !seen[stored[0].KID] {
			t.Errorf("stored %d keys (%v), services used %v; want one", len(stored), err, seen)
		}
	})
}
