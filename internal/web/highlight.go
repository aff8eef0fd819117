package web

import (
	"bytes"
	"html/template"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// formatter writes highlighted code with classes (the style sheet holds
// the colours: no inline styles under the page's CSP), line numbers in a
// column of their own, each a link to its anchor "#L<n>".
var formatter = html.New(html.WithClasses(true), html.WithLineNumbers(true), html.LineNumbersInTable(true),
	html.WithLinkableLineNumbers(true, "L"), html.TabWidth(4))

// Highlighting is cached (pageCache) by blob id and file name (the lexer
// follows the name): a blob's bytes never change. An entry is at most
// maxCachedHighlight bytes.
const maxCachedHighlight = 512 << 10

// highlighted is a text file's highlighted HTML and its number of lines.
type highlighted struct {
	html  template.HTML
	lines int
}

// highlight renders a text file's content as highlighted HTML with line
// numbers; the lexer is chosen by the file's name, then by its content.
func (h *Handler) highlight(blobID, name string, content []byte) (template.HTML, error) {
	key := blobID + "\x00" + name
	if v, ok := cacheGet[highlighted](h.cache, kindHighlight, key); ok {
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
		cachePut(h.cache, kindHighlight, key, highlighted{html: out, lines: countLines(content)}, b.Len())
	}
	return out, nil
}

// highlighted is the highlighted HTML of a text blob named name, and
// its number of lines, when it is in the cache: a page need not read the
// blob then.
func (h *Handler) highlighted(blobID, name string) (template.HTML, int, bool) {
	v, ok := cacheGet[highlighted](h.cache, kindHighlight, blobID+"\x00"+name)
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
