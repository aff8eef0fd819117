package web

import "quarry/internal/bytelru"

// pageCache keeps what the pages render once and serve again —
// highlighted files, READMEs, folders' listings, projects' heads, merge
// requests' diffs — within one bound on their bytes (Deps.CacheBytes,
// the server's --page-cache-bytes), the least recently used out first.
// Every entry's key names everything its HTML shows (a blob id, a
// commit, a project's path), so an entry is never stale, and each kind
// still caps the size of one entry, so one large file does not push out
// everything else. A nil cache (a bound of 0) keeps nothing.
type pageCache = bytelru.Cache[pageKey, any]

// cacheKind says which part an entry is, so keys of different parts never
// meet.
type cacheKind uint8

const (
	kindHighlight cacheKind = iota + 1
	kindReadme
	kindListing
	kindHead
	kindDiff
)

type pageKey struct {
	kind cacheKind
	key  string
}

// pageEntryOverhead approximates an entry's key, list element and map
// slot beside the bytes it holds.
const pageEntryOverhead = 160

// cacheGet returns the value of kind stored under key.
func cacheGet[V any](c *pageCache, kind cacheKind, key string) (V, bool) {
	v, ok := c.Get(pageKey{kind, key})
	if !ok {
		var zero V
		return zero, false
	}
	t, ok := v.(V)
	return t, ok
}

// cachePut stores v under key, counted as size bytes with its key.
func cachePut(c *pageCache, kind cacheKind, key string, v any, size int) {
	c.Put(pageKey{kind, key}, v, int64(size+len(key))+pageEntryOverhead)
}
