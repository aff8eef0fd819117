package web

import (
	"net/http"
	"net/http/httptest"
	"quarry/internal/bytelru"
	"strconv"
	"strings"
	"testing"
)

func TestLocalPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"/", true},
		{"/alice/demo", true},
		{"/alice/demo/-/blob/main/a%20b.go?plain=1#L3", true},
		{"", false},
		{"alice", false},
		{"//evil.example", false},
		{"//evil.example/path", false},
		{"/\\evil.example", false},
		{"/a\\b", false},
		{"https://evil.example/", false},
		{"javascript:alert(1)", false},
		{"/a\r\nLocation: x", false},
		{"/a\tb", false},
		{"/a\x7fb", false},
		{"/" + strings.Repeat("a", 2048), false},
	} {
		if got := localPath(c.in); got != c.want {
			t.Errorf("localPath(%q) = %v; want %v", c.in, got, c.want)
		}
	}
}

func TestAcceptEncoding(t *testing.T) {
	for _, c := range []struct {
		header string
		br, gz bool // offered
		want   string
	}{
		{"", true, true, ""},
		{"gzip", true, true, "gzip"},
		{"gzip, deflate, br", true, true, "br"},
		{"gzip, deflate, br", false, true, "gzip"},
		{"gzip, deflate, br", false, false, ""},
		{"br, GZIP;q=0.5", true, true, "br"},
		{"BR;q=0, gzip", true, true, "gzip"},
		{"identity", true, true, ""},
		{"gzip;q=0", true, true, ""},
		{"gzip; q=0.0", true, true, ""},
		{"deflate, gzip;q=0.000", true, true, ""},
		{"*", true, true, "br"},
		{"*;q=0, gzip", true, true, "gzip"},
		{"br;q=0, *", true, true, "gzip"},
		{"br;q=nonsense, gzip", true, true, "gzip"},
		{",,;;,=", true, true, ""},
	} {
		if got := acceptEncoding(c.header, c.br, c.gz); got != c.want {
			t.Errorf("acceptEncoding(%q, %v, %v) = %q; want %q", c.header, c.br, c.gz, got, c.want)
		}
	}
}

func TestIsBinary(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"empty", nil, false},
		{"text", []byte("package main\n"), false},
		{"utf-8", []byte("héllo wörld ✓\n"), false},
		{"nul", []byte("a\x00b"), true},
		{"latin-1", []byte("caf\xe9"), true},
		{"nul after 8000", append([]byte(strings.Repeat("a", 9000)), 0), false},
	} {
		if got := isBinary(c.in); got != c.want {
			t.Errorf("%s: isBinary = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestImageType(t *testing.T) {
	for name, want := range map[string]string{
		"logo.png": "image/png", "a/B.JPG": "image/jpeg", "x.jpeg": "image/jpeg", "x.gif": "image/gif",
		"x.webp": "image/webp", "x.svg": "", "x.html": "", "png": "", "x.png.txt": "",
	} {
		if got := imageType(name); got != want {
			t.Errorf("imageType(%q) = %q; want %q", name, got, want)
		}
	}
}

func TestEscapePath(t *testing.T) {
	for in, want := range map[string]string{
		"a/b.go":            "a/b.go",
		"docs/a b.md":       "docs/a%20b.md",
		"x/<img>.txt":       "x/%3Cimg%3E.txt",
		"q?#.txt":           "q%3F%23.txt",
		"feature/x":         "feature/x",
		"%41":               "%2541",
		"dir/../etc/passwd": "dir/../etc/passwd",
	} {
		if got := escapePath(in); got != want {
			t.Errorf("escapePath(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestAssets: every asset is named by its digest, compressed once, and
// the style sheet carries the highlighting's light and dark styles.
func TestAssets(t *testing.T) {
	as, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"app.css", "app.js"} {
		u := as.url(base)
		a := as.byName[strings.TrimPrefix(u, assetPrefix)]
		if a == nil || !strings.HasPrefix(a.name, "app-") || a.gz == nil || len(a.gz) >= len(a.plain) {
			t.Fatalf("%s: %q %+v", base, u, a)
		}
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", u, nil)
		r.Header.Set("If-None-Match", `"`+a.name+`"`)
		as.serve(rec, r)
		if rec.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d", base, rec.Code)
		}
	}
	css := string(as.byName[strings.TrimPrefix(as.url("app.css"), assetPrefix)].plain)
	if !strings.Contains(css, ".chroma .kn") || !strings.Contains(css, "@media (prefers-color-scheme: dark) {\n") || !strings.Contains(css, "@media (prefers-color-scheme: light) {\n") {
		t.Errorf("the style sheet lacks the highlighting styles")
	}
	rec := httptest.NewRecorder()
	as.serve(rec, httptest.NewRequest("POST", as.url("app.css"), nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("POST to an asset: %d", rec.Code)
	}
}

// TestHighlight: code is escaped, lines are numbered with anchors, and
// a blob's highlighting is kept by id and name.
func TestHighlight(t *testing.T) {
	c := &Handler{cache: bytelru.New[pageKey, any](1 << 20)}
	out, err := c.highlight("blob1", "x.go", []byte("package x\n\nvar s = \"</pre><script>alert(1)</script>\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`id="L1"`, `href="#L3"`, `class="kn"`, "&lt;/pre&gt;&lt;script&gt;"} {
		if !strings.Contains(s, want) {
			t.Errorf("highlighted code lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "<script>") || strings.Contains(s, "style=") {
		t.Errorf("unescaped script or inline style:\n%s", s)
	}
	again, err := c.highlight("blob1", "x.go", nil)
	if err != nil || again != out {
		t.Errorf("not kept by blob id: %v", err)
	}
	if other, _ := c.highlight("blob1", "x.txt", []byte("plain")); other == out {
		t.Errorf("kept across names")
	}
	if html, lines, ok := c.highlighted("blob1", "x.go"); !ok || html != out || lines != 3 {
		t.Errorf("highlighted(blob1, x.go) = %d lines, %v; want the kept HTML of 3 lines", lines, ok)
	}

	// Without a cache (a bound of 0) nothing is kept.
	off := &Handler{}
	if _, err := off.highlight("blob1", "x.go", []byte("package x\n")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := off.highlighted("blob1", "x.go"); ok {
		t.Error("kept without a cache")
	}
}

// TestPageCache_bound: the parts share one bound on their bytes, the
// least recently used out first; a kind's key never finds another kind's
// entry.
func TestPageCache_bound(t *testing.T) {
	h := &Handler{cache: bytelru.New[pageKey, any](4 << 10)}
	for i := range 20 {
		content := []byte(strings.Repeat("x", 200) + "\n")
		if _, err := h.highlight(strconv.Itoa(i), "a.txt", content); err != nil {
			t.Fatal(err)
		}
	}
	n, used := h.cache.Stats()
	if used > 4<<10 || n == 0 || n >= 20 {
		t.Errorf("%d entries counting %d bytes; want some, not all, within 4 KiB", n, used)
	}
	if _, _, ok := h.highlighted("19", "a.txt"); !ok {
		t.Error("the last highlighted file is not kept")
	}
	if _, _, ok := h.highlighted("0", "a.txt"); ok {
		t.Error("the first highlighted file is still kept past the bound")
	}
	// Kinds and types keep apart.
	cachePut(h.cache, kindHead, "k", "v", 1)
	if v, ok := cacheGet[string](h.cache, kindHead, "k"); !ok || v != "v" {
		t.Errorf("cacheGet = %q, %v", v, ok)
	}
	if _, ok := cacheGet[string](h.cache, kindReadme, "k"); ok {
		t.Error("a key of one kind found under another")
	}
	if _, ok := cacheGet[int](h.cache, kindHead, "k"); ok {
		t.Error("a value of another type returned")
	}
}

// TestRenderMarkdown: relative links go to the repository's files at the
// ref, relative images to their raw bytes; absolute links, fragments and
// other schemes are left alone; nothing climbs above the root.
func TestRenderMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, dir, md, want string
	}{
		{"root link", "", "[g](docs/guide.md)", `href="/g/p/-/blob/main/docs/guide.md"`},
		{"folder link", "docs", "[r](../README.md#top)", `href="/g/p/-/blob/main/README.md#top"`},
		{"above the root", "", "[x](../../etc/passwd)", `href="/g/p/-/blob/main/etc/passwd"`},
		{"image", "docs", "![l](img/logo.png)", `src="/g/p/-/raw/main/docs/img/logo.png"`},
		{"spaces and query", "", "[s](<a b.md?plain=1>)", `href="/g/p/-/blob/main/a%20b.md?plain=1"`},
		{"absolute", "", "[a](/other/project)", `href="/other/project"`},
		{"fragment", "", "[f](#install)", `href="#install"`},
		{"scheme", "", "[h](https://example.com/x.md)", `href="https://example.com/x.md"`},
		{"mailto", "", "[m](mailto:a@example.com)", `href="mailto:a@example.com"`},
	} {
		got := string(renderMarkdown([]byte(c.md), "g/p", "main", c.dir))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s; want %s", c.name, got, c.want)
		}
	}
	if got := string(renderMarkdown([]byte(`[x](javascript:alert(1)) <a href="java&#115;cript:alert(1)">y</a>`), "g/p", "main", "")); strings.Contains(got, "javascript") {
		t.Errorf("script URL survived: %s", got)
	}
}
