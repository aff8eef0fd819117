package users

import (
	"sync"
	"sync/atomic"
	"time"

	"quarry/internal/model"
)

// sessionCacheFor is how long a session read from the database answers
// from memory: every page of a signed-in browser reads its session, and
// this spares the statement while the session stays the same. Within
// this process a session signed out, and any user written (blocked,
// deactivated, deleted, updated), is forgotten at once (the generation
// moves), and an expired one is refused by its end time; what another
// process changes in a shared database (PostgreSQL) is seen at the
// latest sessionCacheFor later.
const sessionCacheFor = time.Second

// maxCachedSessions bounds the remembered sessions; past it they start
// afresh.
const maxCachedSessions = 10000

// sessionCache remembers recent session reads by the session's digest.
type sessionCache struct {
	// gen moves on every sign-out and user write: an entry read under an
	// older generation is never served (nor stored).
	gen     atomic.Uint64
	mu      sync.RWMutex
	entries map[string]cachedSession
}

// cachedSession is a session as the database gave it, with its user.
type cachedSession struct {
	ws   model.WebSession
	user model.User
	gen  uint64
	read time.Time // when the database gave it
}

func newSessionCache() *sessionCache {
	return &sessionCache{entries: map[string]cachedSession{}}
}

// generation is the generation to read a session under: take it before
// the database read whose answer put stores.
func (c *sessionCache) generation() uint64 { return c.gen.Load() }

// get returns the session of digest read at most sessionCacheFor before
// now, under the current generation.
func (c *sessionCache) get(digest string, now time.Time) (cachedSession, bool) {
	c.mu.RLock()
	e, ok := c.entries[digest]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || now.Before(e.read) || now.Sub(e.read) >= sessionCacheFor {
		return cachedSession{}, false
	}
	return e, true
}

// put remembers a session read under generation gen at read, unless the
// generation has moved since.
func (c *sessionCache) put(digest string, ws model.WebSession, u model.User, gen uint64, read time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	if len(c.entries) >= maxCachedSessions {
		clear(c.entries)
	}
	c.entries[digest] = cachedSession{ws: ws, user: u, gen: gen, read: read}
}

// invalidate forgets every session: a user was written, or a session
// ended (a read racing with it may hold the old answer; its generation
// is now stale).
func (c *sessionCache) invalidate() {
	c.gen.Add(1)
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
