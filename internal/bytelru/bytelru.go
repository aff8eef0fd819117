// Package bytelru is a least-recently-used cache bounded by the bytes
// its entries count for, not by their number: entries of very different
// sizes (a project's JSON, a highlighted file) share one bound that an
// operator can set.
package bytelru

import (
	"container/list"
	"sync"
)

// Cache keeps values by key within a bound on their counted bytes, the
// least recently used out first. It is safe for concurrent use. A nil
// *Cache keeps nothing (the cache is off).
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // of *entry[K, V], most recently used first
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key  K
	v    V
	size int64
}

// New returns a cache of at most maxBytes; nil (off) when maxBytes <= 0.
func New[K comparable, V any](maxBytes int64) *Cache[K, V] {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache[K, V]{max: maxBytes, order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value stored under k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).v, true
}

// Put stores v under k, counted as size bytes (the caller counts what the
// value holds and its bookkeeping), dropping the least recently used
// entries beyond the bound; a value larger than the whole bound is not
// kept.
func (c *Cache[K, V]) Put(k K, v V, size int64) {
	if c == nil || size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		old := e.Value.(*entry[K, V])
		c.used += size - old.size
		old.v, old.size = v, size
		c.order.MoveToFront(e)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, v: v, size: size})
		c.used += size
	}
	for c.used > c.max {
		last := c.order.Back()
		e := last.Value.(*entry[K, V])
		c.order.Remove(last)
		delete(c.items, e.key)
		c.used -= e.size
	}
}

// Stats are the cache's entries and the bytes they count for.
func (c *Cache[K, V]) Stats() (entries int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.used
}
