package wikis

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzSlug: a slug is a clean relative path that stays under the wiki's
// root, and Slug is idempotent; ValidateTitle never panics.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "./.", "...", "/", "//", "/etc/passwd", "a/../../b", "../x", "/a/./b/../c", "a//b/",
		"Hello World", "a\x00b", "a\x7f/\x1f..", "C:\\x", "..\\..\\x", "Ünïcode Page", "日本語/ページ", "a\xffb", "\xc3",
		" / / ", "a/ . /b", "a/.\x00./b", "\u00a0..\u00a0", strings.Repeat("é", 150), strings.Repeat("a/", 200),
		strings.Repeat("x", 300) + "/" + strings.Repeat("y", 300), strings.Repeat("../", 50) + "z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slug := Slug(s)
		if strings.HasPrefix(slug, "/") || strings.HasSuffix(slug, "/") {
			t.Fatalf("Slug(%q) = %q; want no leading or trailing /", s, slug)
		}
		if !utf8.ValidString(slug) {
			t.Fatalf("Slug(%q) = %q; want valid UTF-8", s, slug)
		}
		if strings.IndexFunc(slug, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			t.Fatalf("Slug(%q) = %q; want no control characters", s, slug)
		}
		if strings.Contains(slug, " ") {
			t.Fatalf("Slug(%q) = %q; want no spaces", s, slug)
		}
		if slug != "" {
			for _, c := range strings.Split(slug, "/") {
				if c == "" || c == "." || c == ".." {
					t.Fatalf("Slug(%q) = %q; want no %q component", s, slug, c)
				}
			}
			if got := path.Clean("/" + slug); got != "/"+slug {
				t.Fatalf("path.Clean(%q) = %q; want %q", "/"+slug, got, "/"+slug)
			}
			if got := filepath.Join("/root", slug); !strings.HasPrefix(got, "/root/") {
				t.Fatalf("filepath.Join(/root, %q) = %q; want it under /root/", slug, got)
			}
		}
		if again := Slug(slug); again != slug {
			t.Fatalf("Slug(%q) = %q; want %q (Slug(%q))", slug, again, slug, s)
		}
		if msgs := ValidateTitle(s); msgs != nil && len(msgs) == 0 {
			t.Fatalf("ValidateTitle(%q) = empty non-nil slice; want nil or messages", s)
		}
		if msgs := ValidateTitle(NormalizeTitle(s)); msgs != nil && len(msgs) == 0 {
			t.Fatalf("ValidateTitle(%q) = empty non-nil slice; want nil or messages", NormalizeTitle(s))
		}
		if n := NormalizeTitle(s); NormalizeTitle(n) != n {
			t.Fatalf("NormalizeTitle(%q) = %q; want it unchanged", n, NormalizeTitle(n))
		}
	})
}

// FuzzAttachmentName: a clean name is one short, valid UTF-8 path segment
// with no separator, white space or control character, and not all dots.
func FuzzAttachmentName(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "...", "a.png", "dir/a.png", `C:\Users\me\a b.png`, "../../etc/passwd", "a\x00b", "a\xffb",
		"héllo wörld.txt", "日本語.md", "a\u202Egnp.exe", ".bashrc", "a." + strings.Repeat("x", 300),
		strings.Repeat("é", 200) + ".png", strings.Repeat("a", 300) + "." + strings.Repeat("é", 200), strings.Repeat(".", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean, ok := AttachmentName(s)
		if !ok {
			if clean != "" {
				t.Fatalf("AttachmentName(%q) = %q, false; want \"\"", s, clean)
			}
			return
		}
		if clean == "" || strings.Trim(clean, ".") == "" {
			t.Fatalf("AttachmentName(%q) = %q; want a name that is not all dots", s, clean)
		}
		if len(clean) > MaxAttachmentNameBytes {
			t.Fatalf("AttachmentName(%q) = %q (%d bytes); want at most %d", s, clean, len(clean), MaxAttachmentNameBytes)
		}
		if !utf8.ValidString(clean) {
			t.Fatalf("AttachmentName(%q) = %q; want valid UTF-8", s, clean)
		}
		for _, r := range clean {
			if r == '/' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
				t.Fatalf("AttachmentName(%q) = %q; want no %q", s, clean, r)
			}
		}
		if again, ok := AttachmentName(clean); !ok || again != clean {
			t.Fatalf("AttachmentName(%q) = %q, %v; want %q, true", clean, again, ok, clean)
		}
	})
}
