package store

import (
	"context"
	"time"

	"quarry/internal/model"
)

const webSessionColumns = `s.id, s.session_digest, s.user_id, s.created_at, s.expires_at, s.last_seen_at`

func webSessionDest(s *model.WebSession) []any {
	return []any{&s.ID, &s.Digest, &s.UserID, tsScan{&s.CreatedAt}, tsScan{&s.ExpiresAt}, tsScan{&s.LastSeenAt}}
}

// CreateWebSession stores a session (its digest only) and sets s.ID.
func (tx *Tx) CreateWebSession(ctx context.Context, s *model.WebSession) error {
	id, err := tx.insert(ctx, `INSERT INTO web_sessions (session_digest, user_id, created_at, expires_at, last_seen_at)
		VALUES (?, ?, ?, ?, ?)`, s.Digest, s.UserID, micros(s.CreatedAt), micros(s.ExpiresAt), micros(s.LastSeenAt))
	s.ID = id
	return err
}

// WebSessionWithUser finds a session by digest together with its user, or
// model.ErrNotFound.
func (tx *Tx) WebSessionWithUser(ctx context.Context, digest string) (model.WebSession, model.User, error) {
	var s model.WebSession
	var u model.User
	err := tx.row(ctx, append(webSessionDest(&s), userDest(&u)...), "SELECT "+webSessionColumns+", "+userColumns+
		" FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.session_digest = ?", digest)
	return s, u, err
}

// TouchWebSession records a session's use at seen and moves its end to
// expires, unless it has ended already (by expiry or sign-out). It
// reports whether the session was live.
func (tx *Tx) TouchWebSession(ctx context.Context, id int64, seen, expires time.Time) (bool, error) {
	n, err := tx.execN(ctx, `UPDATE web_sessions SET last_seen_at = ?, expires_at = ? WHERE id = ? AND expires_at > ?`,
		micros(seen), micros(expires), id, micros(seen))
	return n == 1, err
}

// DeleteWebSession ends the session with the digest (nothing if none).
func (tx *Tx) DeleteWebSession(ctx context.Context, digest string) error {
	_, err := tx.exec(ctx, `DELETE FROM web_sessions WHERE session_digest = ?`, digest)
	return err
}

// DeleteExpiredWebSessions removes up to limit sessions ended by now and
// returns how many it removed.
func (tx *Tx) DeleteExpiredWebSessions(ctx context.Context, now time.Time, limit int) (int64, error) {
	return tx.execN(ctx, `DELETE FROM web_sessions WHERE id IN
		(SELECT id FROM web_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`, micros(now), limit)
}
