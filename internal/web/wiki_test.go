package web

import (
	"strings"
	"testing"

	"quarry/internal/model"
	"quarry/internal/projects"
	"quarry/internal/wikis"
)

func TestRenderWiki(t *testing.T) {
	const base = "/g/p/-/wikis"
	for _, c := range []struct {
		slug, format, content string
		want, lacks           []string
	}{
		{slug: "home", format: "markdown", content: "[a](other) [b](sub/page#x) [c](https://example.com/) [d](#top) [e](/abs)",
			want: []string{`href="/g/p/-/wikis/other"`, `href="/g/p/-/wikis/sub/page#x"`, `href="https://example.com/"`, `href="#top"`, `href="/abs"`}},
		{slug: "docs/guide", format: "markdown", content: "[up](../home) [side](intro) [far](../../../../etc) ![i](uploads/x%20y.png)",
			want: []string{`href="/g/p/-/wikis/home"`, `href="/g/p/-/wikis/docs/intro"`, `href="/g/p/-/wikis/etc"`, `src="/g/p/-/wikis/docs/uploads/x%20y.png"`}},
		{slug: "x", format: "markdown", content: "<script>alert(1)</script><a href=\"javascript:alert(2)\">j</a><img src=x onerror=alert(3)>",
			lacks: []string{"<script", "javascript:", "onerror"}},
		{slug: "notes", format: "asciidoc", content: "<b>bold</b> [a](other)",
			want: []string{"<pre>&lt;b&gt;bold&lt;/b&gt; [a](other)</pre>"}, lacks: []string{"href="}},
	} {
		got := string(renderWiki(wikis.Page{Slug: c.slug, Format: c.format, Content: []byte(c.content)}, base))
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %q: lacks %s in %s", c.slug, c.content, w, got)
			}
		}
		for _, l := range c.lacks {
			if strings.Contains(got, l) {
				t.Errorf("%s %q: has %s in %s", c.slug, c.content, l, got)
			}
		}
	}
}

func TestWikiTab(t *testing.T) {
	view := func(level string, acc model.AccessLevel, admin bool) projects.View {
		var v projects.View
		v.Project.Settings.WikiAccessLevel = level
		v.Access, v.CanAdmin = acc, admin
		return v
	}
	for _, c := range []struct {
		v    projects.View
		want bool
	}{
		{view("enabled", -1, false), true},
		{view("public", -1, false), true},
		{view("private", -1, false), false},
		{view("private", model.Guest, false), true},
		{view("private", -1, true), true},
		{view("disabled", model.Owner, true), false},
	} {
		if got := wikiTab(c.v); got != c.want {
			t.Errorf("wikiTab(%s, %d, admin %v) = %v", c.v.Project.Settings.WikiAccessLevel, c.v.Access, c.v.CanAdmin, got)
		}
	}
}
