package web

import (
	"html"
	"html/template"
	"net/url"
	"path"
	"regexp"
	"strings"

	"quarry/internal/wikis"
)

// relativeAttr finds the links and images of sanitised Markdown output
// (bluemonday writes every attribute as name="value").
var relativeAttr = regexp.MustCompile(`\b(href|src)="([^"]*)"`)

// renderMarkdown renders a repository's Markdown file (sanitised by
// wikis.RenderHTML) with its relative links made the repository's: a
// link to the file or folder at ref, an image to its raw bytes, each
// taken from dir, the folder of the file rendered ("" for the root).
func renderMarkdown(data []byte, project, ref, dir string) template.HTML {
	out := wikis.RenderHTML("markdown", data)
	out = relativeAttr.ReplaceAllStringFunc(out, func(m string) string {
		sub := relativeAttr.FindStringSubmatch(m)
		attr, val := sub[1], html.UnescapeString(sub[2])
		if val == "" || strings.HasPrefix(val, "/") || strings.HasPrefix(val, "#") || strings.Contains(strings.SplitN(val, "/", 2)[0], ":") {
			return m // absolute, a fragment of this page, or with a scheme
		}
		rest := ""
		if i := strings.IndexAny(val, "?#"); i >= 0 {
			val, rest = val[:i], val[i:]
		}
		val, err := url.PathUnescape(val) // Markdown output is percent-encoded
		if err != nil {
			return m
		}
		target := path.Join("/", dir, val)[1:] // never above the root
		kind := "blob"
		if attr == "src" {
			kind = "raw"
		}
		u := "/" + project + "/-/" + kind + "/" + escapePath(ref)
		if target != "" {
			u += "/" + escapePath(target)
		}
		return attr + `="` + html.EscapeString(u+rest) + `"`
	})
	// The output is bluemonday's, with URLs of this site escaped in.
	return template.HTML(out) //nolint:gosec
}
