package model

import "time"

// KeyUsage is what an SSH key may be used for (GitLab's usage_type).
type KeyUsage string

// The usage types; auth_and_signing is the default.
const (
	KeyUsageAuthAndSigning KeyUsage = "auth_and_signing"
	KeyUsageAuth           KeyUsage = "auth"
	KeyUsageSigning        KeyUsage = "signing"
)

// KeyUsages are the usage types in GitLab's order.
var KeyUsages = []string{string(KeyUsageAuthAndSigning), string(KeyUsageAuth), string(KeyUsageSigning)}

// Authenticates reports whether a key of usage u may sign in over SSH.
func (u KeyUsage) Authenticates() bool { return u == KeyUsageAuth || u == KeyUsageAuthAndSigning }

// SSHKey is a public key: a user's (Deploy false; UserID its owner) or a
// deploy key (Deploy true; UserID its creator, 0 once the creator is
// gone; Public for an instance-wide key). A key's SHA256 fingerprint is
// unique among all keys of both kinds.
type SSHKey struct {
	ID     int64
	UserID int64
	Deploy bool
	Public bool
	Title  string
	// Key is the normalised public key: "<type> <base64>[ <comment>]".
	Key string
	// Type is the restriction family (rsa, dsa, ecdsa, ed25519, ecdsa_sk,
	// ed25519_sk) and Bits its size.
	Type string
	Bits int
	// FingerprintMD5 is colon-separated hex; FingerprintSHA256 is the
	// unpadded base64 digest without its "SHA256:" prefix.
	FingerprintMD5    string
	FingerprintSHA256 string
	Usage             KeyUsage
	ExpiresAt         *time.Time
	LastUsedAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Expired reports whether k has expired at now.
func (k SSHKey) Expired(now time.Time) bool { return k.ExpiresAt != nil && !k.ExpiresAt.After(now) }

// DeployKeyProject is a deploy key enabled on a project, with whether it
// may push there.
type DeployKeyProject struct {
	ID        int64
	ProjectID int64
	CanPush   bool
	CreatedAt time.Time
	UpdatedAt time.Time
	Key       SSHKey
}
