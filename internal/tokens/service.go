// Package tokens issues, lists, rotates and revokes personal access tokens,
// and turns a presented secret into the Actor a request runs as.
package tokens

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/gencache"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Service is the personal access token service.
type Service struct {
	db       *store.DB
	prefix   string
	settings Settings
	now      func() time.Time
	// readOnly leaves uses unrecorded (RecordNoUse).
	readOnly bool
	users    userRows
	// auth remembers recent authentications (authcache.go); nil on
	// PostgreSQL.
	auth *gencache.Cache[authEntry]
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings makes new tokens start with the instance's
// personal_access_token_prefix (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// newToken is a fresh secret and its digest, with the instance's prefix.
func (s *Service) newToken(ctx context.Context) (string, string) {
	prefix := s.prefix
	if s.settings != nil {
		if st, err := s.settings.Current(ctx); err == nil {
			prefix = ""
			if st.PersonalAccessTokenPrefix != nil {
				prefix = *st.PersonalAccessTokenPrefix
			}
		}
	}
	return auth.NewToken(prefix)
}

// New returns a token service issuing tokens that start with prefix.
func New(db *store.DB, prefix string) *Service {
	s := &Service{db: db, prefix: prefix, now: db.Now}
	if db.Dialect == store.SQLite {
		s.auth = gencache.New[authEntry](authCacheFor, maxCachedTokens)
		db.OnAuthWrite(s.auth.Invalidate)
	}
	return s
}

// DefaultLifetime applies when a token is created without an expiry date.
const DefaultLifetime = 365 * 24 * time.Hour

// RotationLifetime applies to a rotated token without an expiry date.
const RotationLifetime = 7 * 24 * time.Hour

// touchInterval is how stale last_used_at may get before a use is written.
const touchInterval = 10 * time.Minute

// Errors of authentication, in GitLab's words.
var (
	errExpired = &AuthError{Status: 401, Code: "invalid_token", Description: "Token is expired. You can either do re-authorization or token refresh."}
	errRevoked = &AuthError{Status: 401, Code: "invalid_token", Description: "Token was revoked. You have to re-authorize from the user."}
)

// AuthError is an OAuth-style authentication failure.
type AuthError struct {
	Status      int
	Code        string
	Description string
	Scope       string
}

func (e *AuthError) Error() string { return e.Code + ": " + e.Description }

// Authenticate resolves a token secret to its actor. An unknown secret is
// model.ErrUnauthorized; an expired or revoked one an *AuthError; a
// blocked or deactivated owner a 403.
func (s *Service) Authenticate(ctx context.Context, secret string) (auth.Actor, error) {
	if !auth.PlausibleSecret(secret) {
		return auth.Anonymous, model.Unauthorized("")
	}
	digest := auth.Digest(secret)
	now := s.now()
	t, u, gen, err := s.authenticated(ctx, digest, now)
	if err != nil {
		return auth.Anonymous, err
	}
	switch {
	case t.Revoked:
		return auth.Anonymous, errRevoked
	case t.Expired(now):
		return auth.Anonymous, errExpired
	}
	if msg := accessDenied(u); msg != "" {
		if u.State.IsBlocked() {
			return auth.Anonymous, errors.Join(model.Forbidden(msg), auth.ErrBlocked)
		}
		return auth.Anonymous, model.Forbidden(msg)
	}
	before, beforeDay := t.LastUsedAt, u.LastActivityOn
	if err := s.recordUse(ctx, &t, &u, now); err != nil {
		return auth.Anonymous, err
	}
	if t.LastUsedAt != before || u.LastActivityOn != beforeDay {
		s.auth.Put(digest, authEntry{t, u}, gen, now) // the use recorded, kept with it
	}
	a := auth.Actor{User: &u, Token: &t}
	if u.Admin && !slices.Contains(t.Scopes, model.ScopeAdminMode) && s.settings != nil {
		st, err := s.settings.Current(ctx)
		if err != nil {
			return auth.Anonymous, err
		}
		a.OutsideAdminMode = st.AdminMode
	}
	return a, nil
}

// ForgetAuthentications forgets every remembered authentication (SQLite),
// so the next request of each token reads it again: for what counts a
// request's statements, and for an operator's tool that changed the
// database behind the server's back.
func (s *Service) ForgetAuthentications() { s.auth.Invalidate() }

// authenticated is the token of digest and its user: remembered (SQLite)
// or read, the token and its user's version in one statement, the user
// from a kept copy at that version. gen is the generation of the cache
// it was read under. An unknown token or a user gone is 401.
func (s *Service) authenticated(ctx context.Context, digest string, now time.Time) (model.PersonalAccessToken, model.User, uint64, error) {
	if e, gen, ok := s.auth.Get(digest, now); ok {
		return e.t, e.u, gen, nil
	}
	gen := s.auth.Generation()
	t, uv, err := s.db.TokenWithUserVersion(ctx, digest)
	if errors.Is(err, model.ErrNotFound) {
		return t, model.User{}, gen, model.Unauthorized("")
	}
	if err != nil {
		return t, model.User{}, gen, err
	}
	u, err := s.user(ctx, uv)
	if errors.Is(err, model.ErrNotFound) {
		return t, u, gen, model.Unauthorized("")
	}
	if err != nil {
		return t, u, gen, err
	}
	s.auth.Put(digest, authEntry{t, u}, gen, now)
	return t, u, gen, nil
}

// accessDenied explains why a user may not use the API, or returns "".
func accessDenied(u model.User) string {
	switch {
	case u.State == model.UserDeactivated:
		return "Your account has been deactivated by your administrator. Please log back in to reactivate your account."
	case u.State == model.UserBlockedPendingApproval:
		return "Your account is pending approval from your administrator and hence blocked."
	case u.State.IsBlocked():
		return "Your account has been blocked."
	}
	return ""
}

// RecordNoUse stops recording uses of tokens, for a process that must not
// write (a read-only secondary geo node): tokens then work as they are.
func (s *Service) RecordNoUse() { s.readOnly = true }

// recordUse writes last_used_at and the user's last activity day, at most
// every few minutes and once a day, so reads stay reads.
func (s *Service) recordUse(ctx context.Context, t *model.PersonalAccessToken, u *model.User, now time.Time) error {
	if s.readOnly {
		return nil
	}
	today := now.UTC().Format(model.DateLayout)
	stale := t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > touchInterval
	if !stale && u.LastActivityOn == today {
		return nil
	}
	var version int64
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if stale {
			if err := tx.TouchToken(ctx, t.ID, now, now.Add(-touchInterval)); err != nil {
				return err
			}
		}
		if u.LastActivityOn != today {
			// Written from the version u was decoded at, the row is u
			// with the day: kept, so the next request needs no read.
			var err error
			if version, err = tx.SetLastActivityAt(ctx, u.ID, today, u.EntityVersion); err != nil || version != 0 {
				return err
			}
			return tx.SetLastActivity(ctx, u.ID, today)
		}
		return nil
	})
	if err == nil {
		t.LastUsedAt = &now
		u.LastActivityOn = today
		if version != 0 {
			u.EntityVersion = version
			s.keepUser(*u)
		}
	}
	return err
}

// Sudo returns the actor acting as the user named by ref (id or username).
// The caller must be an administrator whose token carries the sudo scope.
func (s *Service) Sudo(ctx context.Context, a auth.Actor, ref string) (auth.Actor, error) {
	if !a.SignedIn() {
		return a, model.Unauthorized("")
	}
	if !a.Admin() {
		return a, model.Forbidden("Must be admin to use sudo")
	}
	if a.Token == nil {
		return a, model.Forbidden("Must be authenticated using an OAuth or Personal Access Token to use sudo")
	}
	if !a.Token.HasScope(model.ScopeSudo) {
		return a, &AuthError{Status: 403, Code: "insufficient_scope",
			Description: "The request requires higher privileges than provided by the access token.", Scope: "sudo"}
	}
	ref = strings.TrimSpace(ref)
	u, err := s.db.UserByRef(ctx, ref)
	if errors.Is(err, model.ErrNotFound) {
		return a, model.NotFound("User with ID or username '" + ref + "'")
	}
	if err != nil {
		return a, err
	}
	return auth.Actor{User: &u, Token: a.Token, Sudoer: a.User}, nil
}

// CreateInput describes a new token.
type CreateInput struct {
	Name        string
	Description string
	Scopes      []model.Scope
	ExpiresAt   string // YYYY-MM-DD; "" for the default lifetime
}

// Create issues a token for a user (administrators only) and returns it with
// its secret, which is never shown again.
func (s *Service) Create(ctx context.Context, actor auth.Actor, userID int64, in CreateInput) (model.PersonalAccessToken, string, error) {
	if !auth.Can(actor, auth.AdminUsers, auth.Resource{}) {
		return model.PersonalAccessToken{}, "", model.Forbidden("")
	}
	if _, err := s.db.UserByID(ctx, userID); errors.Is(err, model.ErrNotFound) {
		return model.PersonalAccessToken{}, "", model.NotFound("User")
	} else if err != nil {
		return model.PersonalAccessToken{}, "", err
	}
	if err := s.checkExpiry(in.ExpiresAt); err != nil {
		return model.PersonalAccessToken{}, "", err
	}
	if in.ExpiresAt == "" {
		in.ExpiresAt = s.now().UTC().Add(DefaultLifetime).Format(model.DateLayout)
	}
	return s.Issue(ctx, userID, in, "", nil)
}

func (s *Service) checkExpiry(date string) error {
	if date == "" {
		return nil
	}
	if date <= s.now().UTC().Format(model.DateLayout) {
		return model.BadRequestRaw("Expiration date must be in the future")
	}
	return nil
}

// Issue stores a token for userID without permission checks (first start,
// the admin command). A preset secret is used as given.
func (s *Service) Issue(ctx context.Context, userID int64, in CreateInput, secret string, previous *int64) (model.PersonalAccessToken, string, error) {
	digest := auth.Digest(secret)
	if secret == "" {
		secret, digest = s.newToken(ctx)
	} else if !auth.PlausibleSecret(secret) {
		return model.PersonalAccessToken{}, "", fmt.Errorf("a preset token may have at most %d characters", auth.MaxSecretLength)
	}
	now := s.now().UTC()
	t := model.PersonalAccessToken{UserID: userID, Name: in.Name, Description: in.Description, Digest: digest,
		Scopes: in.Scopes, ExpiresAt: in.ExpiresAt, PreviousID: previous, CreatedAt: now, UpdatedAt: now}
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateToken(ctx, &t) })
	return t, secret, err
}

// ListInput filters the token list.
type ListInput struct {
	model.TokenFilter
}

// List returns the actor's tokens, or anyone's for an administrator. A
// non-admin asking for another user's tokens is refused with 401, as GitLab
// does.
func (s *Service) List(ctx context.Context, actor auth.Actor, in ListInput, page model.Page) ([]model.PersonalAccessToken, model.PageInfo, error) {
	f := in.TokenFilter
	if !actor.Admin() {
		if f.UserID != 0 && f.UserID != actor.UserID() {
			return nil, model.PageInfo{}, model.Unauthorized("")
		}
		f.UserID = actor.UserID()
	} else if f.UserID != 0 {
		if _, err := s.db.UserByID(ctx, f.UserID); errors.Is(err, model.ErrNotFound) {
			return nil, model.PageInfo{}, model.NotFound("")
		} else if err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	f.Today = s.now().UTC().Format(model.DateLayout)
	return s.db.ListTokens(ctx, f, page)
}

// Get returns one token. Others' tokens are 401 for non-admins, like GitLab.
func (s *Service) Get(ctx context.Context, actor auth.Actor, id int64) (model.PersonalAccessToken, error) {
	t, err := s.db.TokenByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		if actor.Admin() {
			return t, model.NotFound("")
		}
		return t, model.Unauthorized("")
	}
	if err != nil {
		return t, err
	}
	if !auth.Can(actor, auth.ReadToken, auth.Resource{Token: &t}) {
		return t, model.Unauthorized("")
	}
	return t, nil
}

// Revoke revokes a token the actor owns (or any, for an administrator).
func (s *Service) Revoke(ctx context.Context, actor auth.Actor, id int64) error {
	t, err := s.db.TokenByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return model.RecordNotFound()
	}
	if err != nil {
		return err
	}
	if !auth.Can(actor, auth.RevokeToken, auth.Resource{Token: &t}) {
		return model.BadRequest("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.RevokeToken(ctx, t.ID, s.now())
		if err == nil && !ok {
			err = model.BadRequest("")
		}
		return err
	})
}

// Rotate revokes a token and issues its successor with the same name and
// scopes, expiring on expiresAt (default: in a week).
func (s *Service) Rotate(ctx context.Context, actor auth.Actor, id int64, expiresAt string) (model.PersonalAccessToken, string, error) {
	// Only administrators learn whether someone else's token exists.
	t, err := s.Get(ctx, actor, id)
	if err != nil {
		return t, "", err
	}
	if t.Revoked || t.Expired(s.now()) {
		return t, "", model.BadRequest("Token already revoked")
	}
	if err := s.checkExpiry(expiresAt); err != nil {
		return t, "", err
	}
	if expiresAt == "" {
		expiresAt = s.now().UTC().Add(RotationLifetime).Format(model.DateLayout)
	}
	secret, digest := s.newToken(ctx)
	now := s.now().UTC()
	next := model.PersonalAccessToken{UserID: t.UserID, Name: t.Name, Description: t.Description, Digest: digest,
		Scopes: t.Scopes, ExpiresAt: expiresAt, PreviousID: &t.ID, CreatedAt: now, UpdatedAt: now}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.RevokeToken(ctx, t.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return model.BadRequest("Token already revoked")
		}
		return tx.CreateToken(ctx, &next)
	})
	return next, secret, err
}
