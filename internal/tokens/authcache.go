package tokens

import (
	"time"

	"quarry/internal/model"
)

// authCacheFor is how long a token's authentication (the token's row and
// its user) answers from memory (gencache). The cache is on only where
// this process is the database's one server (SQLite): every commit in
// this process that changes what authentication decides — a token
// revoked or rotated, any write of a user's row (blocking, deactivating,
// making administrator, deleting, the dormant sweep) — forgets every
// entry at once (store.DB.OnAuthWrite), so the next request reads again;
// the bound covers a write by another command on the same file (quarry
// admin). On PostgreSQL, where several processes share the database,
// every request reads the token and its user's version, so a change
// through one process is seen by the next request through any other
// (TestAuth_keptUsersAcrossProcesses).
const authCacheFor = time.Second

// maxCachedTokens bounds the remembered authentications; past it they
// start afresh.
const maxCachedTokens = 10000

// authEntry is a token's authentication as the database gave it.
type authEntry struct {
	t model.PersonalAccessToken
	u model.User
}
