package model

import "time"

// WebSession is a signed-in browser's session of the web pages. The
// browser holds the random session id; Quarry stores only its digest.
type WebSession struct {
	ID         int64
	Digest     string // SHA-256 of the session id, hex
	UserID     int64
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
}

// Expired reports whether the session has ended at now.
func (s WebSession) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }
