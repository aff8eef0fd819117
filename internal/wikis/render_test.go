package wikis

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestRenderHTML(t *testing.T) {
	cases := []struct {
		name, format, content string
		want                  []string // substrings the HTML must have
		wantNot               []string // substrings it must not have, case-insensitively
	}{
		{"heading", "markdown", "# Title\n", []string{"<h1", "Title</h1>"}, nil},
		{"table", "markdown", "| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"<table>", "<th>a</th>", "<td>2</td>"}, nil},
		{"strikethrough", "markdown", "~~gone~~", []string{"<del>gone</del>"}, nil},
		{"autolink", "markdown", "see https://example.com now", []string{`<a href="https://example.com"`}, nil},
		{"link", "markdown", "[x](https://example.com/a)", []string{`href="https://example.com/a"`, ">x</a>"}, nil},
		{"list and code", "markdown", "- one\n- `two`\n\n```go\nx := 1\n```\n", []string{"<ul>", "<li>one</li>", "<code>two</code>", "<pre><code", "x := 1"}, nil},
		{"task list", "markdown", "- [x] done\n- [ ] todo\n", []string{`<input checked="" disabled="" type="checkbox"`, `<input disabled="" type="checkbox"`, "done", "todo"}, nil},
		{"details", "markdown", "<details><summary>More</summary>\n\nHidden\n\n</details>\n", []string{"<details>", "<summary>More</summary>", "Hidden"}, nil},
		{"script", "markdown", "<script>alert(1)</script>\n", nil, []string{"<script", "alert(1)"}},
		{"inline script", "markdown", "a <script>alert(1)</script> b", nil, []string{"<script"}},
		{"onerror", "markdown", "<img src=x onerror=alert(1)>", nil, []string{"onerror", "alert"}},
		{"javascript link", "markdown", "[x](javascript:alert(1))", []string{"x"}, []string{"javascript:"}},
		{"javascript html link", "markdown", `<a href="JaVaScRiPt:alert(1)">x</a>`, []string{"x"}, []string{"javascript:"}},
		{"text input", "markdown", `<input type="text" value="v">`, nil, []string{"<input"}},
		{"style", "markdown", `<p style="color:red" onclick="x()">p</p>`, []string{"p</p>"}, []string{"style", "onclick"}},
		{"iframe", "markdown", `<iframe src="https://evil.example"></iframe>`, nil, []string{"<iframe"}},
		{"invalid UTF-8", "markdown", "a\xffb", []string{"a\uFFFDb"}, nil},
		{"empty", "markdown", "", nil, []string{"<"}},
	}
	for _, c := range cases {
		got := RenderHTML(c.format, []byte(c.content))
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: RenderHTML(%q, %q) = %q; want it to contain %q", c.name, c.format, c.content, got, w)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(strings.ToLower(got), strings.ToLower(w)) {
				t.Errorf("%s: RenderHTML(%q, %q) = %q; want no %q", c.name, c.format, c.content, got, w)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: RenderHTML(%q, %q) = %q; want valid UTF-8", c.name, c.format, c.content, got)
		}
	}
}

func TestRenderHTML_verbatim(t *testing.T) {
	cases := []struct{ format, content, want string }{
		{"rdoc", "<b>x</b>", "<pre>&lt;b&gt;x&lt;/b&gt;</pre>"},
		{"asciidoc", "<b>x</b>", "<pre>&lt;b&gt;x&lt;/b&gt;</pre>"},
		{"org", "<b>x</b>", "<pre>&lt;b&gt;x&lt;/b&gt;</pre>"},
		{"plaintext", "# not a heading\n", "<pre># not a heading\n</pre>"},
		{"textile", `a & "b" 'c'`, "<pre>a &amp; &#34;b&#34; &#39;c&#39;</pre>"},
		{"Markdown", "<script>x</script>", "<pre>&lt;script&gt;x&lt;/script&gt;</pre>"},
		{"", "", "<pre></pre>"},
		{"unknown", "a\xff\xfeb", "<pre>a\uFFFDb</pre>"},
	}
	for _, c := range cases {
		if got := RenderHTML(c.format, []byte(c.content)); got != c.want {
			t.Errorf("RenderHTML(%q, %q) = %q; want %q", c.format, c.content, got, c.want)
		}
	}
}

// TestRenderHTML_concurrent renders from several goroutines at once; run
// it with -race to check the shared renderer and policy.
func TestRenderHTML_concurrent(t *testing.T) {
	const content = "# T\n\n| a |\n|---|\n| 1 |\n\n- [x] t\n\n<script>x</script>\n"
	want := RenderHTML("markdown", []byte(content))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := RenderHTML("markdown", []byte(content)); got != want {
					t.Errorf("RenderHTML(%q) = %q; want %q", content, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
