package model

import "time"

// Scope names a permission set a token carries.
type Scope string

// The scopes a personal access token may carry.
const (
	ScopeAPI             Scope = "api"
	ScopeReadAPI         Scope = "read_api"
	ScopeReadUser        Scope = "read_user"
	ScopeReadRepository  Scope = "read_repository"
	ScopeWriteRepository Scope = "write_repository"
	ScopeSudo            Scope = "sudo"
	ScopeAdminMode       Scope = "admin_mode"
	ScopeSelfRotate      Scope = "self_rotate"
	ScopeCreateRunner    Scope = "create_runner"
)

// AllScopes lists every scope a personal access token may be given.
var AllScopes = []Scope{ScopeAPI, ScopeReadAPI, ScopeReadUser, ScopeReadRepository,
	ScopeWriteRepository, ScopeSudo, ScopeAdminMode, ScopeSelfRotate, ScopeCreateRunner}

// ValidScope reports whether s names a known scope.
func ValidScope(s string) bool {
	for _, v := range AllScopes {
		if string(v) == s {
			return true
		}
	}
	return false
}

// PersonalAccessToken is a user's API token. The secret is never stored, only
// its digest.
type PersonalAccessToken struct {
	ID            int64
	UserID        int64
	Name          string
	Description   string
	Digest        string
	Scopes        []Scope
	Impersonation bool
	Revoked       bool
	ExpiresAt     string // YYYY-MM-DD, "" for never
	LastUsedAt    *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// PreviousID is the token this one replaced by rotation.
	PreviousID *int64
}

// HasScope reports whether the token carries s.
func (t *PersonalAccessToken) HasScope(s Scope) bool {
	for _, v := range t.Scopes {
		if v == s {
			return true
		}
	}
	return false
}

// Expired reports whether the token has expired on the given day (UTC): a
// token is valid up to the day before its expiry date.
func (t *PersonalAccessToken) Expired(now time.Time) bool {
	return t.ExpiresAt != "" && t.ExpiresAt <= now.UTC().Format(DateLayout)
}

// Active reports whether the token can authenticate.
func (t *PersonalAccessToken) Active(now time.Time) bool { return !t.Revoked && !t.Expired(now) }

// DateLayout is the layout of date-only fields.
const DateLayout = "2006-01-02"
