package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"quarry/internal/model"
)

const tokenColumns = `t.id, t.user_id, t.name, t.description, t.token_digest, t.scopes, t.impersonation,
	t.revoked, t.expires_at, t.last_used_at, t.previous_id, t.created_at, t.updated_at`

func tokenDest(t *model.PersonalAccessToken, scopes *string) []any {
	return []any{&t.ID, &t.UserID, &t.Name, &t.Description, &t.Digest, scopes, &t.Impersonation,
		&t.Revoked, nullString{&t.ExpiresAt}, nullTSScan{&t.LastUsedAt}, nullInt64Ptr{&t.PreviousID},
		tsScan{&t.CreatedAt}, tsScan{&t.UpdatedAt}}
}

func splitScopes(s string) []model.Scope {
	var out []model.Scope
	for _, f := range strings.Fields(s) {
		out = append(out, model.Scope(f))
	}
	return out
}

func joinScopes(s []model.Scope) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = string(v)
	}
	return strings.Join(parts, " ")
}

func scanToken(r *sql.Rows) (model.PersonalAccessToken, error) {
	var t model.PersonalAccessToken
	var scopes string
	err := r.Scan(tokenDest(&t, &scopes)...)
	t.Scopes = splitScopes(scopes)
	return t, err
}

// CreateToken stores a token (its digest only) and sets t.ID.
func (tx *Tx) CreateToken(ctx context.Context, t *model.PersonalAccessToken) error {
	id, err := tx.insert(ctx, `INSERT INTO personal_access_tokens (user_id, name, description, token_digest, scopes,
		impersonation, revoked, expires_at, previous_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, FALSE, ?, ?, ?, ?)`,
		t.UserID, t.Name, t.Description, t.Digest, joinScopes(t.Scopes), t.Impersonation, emptyNull(t.ExpiresAt),
		t.PreviousID, micros(t.CreatedAt), micros(t.UpdatedAt))
	t.ID = id
	return err
}

// TokenWithUser finds a token by digest together with its user.
func (tx *Tx) TokenWithUser(ctx context.Context, digest string) (model.PersonalAccessToken, model.User, error) {
	var t model.PersonalAccessToken
	var u model.User
	var scopes string
	dest := append(tokenDest(&t, &scopes), userDest(&u)...)
	err := tx.row(ctx, dest, "SELECT "+tokenColumns+", "+userColumns+
		" FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = ?", digest)
	t.Scopes = splitScopes(scopes)
	return t, u, err
}

// TokenUserVersion is what TokenWithUserVersion reads of a token's user:
// the row's identity and the entity_version every write to it moves.
type TokenUserVersion struct {
	ID, Version int64
	CreatedAt   time.Time
}

// TokenWithUserVersion finds a token by digest with its user's id,
// creation time and entity_version (not the rest of the row), for a
// caller that keeps users decoded by version.
func (tx *Tx) TokenWithUserVersion(ctx context.Context, digest string) (model.PersonalAccessToken, TokenUserVersion, error) {
	var t model.PersonalAccessToken
	var u TokenUserVersion
	var scopes string
	dest := append(tokenDest(&t, &scopes), &u.ID, &u.Version, tsScan{&u.CreatedAt})
	err := tx.row(ctx, dest, "SELECT "+tokenColumns+", u.id, u.entity_version, u.created_at"+
		" FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = ?", digest)
	t.Scopes = splitScopes(scopes)
	return t, u, err
}

// TokenByID returns one token or model.ErrNotFound.
func (tx *Tx) TokenByID(ctx context.Context, id int64) (model.PersonalAccessToken, error) {
	var t model.PersonalAccessToken
	var scopes string
	err := tx.row(ctx, tokenDest(&t, &scopes), "SELECT "+tokenColumns+" FROM personal_access_tokens t WHERE t.id = ?", id)
	t.Scopes = splitScopes(scopes)
	return t, err
}

// RevokeToken marks a token revoked; it reports false when the token was
// already revoked (another request won).
func (tx *Tx) RevokeToken(ctx context.Context, id int64, now time.Time) (bool, error) {
	tx.authWritten()
	n, err := tx.execN(ctx, "UPDATE personal_access_tokens SET revoked = TRUE, updated_at = ? WHERE id = ? AND revoked = FALSE", micros(now), id)
	return n == 1, err
}

// TouchToken records use of a token unless it was recorded after notBefore.
func (tx *Tx) TouchToken(ctx context.Context, id int64, now, notBefore time.Time) error {
	_, err := tx.exec(ctx, "UPDATE personal_access_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
		micros(now), id, micros(notBefore))
	return err
}

// ListTokens returns one page of tokens, oldest first.
func (tx *Tx) ListTokens(ctx context.Context, f model.TokenFilter, page model.Page) ([]model.PersonalAccessToken, model.PageInfo, error) {
	var w where
	if f.UserID != 0 {
		w.add("t.user_id = ?", f.UserID)
	}
	if f.Impersonation != nil {
		w.add("t.impersonation = ?", *f.Impersonation)
	}
	switch f.State {
	case "active":
		w.add("t.revoked = FALSE AND (t.expires_at IS NULL OR t.expires_at > ?)", f.Today)
	case "inactive":
		w.add("(t.revoked = TRUE OR (t.expires_at IS NOT NULL AND t.expires_at <= ?))", f.Today)
	}
	if f.Revoked != nil {
		w.add("t.revoked = ?", *f.Revoked)
	}
	if f.Search != "" {
		w.add(tx.ilike("t.name"), likePattern(f.Search))
	}
	if f.CreatedBefore != nil {
		w.add("t.created_at < ?", micros(*f.CreatedBefore))
	}
	if f.CreatedAfter != nil {
		w.add("t.created_at > ?", micros(*f.CreatedAfter))
	}
	if f.LastUsedBefore != nil {
		w.add("t.last_used_at < ?", micros(*f.LastUsedBefore))
	}
	if f.LastUsedAfter != nil {
		w.add("t.last_used_at > ?", micros(*f.LastUsedAfter))
	}
	if f.ExpiresBefore != "" {
		w.add("t.expires_at < ?", f.ExpiresBefore)
	}
	if f.ExpiresAfter != "" {
		w.add("t.expires_at > ?", f.ExpiresAfter)
	}
	spec := listSpec[model.PersonalAccessToken]{
		columns: tokenColumns, from: "personal_access_tokens t", idCol: "t.id", where: w,
		order: order{}, scan: scanToken,
		keyOf: func(t model.PersonalAccessToken) (any, int64) { return nil, t.ID },
	}
	return list(ctx, tx, spec, page)
}
