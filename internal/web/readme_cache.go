package web

import (
	"html/template"

	lru "github.com/hashicorp/golang-lru/v2"
)

// readmes caches the overview's rendered README by its blob id, its
// name (Markdown or not), the project's path and the ref (its relative
// links name both): a blob's
// bytes never change, so an entry is never stale, and a project renamed
// or a default branch changed is a new key. What it holds is only a
// function of its key, so every handler of the process may share it.
var readmes = newReadmeCache()

// Rendered READMEs up to maxCachedReadme bytes are kept, readmeEntries
// of them.
const (
	readmeEntries   = 128
	maxCachedReadme = 256 << 10
)

type readmeCache struct {
	lru *lru.Cache[string, template.HTML]
}

func newReadmeCache() *readmeCache {
	c, err := lru.New[string, template.HTML](readmeEntries)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &readmeCache{lru: c}
}

func readmeKey(blobID, name, project, ref string) string {
	return blobID + "\x00" + name + "\x00" + project + "\x00" + ref
}

func (c *readmeCache) get(blobID, name, project, ref string) (template.HTML, bool) {
	if blobID == "" {
		return "", false
	}
	return c.lru.Get(readmeKey(blobID, name, project, ref))
}

func (c *readmeCache) add(blobID, name, project, ref string, html template.HTML) {
	if blobID != "" && len(html) <= maxCachedReadme {
		c.lru.Add(readmeKey(blobID, name, project, ref), html)
	}
}
