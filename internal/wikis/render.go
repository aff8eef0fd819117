package wikis

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	goldmarkhtml "github.com/yuin/goldmark/renderer/html"
)

// markdown renders GitHub Flavored Markdown, raw HTML included: what is
// unsafe in it is left to the sanitizer. It is safe for concurrent use.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(goldmarkhtml.WithUnsafe()),
)

// sanitizer is bluemonday's UGC policy plus the disabled checkboxes of
// task list items. Once built it is safe for concurrent use.
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	return p
}()

// RenderHTML renders a page's content in the named format as sanitised
// HTML. Markdown is rendered with goldmark (GitHub Flavored Markdown:
// tables, strikethrough, autolinks, task lists; raw HTML passed through)
// and then sanitised with bluemonday's UGC policy, which also lets task
// list checkboxes (<input type="checkbox" checked disabled>) through: raw
// <script>, event-handler attributes and javascript: URLs never survive,
// while plain formatting (headings, lists, links, code, tables, <details>)
// does. Every other format, known or not, is not interpreted: its content
// is HTML-escaped and wrapped in <pre>…</pre>. Content that is not valid
// UTF-8 has each run of invalid bytes replaced by U+FFFD first. It is safe
// for concurrent use.
func RenderHTML(format string, content []byte) string {
	content = bytes.ToValidUTF8(content, []byte("\uFFFD"))
	if format != "markdown" {
		return "<pre>" + html.EscapeString(string(content)) + "</pre>"
	}
	var b strings.Builder
	if err := markdown.Convert(content, &b); err != nil {
		// Writing to a strings.Builder does not fail, and neither does
		// parsing; show the text rather than nothing all the same.
		return "<pre>" + html.EscapeString(string(content)) + "</pre>"
	}
	return sanitizer.Sanitize(b.String())
}
