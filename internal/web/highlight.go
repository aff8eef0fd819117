package web

import (
	"bytes"
	"html/template"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	lru "github.com/hashicorp/golang-lru/v2"
)

// formatter writes highlighted code with classes (the style sheet holds
// the colours: no inline styles under the page's CSP), line numbers in a
// column of their own, each a link to its anchor "#L<n>".
var formatter = html.New(html.WithClasses(true), html.WithLineNumbers(true), html.LineNumbersInTable(true),
	html.WithLinkableLineNumbers(true, "L"), html.TabWidth(4))

// Highlighting is cached by blob id and file name (the lexer follows the
// name): a blob's bytes never change. An entry is at most
// maxCachedHighlight bytes, and the cache holds highlightEntries of them.
const (
	highlightEntries   = 256
	maxCachedHighlight = 512 << 10
)

type highlightCache struct {
	lru *lru.Cache[string, highlighted]
}

// highlighted is a text file's highlighted HTML and its number of lines.
type highlighted struct {
	html  template.HTML
	lines int
}

func newHighlightCache() *highlightCache {
	c, err := lru.New[string, highlighted](highlightEntries)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &highlightCache{lru: c}
}

// highlight renders a text file's content as highlighted HTML with line
// numbers; the lexer is chosen by the file's name, then by its content.
func (c *highlightCache) highlight(blobID, name string, content []byte) (template.HTML, error) {
	key := blobID + "\x00" + name
	if v, ok := c.lru.Get(key); ok {
		return v.html, nil
	}
	lexer := lexers.Match(name)
	if lexer == nil {
		lexer = lexers.Analyse(string(content))
	}
	if lexer == nil {
		lexer = lexers.Fallback
	}
	lexer = chroma.Coalesce(lexer)
	it, err := lexer.Tokenise(nil, string(content))
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := formatter.Format(&b, styles.Fallback, it); err != nil {
		return "", err
	}
	// chroma escapes the code it writes: the output is safe HTML.
	out := template.HTML(b.String()) //nolint:gosec
	if b.Len() <= maxCachedHighlight && !isBinary(content) {
		c.lru.Add(key, highlighted{html: out, lines: countLines(content)})
	}
	return out, nil
}

// cached is the highlighted HTML of a text blob named name, and its
// number of lines, when it is in the cache: a page need not read the
// blob then.
func (c *highlightCache) cached(blobID, name string) (template.HTML, int, bool) {
	v, ok := c.lru.Get(blobID + "\x00" + name)
	return v.html, v.lines, ok
}

// countLines counts a text's lines, the last one with or without its
// newline.
func countLines(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}
