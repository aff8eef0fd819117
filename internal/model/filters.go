package model

import "time"

// UserFilter selects users for a user list. Zero values do not filter.
type UserFilter struct {
	// VisibleStatesOnly hides blocked and banned accounts (non-admin callers).
	VisibleStatesOnly bool
	Username          string
	Search            string
	// SearchEmails lets Search match primary e-mails (admins); others match
	// public e-mails only.
	SearchEmails     bool
	Active           bool
	Blocked          bool
	External         bool
	ExcludeExternal  bool
	ExcludeInternal  bool
	Admins           bool
	WithoutProjects  bool
	TwoFactor        string // "enabled", "disabled" or ""
	Provider         string
	ExternUID        string
	SAMLProviderID   *int64
	CreatedBefore    *time.Time
	CreatedAfter     *time.Time
	CustomAttributes map[string]string
	OrderBy          string // id, name, username, created_at, updated_at
	Desc             bool
}

// TokenFilter selects tokens for a token list. Zero values do not filter.
type TokenFilter struct {
	UserID         int64
	Impersonation  *bool
	State          string // "active", "inactive" or ""
	Revoked        *bool
	Search         string
	CreatedBefore  *time.Time
	CreatedAfter   *time.Time
	LastUsedBefore *time.Time
	LastUsedAfter  *time.Time
	ExpiresBefore  string // YYYY-MM-DD
	ExpiresAfter   string
	Today          string // YYYY-MM-DD, for State
}
