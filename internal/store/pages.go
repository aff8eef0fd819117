package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"quarry/internal/gencache"
	"quarry/internal/model"
)

// Whole pages of the lists read most (a project list's heads, a list of
// merge requests with their people) are remembered on SQLite the way
// offset pages' starts are (listStart): this process is the database's
// one server, so until it commits any write (OnCommit) a page read again
// is the page read before, and a second at most bounds what a write by
// another command on the same file (quarry admin) leaves unseen. Readers
// polling a list (a dashboard, a merge request list left open, scripts)
// then cost their page's rendering, not its statements. Every reader
// shares a remembered page's values: they are read only.
const (
	pagesFor = time.Second
	// maxPages bounds the pages remembered; past it they start afresh.
	maxPages = 64
	// maxPageBytes is the most a page may hold (its text, roughly) to
	// be remembered: maxPages of them bound the memory.
	maxPageBytes = 64 << 10
)

// ForgetPages empties the remembered pages (tests that count or record
// a list's statements).
func (db *DB) ForgetPages() { db.pages.Invalidate() }

// pageKey names a page of a list by what selects it: the list's name,
// its conditions and order with their arguments, the page, and what
// else its rows depend on (the caller's levels).
func pageKey(name string, w where, o order, page model.Page, more ...any) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(0)
	b.WriteString(startKey(w.sql()+o.sql("id")+" "+o.rank, append(append(append([]any{}, w.args...), o.rankArgs...), more...)))
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(page.Number))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(page.PerPage))
	if page.Keyset {
		b.WriteString("/k/")
		b.WriteString(page.Cursor)
	}
	return b.String()
}

// rememberedPage returns read's page under key from the remembered pages
// when they hold it (outside transactions, on SQLite), else reads it and
// remembers it when it holds at most maxPageBytes (size tells).
func rememberedPage[V any](ctx context.Context, tx *Tx, key string, read func(ctx context.Context) (V, error), size func(V) int) (V, error) {
	if tx.pages == nil {
		return read(ctx)
	}
	now := tx.clock.now()
	if v, _, ok := tx.pages.Get(key, now); ok {
		return v.(V), nil
	}
	gen := tx.pages.Generation()
	v, err := read(ctx)
	if err == nil && size(v) <= maxPageBytes {
		tx.pages.Put(key, v, gen, now)
	}
	return v, err
}

func newPages() *gencache.Cache[any] { return gencache.New[any](pagesFor, maxPages) }
