package oidc

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"sync"

	"quarry/internal/model"
	"quarry/internal/store"
)

// keyBits is the size of the RSA keys.
const keyBits = 2048

// published is how many generations the JWKS holds: the signing key and
// the one it replaced, so a token signed just before a rotation verifies
// until it expires (rotate no more often than the longest job timeout).
const published = 2

// Service signs ID tokens and publishes their keys.
type Service struct {
	db     *store.DB
	issuer string

	mu sync.Mutex
	// parsed caches the keys parsed, by kid.
	parsed map[string]*rsa.PrivateKey
}

// New makes the service of the instance at externalURL (the issuer).
func New(db *store.DB, externalURL string) *Service {
	return &Service{db: db, issuer: strings.TrimSuffix(externalURL, "/"), parsed: map[string]*rsa.PrivateKey{}}
}

// Issuer is the iss of every token.
func (s *Service) Issuer() string { return s.issuer }

// Key is a signing key, parsed.
type Key struct {
	Generation int64
	KID        string
	Private    *rsa.PrivateKey
}

// keys are the published keys, newest first, creating the first one when
// there is none.
func (s *Service) keys(ctx context.Context) ([]Key, error) {
	stored, err := s.db.OIDCKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("oidc keys: %w", err)
	}
	if len(stored) == 0 {
		if _, err := s.add(ctx, 1); err != nil {
			return nil, err
		}
		if stored, err = s.db.OIDCKeys(ctx); err != nil {
			return nil, fmt.Errorf("oidc keys: %w", err)
		}
		if len(stored) == 0 {
			return nil, errors.New("oidc keys: none after creating the first")
		}
	}
	out := make([]Key, 0, len(stored))
	for _, k := range stored {
		pk, err := s.parse(k)
		if err != nil {
			return nil, err
		}
		out = append(out, Key{Generation: k.Generation, KID: k.KID, Private: pk})
	}
	return out, nil
}

func (s *Service) parse(k model.OIDCKey) (*rsa.PrivateKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pk, ok := s.parsed[k.KID]; ok {
		return pk, nil
	}
	der, err := base64.StdEncoding.DecodeString(k.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc key %s: %w", k.KID, err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("oidc key %s: %w", k.KID, err)
	}
	pk, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("oidc key %s: not an RSA key", k.KID)
	}
	if len(s.parsed) > 8 {
		clear(s.parsed)
	}
	s.parsed[k.KID] = pk
	return pk, nil
}

// add makes a new key as generation gen; false when another process made
// that generation first.
func (s *Service) add(ctx context.Context, gen int64) (bool, error) {
	pk, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return false, fmt.Errorf("generate oidc key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		return false, err
	}
	k := model.OIDCKey{Generation: gen, KID: Thumbprint(&pk.PublicKey), PrivateKey: base64.StdEncoding.EncodeToString(der)}
	var added bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		added, err = tx.AddOIDCKey(ctx, k, published)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store oidc key: %w", err)
	}
	return added, nil
}

// Rotate makes a new signing key; the key it replaces stays published
// (older ones are dropped). It returns the new key's kid. A concurrent
// rotation by another process makes one key, not two.
func (s *Service) Rotate(ctx context.Context) (string, error) {
	ks, err := s.keys(ctx)
	if err != nil {
		return "", err
	}
	if _, err := s.add(ctx, ks[0].Generation+1); err != nil {
		return "", err
	}
	if ks, err = s.keys(ctx); err != nil {
		return "", err
	}
	return ks[0].KID, nil
}

// Sign signs claims with the current key (RS256, the kid in the header).
func (s *Service) Sign(ctx context.Context, claims map[string]any) (string, error) {
	k, err := s.Current(ctx)
	if err != nil {
		return "", err
	}
	return k.Sign(claims)
}

// Current is the key that signs now (made on first use); a caller
// signing several tokens at once reads it once.
func (s *Service) Current(ctx context.Context) (Key, error) {
	ks, err := s.keys(ctx)
	if err != nil {
		return Key{}, err
	}
	return ks[0], nil
}

// Sign signs claims with k (RS256, k's kid in the header).
func (k Key) Sign(claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "RS256", "kid": k.KID, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, k.Private, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign id token: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// JWK is a public key as the JWKS shows it.
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	E   string `json:"e"`
	N   string `json:"n"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKS is GET /oauth/discovery/keys.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS are the published keys, the signing key first.
func (s *Service) JWKS(ctx context.Context) (JWKS, error) {
	ks, err := s.keys(ctx)
	if err != nil {
		return JWKS{}, err
	}
	out := JWKS{Keys: make([]JWK, 0, len(ks))}
	for _, k := range ks {
		e, n := publicParts(&k.Private.PublicKey)
		out.Keys = append(out.Keys, JWK{Kty: "RSA", Kid: k.KID, E: e, N: n, Use: "sig", Alg: "RS256"})
	}
	return out, nil
}

func publicParts(pub *rsa.PublicKey) (e, n string) {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes()), enc.EncodeToString(pub.N.Bytes())
}

// Thumbprint is the JWK thumbprint of pub (RFC 7638, SHA-256), GitLab's
// kid.
func Thumbprint(pub *rsa.PublicKey) string {
	e, n := publicParts(pub)
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Discovery is GET /.well-known/openid-configuration, GitLab's shape.
type Discovery struct {
	Issuer                           string   `json:"issuer"`
	AuthorizationEndpoint            string   `json:"authorization_endpoint"`
	TokenEndpoint                    string   `json:"token_endpoint"`
	RevocationEndpoint               string   `json:"revocation_endpoint"`
	IntrospectionEndpoint            string   `json:"introspection_endpoint"`
	UserinfoEndpoint                 string   `json:"userinfo_endpoint"`
	JWKSURI                          string   `json:"jwks_uri"`
	ScopesSupported                  []string `json:"scopes_supported"`
	ResponseTypesSupported           []string `json:"response_types_supported"`
	ResponseModesSupported           []string `json:"response_modes_supported"`
	GrantTypesSupported              []string `json:"grant_types_supported"`
	TokenEndpointAuthMethods         []string `json:"token_endpoint_auth_methods_supported"`
	SubjectTypesSupported            []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
	ClaimTypesSupported              []string `json:"claim_types_supported"`
	ClaimsSupported                  []string `json:"claims_supported"`
}

// Discovery is the discovery document. Quarry has no OAuth provider:
// the document serves verifiers of ID tokens, which read issuer and
// jwks_uri; the endpoints are GitLab's paths.
func (s *Service) Discovery() Discovery {
	base := s.issuer
	return Discovery{
		Issuer:                           base,
		AuthorizationEndpoint:            base + "/oauth/authorize",
		TokenEndpoint:                    base + "/oauth/token",
		RevocationEndpoint:               base + "/oauth/revoke",
		IntrospectionEndpoint:            base + "/oauth/introspect",
		UserinfoEndpoint:                 base + "/oauth/userinfo",
		JWKSURI:                          base + "/oauth/discovery/keys",
		ScopesSupported:                  []string{"api", "read_api", "read_user", "create_runner", "manage_runner", "k8s_proxy", "read_repository", "write_repository", "sudo", "admin_mode", "read_service_ping", "openid", "profile", "email"},
		ResponseTypesSupported:           []string{"code"},
		ResponseModesSupported:           []string{"query", "fragment", "form_post"},
		GrantTypesSupported:              []string{"authorization_code", "password", "client_credentials", "device_code", "refresh_token"},
		TokenEndpointAuthMethods:         []string{"client_secret_basic", "client_secret_post"},
		SubjectTypesSupported:            []string{"public"},
		IDTokenSigningAlgValuesSupported: []string{"RS256"},
		ClaimTypesSupported:              []string{"normal"},
		ClaimsSupported: []string{"iss", "sub", "aud", "exp", "iat", "sub_legacy", "name", "nickname", "preferred_username", "email",
			"email_verified", "website", "profile", "picture", "groups", "groups_direct", "https://gitlab.org/claims/groups/owner",
			"https://gitlab.org/claims/groups/maintainer", "https://gitlab.org/claims/groups/developer"},
	}
}

// hostPath is the host and path of an external URL, without scheme (the
// start of GitLab's ci_config_ref_uri).
func hostPath(external string) string {
	u, err := url.Parse(external)
	if err != nil || u.Host == "" {
		return external
	}
	return u.Host + strings.TrimSuffix(u.Path, "/")
}
