package geo

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A node authenticates what it sends another node as GitLab's Geo nodes
// do: an "Authorization: GL-Geo <access_key>:<JWT>" header, the JWT signed
// (HS256) with the secret of the node's credentials, valid for a minute.
// Quarry's token also binds the request: its data names the purpose and
// the SHA-256 of the body, so a token seen in transit signs nothing else.

// AuthScheme starts a node's Authorization header.
const AuthScheme = "GL-Geo"

// MaxAuthorization bounds the Authorization header a node sends; a longer
// one is refused before any work.
const MaxAuthorization = 2048

// tokenLifetime is how long a signed request stays valid; clockSkew is
// how far the clocks of two nodes may disagree.
const (
	tokenLifetime = time.Minute
	clockSkew     = time.Minute
)

// scopeStatus is the purpose of a status push.
const scopeStatus = "geo_status"

// ErrBadSignature is a request whose credentials do not hold: an
// Authorization header of another form, a bad signature, an expired or
// future token, another purpose or another body.
var ErrBadSignature = errors.New("geo: bad request signature")

// NewCredentials makes a node's credentials: a public access key (20
// hexadecimal characters, as GitLab's) and a secret (40).
func NewCredentials() (accessKey, secret string) {
	return randomHex(10), randomHex(20)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("geo: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return hex.EncodeToString(b)
}

type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
}

type jwtClaims struct {
	// Data is a JSON document in a string, as GitLab's Geo tokens carry it.
	Data string `json:"data"`
	IAT  int64  `json:"iat"`
	EXP  int64  `json:"exp"`
}

type tokenData struct {
	Scope      string `json:"scope"`
	BodySHA256 string `json:"body_sha256"`
}

var b64 = base64.RawURLEncoding

// Sign returns the Authorization header of a request with body made at
// now by the node whose credentials these are.
func Sign(accessKey, secret string, body []byte, now time.Time) string {
	sum := sha256.Sum256(body)
	data, _ := json.Marshal(tokenData{Scope: scopeStatus, BodySHA256: hex.EncodeToString(sum[:])})
	head, _ := json.Marshal(jwtHeader{Alg: "HS256", Typ: "JWT"})
	claims, _ := json.Marshal(jwtClaims{Data: string(data), IAT: now.Unix(), EXP: now.Add(tokenLifetime).Unix()})
	signing := b64.EncodeToString(head) + "." + b64.EncodeToString(claims)
	return AuthScheme + " " + accessKey + ":" + signing + "." + b64.EncodeToString(mac(secret, signing))
}

func mac(secret, signing string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(signing))
	return m.Sum(nil)
}

// ParseAuthorization splits a node's Authorization header into the access
// key and the token; ok is false for a header of any other form.
func ParseAuthorization(h string) (accessKey, token string, ok bool) {
	if len(h) > MaxAuthorization {
		return "", "", false
	}
	scheme, rest, found := strings.Cut(h, " ")
	if !found || scheme != AuthScheme {
		return "", "", false
	}
	accessKey, token, found = strings.Cut(strings.TrimSpace(rest), ":")
	if !found || accessKey == "" || token == "" || strings.ContainsAny(accessKey, " \t") {
		return "", "", false
	}
	return accessKey, token, true
}

// Verify checks a token made by Sign with secret: its signature, that it
// is valid at now, and that it signs a status push of body. Any failure
// is ErrBadSignature.
func Verify(token, secret string, body []byte, now time.Time) error {
	claims, err := verifyToken(token, secret, now)
	if err != nil {
		return err
	}
	var data tokenData
	if err := json.Unmarshal([]byte(claims.Data), &data); err != nil || data.Scope != scopeStatus {
		return ErrBadSignature
	}
	sum := sha256.Sum256(body)
	want := hex.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(data.BodySHA256), []byte(want)) != 1 {
		return ErrBadSignature
	}
	return nil
}

// VerifyHeader checks the token alone (signature and time), before the
// body it signs is read; Verify checks the body afterwards.
func VerifyHeader(token, secret string, now time.Time) error {
	_, err := verifyToken(token, secret, now)
	return err
}

func verifyToken(token, secret string, now time.Time) (jwtClaims, error) {
	var claims jwtClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 || secret == "" {
		return claims, ErrBadSignature
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, mac(secret, parts[0]+"."+parts[1])) {
		return claims, ErrBadSignature
	}
	var head jwtHeader
	if err := decodePart(parts[0], &head); err != nil || head.Alg != "HS256" {
		return claims, ErrBadSignature
	}
	if err := decodePart(parts[1], &claims); err != nil {
		return claims, ErrBadSignature
	}
	iat, exp := time.Unix(claims.IAT, 0), time.Unix(claims.EXP, 0)
	if claims.EXP < claims.IAT || exp.Sub(iat) > tokenLifetime || iat.After(now.Add(clockSkew)) || now.After(exp.Add(clockSkew)) {
		return claims, ErrBadSignature
	}
	return claims, nil
}

func decodePart(part string, v any) error {
	raw, err := b64.DecodeString(part)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	return d.Decode(v)
}
