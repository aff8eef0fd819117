package web

import (
	"bytes"
	"html/template"

	lru "github.com/hashicorp/golang-lru/v2"
)

// listing is a folder as the overview and tree pages show it: its
// entries (folders first) and their rendered table.
type listing struct {
	Entries []treeEntry
	More    bool
	Parent  string // the link to the parent folder, "" at the root
	HTML    template.HTML
}

// listings are the folders' listings of every handler of the process
// (what an entry holds is only a function of its key and the embedded
// templates).
var listings = newListingCache()

// listingCache caches folders' listings by the project's path, the ref's
// name and the commit it named, and the folder: the entries of a folder
// at a commit never change, and the path and the ref's name make its
// links, so an entry is never stale. It is only consulted after the
// page's files service call has let the actor read the code at that
// commit. Listings whose table is larger than maxCachedListing are not
// kept.
type listingCache struct {
	lru *lru.Cache[string, listing]
}

const (
	listingEntries   = 256
	maxCachedListing = 64 << 10
)

func newListingCache() *listingCache {
	c, err := lru.New[string, listing](listingEntries)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &listingCache{lru: c}
}

func listingKey(project, ref, commit, dir string) string {
	return project + "\x00" + ref + "\x00" + commit + "\x00" + dir
}

func (c *listingCache) get(key string) (listing, bool) { return c.lru.Get(key) }

func (c *listingCache) add(key string, l listing) {
	if len(l.HTML) <= maxCachedListing {
		c.lru.Add(key, l)
	}
}

// renderPart executes one part of the templates ("tree_list") on its
// own, escaped as in a page's HTML text, where the pages put it.
func (h *Handler) renderPart(page, part string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := h.pages.byName[page].ExecuteTemplate(&b, part, data); err != nil {
		return "", err
	}
	// html/template escaped what it printed.
	return template.HTML(b.String()), nil //nolint:gosec
}
