package wikis

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestFormatNamed(t *testing.T) {
	cases := []struct {
		name string
		want Format
		ok   bool
	}{
		{"markdown", Format{"markdown", "md", true}, true},
		{"rdoc", Format{"rdoc", "rdoc", true}, true},
		{"asciidoc", Format{"asciidoc", "asciidoc", true}, true},
		{"org", Format{"org", "org", true}, true},
		{"textile", Format{"textile", "textile", false}, true},
		{"creole", Format{"creole", "creole", false}, true},
		{"rest", Format{"rest", "rst", false}, true},
		{"mediawiki", Format{"mediawiki", "mediawiki", false}, true},
		{"pod", Format{"pod", "pod", false}, true},
		{"plaintext", Format{"plaintext", "txt", false}, true},
		{"Markdown", Format{}, false},
		{"md", Format{}, false},
		{"", Format{}, false},
		{"markdown ", Format{}, false},
	}
	for _, c := range cases {
		got, ok := FormatNamed(c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("FormatNamed(%q) = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestWritableFormats(t *testing.T) {
	want := []string{"markdown", "rdoc", "asciidoc", "org"}
	if !slices.Equal(WritableFormats, want) {
		t.Errorf("WritableFormats = %q; want %q", WritableFormats, want)
	}
	for _, f := range formats {
		if got := slices.Contains(WritableFormats, f.Name); got != f.Writable {
			t.Errorf("format %q: in WritableFormats = %v; want %v", f.Name, got, f.Writable)
		}
	}
}

func TestPageFormat(t *testing.T) {
	cases := []struct {
		path   string
		format string // "" when not a page
		slug   string
	}{
		{"dir/My-Page.MD", "markdown", "dir/My-Page"},
		{"a.b.md", "markdown", "a.b"},
		{"home.md", "markdown", "home"},
		{"a.mkd", "markdown", "a"},
		{"a.mkdn", "markdown", "a"},
		{"a.mdown", "markdown", "a"},
		{"a.Markdown", "markdown", "a"},
		{"a.rdoc", "rdoc", "a"},
		{"a.asciidoc", "asciidoc", "a"},
		{"a.adoc", "asciidoc", "a"},
		{"a.org", "org", "a"},
		{"a.textile", "textile", "a"},
		{"a.creole", "creole", "a"},
		{"a.rst", "rest", "a"},
		{"a.rest", "rest", "a"},
		{"a.mediawiki", "mediawiki", "a"},
		{"a.wiki", "mediawiki", "a"},
		{"a.pod", "pod", "a"},
		{"x/y/z.TXT", "plaintext", "x/y/z"},
		{"Ünïcode Page.md", "markdown", "Ünïcode Page"},
		{"a\xff.md", "markdown", "a\xff"},
		{"..md", "", ""},  // a name of dots is no name
		{"...md", "", ""}, // nor two
		{"a..md", "markdown", "a."},
		{"uploads/x/a.png", "", ""},
		{".md", "", ""},
		{"dir/.md", "", ""},
		{"dir.md/", "", ""},
		{"dir.md/page", "", ""},
		{"README", "", ""},
		{"a.", "", ""},
		{"a.md ", "", ""},
		{"a.m\u212Ad", "", ""}, // the Kelvin sign is not a K
		{"", "", ""},
		{"/", "", ""},
	}
	for _, c := range cases {
		f, slug, ok := PageFormat(c.path)
		if ok != (c.format != "") || f.Name != c.format || slug != c.slug {
			t.Errorf("PageFormat(%q) = %q, %q, %v; want %q, %q, %v", c.path, f.Name, slug, ok, c.format, c.slug, c.format != "")
		}
		if want, _ := FormatNamed(c.format); f != want {
			t.Errorf("PageFormat(%q) format = %+v; want %+v", c.path, f, want)
		}
	}
}

func TestNormalizeTitle(t *testing.T) {
	cases := []struct{ title, want string }{
		{"Hello World", "Hello World"},
		{"  Hello   World  ", "Hello World"},
		{"a//b", "a//b"},
		{"/a", "/a"},
		{" a / b   c / ", "a/b c/"},
		{"a\t\n\r\vb", "a b"},
		{"\u00a0x\u2003\u2003y\u3000", "x y"},
		{"", ""},
		{"   ", ""},
		{"///", "///"},
		{" / / ", "//"},
		{"a\xffb  c", "a\xffb c"},
		{"a\x00b", "a\x00b"},
		{"Ünïcode  Page", "Ünïcode Page"},
	}
	for _, c := range cases {
		if got := NormalizeTitle(c.title); got != c.want {
			t.Errorf("NormalizeTitle(%q) = %q; want %q", c.title, got, c.want)
		}
	}
}

func TestSlug(t *testing.T) {
	cases := []struct{ title, want string }{
		{"Hello World", "Hello-World"},
		{"a/b c", "a/b-c"},
		{"../x", "x"},
		{"/a/./b/../c", "a/c"},
		{"a/../../b", "b"},
		{"..", ""},
		{"a//b/", "a/b"},
		{"Ünïcode Page", "Ünïcode-Page"},
		{"Mixed CASE", "Mixed-CASE"},
		{"a b/ c", "a-b/-c"},
		{"-a-", "-a-"},
		{"...", "..."},
		{"a/.../b", "a/.../b"},
		{`C:\x`, `C:\x`},
		{"/etc/passwd", "etc/passwd"},
		{"", ""},
		{"   ", "---"},
		{"///", ""},
		{".", ""},
		{"./.", ""},
		{"a\x00b", "ab"},
		{"a\x7fb", "ab"},
		{"a\tb\n", "ab"},
		{"a/.\x00./b", "b"},
		{"\x00..\x1f", ""},
		{"a\xffb", "a\uFFFDb"},
		{"a\u0085b", "a\u0085b"}, // not an ASCII control character
	}
	for _, c := range cases {
		if got := Slug(c.title); got != c.want {
			t.Errorf("Slug(%q) = %q; want %q", c.title, got, c.want)
		}
	}
}

func TestTitleOf(t *testing.T) {
	cases := []struct{ path, want string }{
		{"dir/My-Page.md", "My Page"},
		{"home.md", "home"},
		{"a-b/c-d.rdoc", "c d"},
		{"a.b.md", "a.b"},
		{"Ünïcode-Page.ADOC", "Ünïcode Page"},
		{"a.png", "a.png"},
		{"x/.md", ".md"},
		{"no-ext", "no ext"},
		{"dir/", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := TitleOf(c.path); got != c.want {
			t.Errorf("TitleOf(%q) = %q; want %q", c.path, got, c.want)
		}
	}
}

func TestValidateTitle(t *testing.T) {
	dirMsg := func(dir string) string {
		return `exceeds the limit of 255 bytes for directory name "` + dir + `"`
	}
	const titleMsg = "exceeds the limit of 245 bytes"
	e300 := strings.Repeat("é", 150) // 300 bytes
	u256 := strings.Repeat("ü", 128) // 256 bytes
	cases := []struct {
		title string
		want  []string
	}{
		{"Hello", nil},
		{"a/b/c", nil},
		{"", []string{"can't be blank"}},
		{"/", []string{"can't be blank"}},
		{"///", []string{"can't be blank"}},
		{".", []string{"can't be blank"}},
		{"../..", []string{"can't be blank"}},
		{"\x00\x1f", []string{"can't be blank"}},
		{strings.Repeat("a", 245), nil},
		{strings.Repeat("a", 246), []string{titleMsg}},
		{strings.Repeat("é", 122) + "a", nil},
		{strings.Repeat("é", 123), []string{titleMsg}},
		{e300, []string{titleMsg}},
		{strings.Repeat("d", 255) + "/x", nil},
		{strings.Repeat("d", 256) + "/x", []string{dirMsg(strings.Repeat("d", 256))}},
		{e300 + "/ok/" + u256 + "/" + strings.Repeat("x", 246), []string{dirMsg(e300), dirMsg(u256), titleMsg}},
		{"x" + strings.Repeat(" y", 128) + "/z", []string{dirMsg("x" + strings.Repeat("-y", 128))}},
		{"../" + e300 + "/../x", nil}, // the long component is cleaned away
	}
	for _, c := range cases {
		if got := ValidateTitle(c.title); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("ValidateTitle(%q) = %q; want %q", c.title, got, c.want)
		}
	}
}

func TestHumanSize(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 Bytes"},
		{1, "1 Byte"},
		{2, "2 Bytes"},
		{1000, "1000 Bytes"},
		{1023, "1023 Bytes"},
		{1024, "1 KB"},
		{1025, "1 KB"},
		{1152, "1.13 KB"}, // 1.125, half up
		{1536, "1.5 KB"},
		{2000, "1.95 KB"},
		{10239, "10 KB"}, // 9.999 rounds to 10.0
		{10240, "10 KB"},
		{102400, "100 KB"},
		{1023487, "999 KB"}, // 999.499
		// The rule: the largest unit u with n >= 1024^u, n / 1024^u rounded
		// to 3 significant digits, kept in that unit whatever it rounds to.
		{1023488, "1000 KB"}, // 999.5
		{1034240, "1010 KB"}, // 1010
		{1039360, "1020 KB"}, // 1015, half up
		{1047552, "1020 KB"}, // 1023
		{1048575, "1020 KB"}, // 1023.999
		{1048576, "1 MB"},
		{52428800, "50 MB"},
		{52428801, "50 MB"},
		{1073741824, "1 GB"},
		{1099511627776, "1 TB"},
		{1649267441664, "1.5 TB"},
		{1 << 50, "1 PB"},
		{1<<60 - 1, "1020 PB"},
		{1 << 60, "1 EB"},
		{math.MaxInt64, "8 EB"},
		{-1, "0 Bytes"},
		{math.MinInt64, "0 Bytes"},
	}
	for _, c := range cases {
		if got := HumanSize(c.n); got != c.want {
			t.Errorf("HumanSize(%d) = %q; want %q", c.n, got, c.want)
		}
	}
}

func TestAttachmentName(t *testing.T) {
	cases := []struct {
		name, want string
		ok         bool
	}{
		{"a.png", "a.png", true},
		{"dir/sub/a.png", "a.png", true},
		{`C:\Users\me\a b.png`, "a_b.png", true},
		{`a/b\c.txt`, "c.txt", true},
		{"x/../../etc/passwd", "passwd", true},
		{"héllo wörld.txt", "héllo_wörld.txt", true},
		{"日本語.md", "日本語.md", true},
		{"٣.txt", "٣.txt", true},
		{"¼.txt", "_.txt", true},
		{"a+b-c_d.e", "a+b-c_d.e", true},
		{"a<script>.html", "a_script_.html", true},
		{"a\u0301", "a_", true},
		{"a\x00b\x7f", "a_b_", true},
		{"a\xff\xfeb", "a__b", true},
		{"a\u202Egnp.exe", "a_gnp.exe", true},
		{".bashrc", ".bashrc", true},
		{" ", "_", true},
		{"", "", false},
		{".", "", false},
		{"..", "", false},
		{"...", "", false},
		{"dir/", "", false},
		{"/", "", false},
		{`a\..`, "", false},
		{strings.Repeat(".", 300), "", false},
		{strings.Repeat("a", 300) + ".png", strings.Repeat("a", 251) + ".png", true},
		{strings.Repeat("é", 200) + ".png", strings.Repeat("é", 125) + ".png", true},
		{strings.Repeat("é", 300), strings.Repeat("é", 127), true},
		{strings.Repeat("a", 255), strings.Repeat("a", 255), true},
		{"." + strings.Repeat("a", 300), "." + strings.Repeat("a", 254), true},
		{"a." + strings.Repeat("x", 300), "." + strings.Repeat("x", 254), true},
		{strings.Repeat("a", 300) + "." + strings.Repeat("é", 200), "." + strings.Repeat("é", 127), true},
	}
	for _, c := range cases {
		got, ok := AttachmentName(c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("AttachmentName(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestAttachmentMarkdown(t *testing.T) {
	const p = "uploads/0123abcd/f"
	cases := []struct{ name, want string }{
		{"a.png", "![a](" + p + ")"},
		{"A.JPEG", "![A](" + p + ")"},
		{"a.b.svg", "![a.b](" + p + ")"},
		{"movie.mp4", "![movie](" + p + ")"},
		{"clip.OGV", "![clip](" + p + ")"},
		{"song.m4a", "![song](" + p + ")"},
		{"doc.pdf", "[doc.pdf](" + p + ")"},
		{"a.png.txt", "[a.png.txt](" + p + ")"},
		{"noext", "[noext](" + p + ")"},
		{".png", "[.png](" + p + ")"},
		{`a[1]\.png`, `![a\[1\]\\](` + p + ")"},
		{"x].txt", `[x\].txt](` + p + ")"},
		{"", "[](" + p + ")"},
	}
	for _, c := range cases {
		if got := AttachmentMarkdown(c.name, p); got != c.want {
			t.Errorf("AttachmentMarkdown(%q, %q) = %q; want %q", c.name, p, got, c.want)
		}
	}
}
