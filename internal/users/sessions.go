package users

import (
	"context"
	"errors"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Web sessions: a browser signs in with a username or e-mail and the
// password, and is handed a random session id; the database keeps only
// its digest. A session lasts session_expire_delay minutes (an
// application setting) from its last use.

// SessionIDPrefix starts every session id (tells it apart from tokens in
// logs and leaks).
const SessionIDPrefix = "qs_"

// maxLogin bounds the username or e-mail a sign-in names.
const maxLogin = 255

// sessionTouchEvery is how stale a session's last use may get before a
// request records it again (and moves its end): one write a minute per
// busy session, not one per page.
const sessionTouchEvery = time.Minute

// errSignIn is the one answer to a wrong login or password: it does not
// tell which was wrong.
var errSignIn = model.Unauthorized("Invalid login or password.")

// SignIn checks a username or primary e-mail (either in any case) and a
// password. A wrong pair is 401 "Invalid login or password."; a blocked
// or deactivated account, 403 with GitLab's reason.
func (s *Service) SignIn(ctx context.Context, login, password string) (model.User, error) {
	login = strings.TrimSpace(login)
	if login == "" || len(login) > maxLogin || password == "" || len(password) > 1024 {
		return model.User{}, errSignIn
	}
	u, err := s.db.UserByUsername(ctx, login)
	if errors.Is(err, model.ErrNotFound) && strings.Contains(login, "@") {
		u, err = s.db.UserByEmail(ctx, login)
	}
	if errors.Is(err, model.ErrNotFound) {
		// As long as a wrong password takes, so the answer's time does
		// not tell which accounts exist.
		auth.CheckPassword(s.unknownUserHash(), password)
		return model.User{}, errSignIn
	}
	if err != nil {
		return model.User{}, err
	}
	if !auth.CheckPassword(u.PasswordHash, password) {
		return model.User{}, errSignIn
	}
	if u.State.IsBlocked() {
		return u, model.ForbiddenRaw("Your account has been blocked. Please contact your GitLab administrator if you think this is an error.")
	}
	if u.State == model.UserDeactivated {
		return u, model.ForbiddenRaw("Your account has been deactivated by your administrator. Please contact your administrator to reactivate your account.")
	}
	return u, nil
}

// unknownUserHash is a password hash at the service's cost that no
// password given matches (made once).
func (s *Service) unknownUserHash() string {
	s.dummyOnce.Do(func() {
		s.dummyHash, _ = auth.HashPassword(auth.NewSecret("", 32), s.passwordCost)
	})
	return s.dummyHash
}

// sessionLifetime is the instance's session_expire_delay.
func (s *Service) sessionLifetime(ctx context.Context) (time.Duration, error) {
	minutes := model.DefaultApplicationSettings().SessionExpireDelay
	if s.settings != nil {
		st, err := s.settings.Current(ctx)
		if err != nil {
			return 0, err
		}
		minutes = st.SessionExpireDelay
	}
	return time.Duration(minutes) * time.Minute, nil
}

// StartSession opens a session for a signed-in user and returns its id
// (the cookie's value) and when it ends unless used. Sessions ended
// earlier are swept a few at a time as new ones start.
func (s *Service) StartSession(ctx context.Context, u model.User) (id string, expires time.Time, err error) {
	life, err := s.sessionLifetime(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	id = auth.NewSecret(SessionIDPrefix, 43)
	now := s.now()
	ws := model.WebSession{Digest: auth.Digest(id), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(life), LastSeenAt: now}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.DeleteExpiredWebSessions(ctx, now, 16); err != nil {
			return err
		}
		return tx.CreateWebSession(ctx, &ws)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return id, ws.ExpiresAt, nil
}

// Session is the actor of a session id: anonymous, with
// model.ErrNotFound-kind 401, when the id names no live session or its
// user may no longer sign in (the session then ends). Using a session
// moves its end forward; expires is the end after this use.
func (s *Service) Session(ctx context.Context, id string) (a auth.Actor, expires time.Time, err error) {
	if !strings.HasPrefix(id, SessionIDPrefix) || !auth.PlausibleSecret(id) {
		return auth.Anonymous, time.Time{}, model.Unauthorized("")
	}
	digest := auth.Digest(id)
	now := s.now()
	if e, _, ok := s.sessions.Get(digest, time.Now()); ok && !e.ws.Expired(now) && now.Sub(e.ws.LastSeenAt) < sessionTouchEvery {
		return s.sessionActor(ctx, e.user, e.ws.ExpiresAt)
	}
	gen, read := s.sessions.Generation(), time.Now()
	ws, u, err := s.db.WebSessionWithUser(ctx, digest)
	if errors.Is(err, model.ErrNotFound) {
		return auth.Anonymous, time.Time{}, model.Unauthorized("")
	}
	if err != nil {
		return auth.Anonymous, time.Time{}, err
	}
	if ws.Expired(now) || u.State.IsBlocked() || u.State == model.UserDeactivated {
		if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteWebSession(ctx, digest) }); err != nil {
			return auth.Anonymous, time.Time{}, err
		}
		return auth.Anonymous, time.Time{}, model.Unauthorized("")
	}
	expires = ws.ExpiresAt
	if now.Sub(ws.LastSeenAt) >= sessionTouchEvery {
		life, err := s.sessionLifetime(ctx)
		if err != nil {
			return auth.Anonymous, time.Time{}, err
		}
		var live bool
		err = s.db.InTx(ctx, func(tx *store.Tx) (err error) {
			live, err = tx.TouchWebSession(ctx, ws.ID, now, now.Add(life))
			return err
		})
		if err != nil {
			return auth.Anonymous, time.Time{}, err
		}
		if !live {
			return auth.Anonymous, time.Time{}, model.Unauthorized("")
		}
		expires = now.Add(life)
		ws.LastSeenAt, ws.ExpiresAt = now, expires
	}
	s.sessions.Put(digest, cachedSession{ws, u}, gen, read)
	return s.sessionActor(ctx, u, expires)
}

// sessionActor is the actor of a live session of u.
func (s *Service) sessionActor(ctx context.Context, u model.User, expires time.Time) (auth.Actor, time.Time, error) {
	a := auth.Actor{User: &u}
	if u.Admin && s.settings != nil {
		// Admin mode needs a re-authentication the web does not offer
		// yet: with admin mode on, a session acts as a regular user.
		st, err := s.settings.Current(ctx)
		if err != nil {
			return auth.Anonymous, time.Time{}, err
		}
		a.OutsideAdminMode = st.AdminMode
	}
	return a, expires, nil
}

// EndSession signs a session out (nothing if the id names none).
func (s *Service) EndSession(ctx context.Context, id string) error {
	if !auth.PlausibleSecret(id) {
		return nil
	}
	digest := auth.Digest(id)
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteWebSession(ctx, digest) })
	// After the delete: a read of the session racing with it is now of
	// an older generation, and is not kept.
	s.sessions.Invalidate()
	return err
}
