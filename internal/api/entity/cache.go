package entity

import (
	"bytes"

	"quarry/internal/bytelru"
)

// Kinds of cached entities.
const (
	KindProject uint8 = iota + 1
	KindUserAdmin
	KindUserDetailsAdmin
	// KindProjectRow is a project's decoded row with its namespace,
	// KindUserBasic a user's summary: what a request whose versions match
	// need not read again (rows.go).
	KindProjectRow
	KindUserBasic
	// KindMergeRequest is a merge request's list entity,
	// KindMergeRequestDetail the single one (mergerequests_cache.go).
	KindMergeRequest
	KindMergeRequestDetail
)

// CacheKey names one encoding of an entity: its row (id and creation
// time, so a reused id is another row) at the versions of every row the
// encoding shows, for one class of callers (the caller-dependent choices
// the encoding makes, as bits).
type CacheKey struct {
	Kind    uint8
	Class   uint8
	ID      int64
	Created int64
	V       [3]int64
}

// Template is an entity's encoded JSON with holes: Splice writes the
// parts before, between and after the holes around the caller's fillings.
type Template struct {
	raw  []byte
	cuts []int // offsets in raw where the holes go, ascending
}

// NewTemplate cuts b at the offsets of the holes, which must be ascending.
func NewTemplate(b []byte, cuts ...int) *Template { return &Template{raw: b, cuts: cuts} }

// Splice appends the template with fills in its holes (one per hole,
// each already encoded, empty for an omitted field) to dst.
func (t *Template) Splice(dst []byte, fills ...[]byte) []byte {
	at := 0
	for i, c := range t.cuts {
		dst = append(dst, t.raw[at:c]...)
		dst = append(dst, fills[i]...)
		at = c
	}
	return append(dst, t.raw[at:]...)
}

// size is what a template is counted as in the cache's bound: its bytes
// and the entry's bookkeeping.
func (t *Template) size() int64 { return int64(len(t.raw)+8*len(t.cuts)) + entryOverhead }

// entryOverhead approximates an entry's key, list element and map slot.
const entryOverhead = 160

// Cache keeps entities' templates, least recently used first out, within
// a bound on their bytes. A nil *Cache keeps nothing (the cache is off).
type Cache struct {
	lru *bytelru.Cache[CacheKey, any] // *Template, *model.Project or *model.User
}

// NewCache returns a cache of at most maxBytes; nil when maxBytes <= 0.
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{lru: bytelru.New[CacheKey, any](maxBytes)}
}

// Get returns the template stored under k.
func (c *Cache) Get(k CacheKey) (*Template, bool) {
	t, ok := c.get(k).(*Template)
	return t, ok
}

// Put stores t under k, dropping the least recently used entries beyond
// the bound; a template larger than the whole bound is not kept.
func (c *Cache) Put(k CacheKey, t *Template) { c.put(k, t, t.size()) }

// get returns the value stored under k, or nil.
func (c *Cache) get(k CacheKey) any {
	if c == nil {
		return nil
	}
	v, _ := c.lru.Get(k)
	return v
}

// put stores v, counted as size bytes, under k.
func (c *Cache) put(k CacheKey, v any, size int64) {
	if c != nil {
		c.lru.Put(k, v, size)
	}
}

// Stats are the cache's entries and the bytes they count for.
func (c *Cache) Stats() (entries int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	return c.lru.Stats()
}

// cutBefore returns the offset of key (`,"name":`) in b, or -1.
func cutBefore(b []byte, key string) int { return bytes.Index(b, []byte(key)) }
