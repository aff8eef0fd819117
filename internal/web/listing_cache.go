package web

import (
	"bytes"
	"html/template"
)

// listing is a folder as the overview and tree pages show it: its
// entries (folders first) and their rendered table.
type listing struct {
	Entries []treeEntry
	More    bool
	Parent  string // the link to the parent folder, "" at the root
	HTML    template.HTML
}

// Folders' listings are cached (pageCache) by the project's path, the
// ref's name and the commit it named, and the folder: the entries of a
// folder at a commit never change, and the path and the ref's name make
// its links, so an entry is never stale. It is only consulted after the
// page's files service call has let the actor read the code at that
// commit. Listings whose table is larger than maxCachedListing are not
// kept.
const maxCachedListing = 64 << 10

func listingKey(project, ref, commit, dir string) string {
	return project + "\x00" + ref + "\x00" + commit + "\x00" + dir
}

// size is what l counts for in the cache: its table and its entries.
func (l listing) size() int {
	n := len(l.HTML) + len(l.Parent)
	for _, e := range l.Entries {
		n += len(e.Name) + len(e.Path) + 64
	}
	return n
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
