package tokens

import (
	"sync"
	"sync/atomic"
	"time"

	"quarry/internal/model"
)

// authCacheFor is how long a token's authentication (the token's row and
// its user) answers from memory. The cache is on only where this process
// is the database's one server (SQLite): every commit in this process
// that changes what authentication decides — a token revoked or rotated,
// any write of a user's row (blocking, deactivating, making
// administrator, deleting, the dormant sweep) — forgets every entry at
// once (store.DB.OnAuthWrite), so the next request reads again; the
// bound covers a write by another command on the same file (quarry
// admin). On PostgreSQL, where several processes
// share the database, every request reads the token and its user's
// version, so a change through one process is seen by the next request
// through any other (TestAuth_keptUsersAcrossProcesses).
const authCacheFor = time.Second

// maxCachedTokens bounds the remembered authentications; past it they
// start afresh.
const maxCachedTokens = 10000

// authCache remembers recent authentications by the token's digest.
type authCache struct {
	// gen moves on every write that may change an authentication: an
	// entry read under an older generation is never served (nor stored).
	gen     atomic.Uint64
	mu      sync.RWMutex
	entries map[string]authEntry
}

type authEntry struct {
	t    model.PersonalAccessToken
	u    model.User
	gen  uint64
	read time.Time // when the database gave it
}

func newAuthCache() *authCache { return &authCache{entries: map[string]authEntry{}} }

// generation is the generation to read under: take it before the
// database read whose answer put stores.
func (c *authCache) generation() uint64 {
	if c == nil {
		return 0
	}
	return c.gen.Load()
}

// get returns the authentication of digest read at most authCacheFor
// before now, under the current generation.
func (c *authCache) get(digest string, now time.Time) (authEntry, bool) {
	if c == nil {
		return authEntry{}, false
	}
	c.mu.RLock()
	e, ok := c.entries[digest]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || now.Before(e.read) || now.Sub(e.read) >= authCacheFor {
		return authEntry{}, false
	}
	return e, true
}

// put remembers an authentication read under generation gen at read,
// unless the generation has moved since.
func (c *authCache) put(digest string, t model.PersonalAccessToken, u model.User, gen uint64, read time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	if len(c.entries) >= maxCachedTokens {
		clear(c.entries)
	}
	c.entries[digest] = authEntry{t: t, u: u, gen: gen, read: read}
}

// invalidate forgets every authentication (a read racing with the write
// may hold the old answer; its generation is now stale).
func (c *authCache) invalidate() {
	if c == nil {
		return
	}
	c.gen.Add(1)
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
