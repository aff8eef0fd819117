// Package gencache remembers recent answers of the database for a short,
// bounded time, and forgets them all at once when a write that may change
// them commits: the write moves a generation, and an answer read under an
// older generation is neither served nor kept (a read racing with the
// write may hold the old answer). What another process writes is seen
// once an entry's time is up.
package gencache

import (
	"sync"
	"sync/atomic"
	"time"
)

// Cache keeps values by key, each for at most its time to live after the
// database gave it, at most max of them (past it they start afresh). A
// nil *Cache keeps nothing.
type Cache[V any] struct {
	ttl     time.Duration
	max     int
	gen     atomic.Uint64
	mu      sync.RWMutex
	entries map[string]entry[V]
}

type entry[V any] struct {
	v    V
	gen  uint64
	read time.Time // when the database gave it
}

// New returns a cache keeping a value for ttl, max values at most.
func New[V any](ttl time.Duration, max int) *Cache[V] {
	return &Cache[V]{ttl: ttl, max: max, entries: map[string]entry[V]{}}
}

// Generation is the generation to read under: take it before the
// database read whose answer Put stores.
func (c *Cache[V]) Generation() uint64 {
	if c == nil {
		return 0
	}
	return c.gen.Load()
}

// Get returns the value of key read at most ttl before now, under the
// current generation, with the generation it was read under.
func (c *Cache[V]) Get(key string, now time.Time) (V, uint64, bool) {
	var zero V
	if c == nil {
		return zero, 0, false
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || now.Before(e.read) || now.Sub(e.read) >= c.ttl {
		return zero, 0, false
	}
	return e.v, e.gen, true
}

// Put remembers v, read under generation gen at read, unless the
// generation has moved since.
func (c *Cache[V]) Put(key string, v V, gen uint64, read time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = entry[V]{v: v, gen: gen, read: read}
}

// Invalidate forgets every value: a write that may change them committed.
func (c *Cache[V]) Invalidate() {
	if c == nil {
		return
	}
	c.gen.Add(1)
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
