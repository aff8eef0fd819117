package tokens

import (
	"context"
	"sync"

	"quarry/internal/model"
	"quarry/internal/store"
)

// usersKept bounds the decoded users authentication keeps; past it the
// copies are dropped all at once.
const usersKept = 4096

// userRows keeps the users of tokens decoded, by id, creation time and
// entity_version — which a trigger moves on every write to the row, of
// any process (blocking, deactivating, making administrator, the last
// activity day). Authentication still reads the token and the user's
// current version in one statement on every request and takes a kept
// copy only at exactly that version, so a revoked or expired token, or a
// user blocked since, is never let through.
type userRows struct {
	mu sync.Mutex
	m  map[userKey]model.User
}

// userKey names a user's row (a reused id is another row) at a version.
type userKey struct{ id, created, version int64 }

// user returns the token's user at the version v read, from a kept copy
// or read from the database (then kept under the version it was read at).
func (s *Service) user(ctx context.Context, v store.TokenUserVersion) (model.User, error) {
	k := userKey{v.ID, v.CreatedAt.UnixMicro(), v.Version}
	s.users.mu.Lock()
	u, ok := s.users.m[k]
	s.users.mu.Unlock()
	if ok {
		return u, nil
	}
	u, err := s.db.UserByID(ctx, v.ID)
	if err != nil {
		return u, err
	}
	s.keepUser(u)
	return u, nil
}

// keepUser keeps u, the user's row as it is at u.EntityVersion.
func (s *Service) keepUser(u model.User) {
	k := userKey{u.ID, u.CreatedAt.UnixMicro(), u.EntityVersion}
	s.users.mu.Lock()
	if s.users.m == nil || len(s.users.m) >= usersKept {
		s.users.m = map[userKey]model.User{}
	}
	s.users.m[k] = u
	s.users.mu.Unlock()
}
