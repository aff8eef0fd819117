package alerts

import (
	"sync"
	"time"

	"quarry/internal/model"
)

// The intake resolves the integration an URL names once per
// IntakeCacheTTL at most, per process: monitoring tools post in storms,
// and the lookup is a third of a grouped post's work. A change of an
// integration through this process empties the cache at once; another
// process (on PostgreSQL) and a renamed or removed project are seen
// within IntakeCacheTTL.
const (
	IntakeCacheTTL   = time.Second
	intakeCacheLimit = 10_000
)

type targetKey struct {
	path       string
	route      Route
	identifier string
}

type target struct {
	projectID int64
	in        model.AlertIntegration
	found     bool
	err       error // model.ErrNotFound: no such project
	until     time.Time
}

// targetCache holds recent intake lookups; bounded (emptied when full).
type targetCache struct {
	mu sync.Mutex
	m  map[targetKey]target
	// gen counts clears: a lookup that began before one is not kept.
	gen uint64
}

// generation is the count of clears so far.
func (c *targetCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *targetCache) get(k targetKey, now time.Time) (target, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[k]
	if !ok || now.After(t.until) {
		return target{}, false
	}
	return t, true
}

// put keeps a lookup that began at generation gen, unless an
// integration changed since.
func (c *targetCache) put(k targetKey, t target, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= intakeCacheLimit {
		c.m = make(map[targetKey]target)
	}
	c.m[k] = t
}

// clear forgets every lookup (an integration changed).
func (c *targetCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
	c.gen++
}
