package model

import "time"

// OIDCKey is a key CI ID tokens are signed with. Generation numbers the
// keys: the newest signs, the one before it stays published.
type OIDCKey struct {
	Generation int64
	// KID is the key's JWK thumbprint (RFC 7638, SHA-256, base64url).
	KID string
	// PrivateKey is the PKCS #8 DER of the RSA key, base64 (standard).
	PrivateKey string
	CreatedAt  time.Time
}
