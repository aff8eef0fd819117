// Package auth holds credentials (token secrets and digests, password
// hashes), the Actor a request runs as, token scope rules and the
// permission rules: one table answering "may this actor do this action on
// this resource?".
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"

// NewSecret returns prefix followed by n random characters.
func NewSecret(prefix string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("auth: no randomness: %v", err))
	}
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])&63]
	}
	return prefix + string(b)
}

// NewToken returns a fresh personal access token and the digest to store.
func NewToken(prefix string) (secret, digest string) {
	secret = NewSecret(prefix, 32)
	return secret, Digest(secret)
}

// MaxSecretLength bounds every secret a caller presents (personal, job,
// runner, trigger and registration tokens): Quarry's are far shorter, so a
// longer one is no token of Quarry's and is refused before any query.
const MaxSecretLength = 255

// PlausibleSecret reports whether s could be a secret Quarry issued: not
// empty, and within MaxSecretLength.
func PlausibleSecret(s string) bool { return s != "" && len(s) <= MaxSecretLength }

// Digest is the stored form of a token secret. Tokens carry 190 bits of
// randomness, so a plain SHA-256 is safe and keeps lookups to one index
// probe.
func Digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// HashPassword returns the bcrypt hash of password at the given cost.
func HashPassword(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether password matches hash.
func CheckPassword(hash, password string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}
