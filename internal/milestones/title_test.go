package milestones

import (
	"testing"
	"unicode/utf8"
)

func TestSanitizeTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"v1.0", "v1.0"},
		{"  v1.0 \t", "v1.0"},
		{"<b>v1</b>", "v1"},
		{"<script>alert(1)</script>v2", "v2"},
		{"a &amp; b", "a & b"},
		{"1 < 2", "1 < 2"},
		{"&lt;b&gt;", "<b>"},
		{"Sprint \"7\" 'x'", "Sprint \"7\" 'x'"},
		{"<img src=x onerror=alert(1)>", ""},
		{"é ünï", "é ünï"},
	} {
		if got := SanitizeTitle(c.in); got != c.want {
			t.Errorf("SanitizeTitle(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func FuzzSanitizeTitle(f *testing.F) {
	for _, s := range []string{"v1", "<b>x</b>", "&amp;", "<script>x</script>", "a<", "<<>>", "&#0;", "\x00<p>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SanitizeTitle(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("SanitizeTitle(%q) = %q: not UTF-8", s, out)
		}
		if len(out) > 4*len(s)+4 {
			t.Fatalf("SanitizeTitle(%q) grew to %d bytes", s, len(out))
		}
	})
}
