package repofiles

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	for in, ok := range map[string]bool{
		"README.md": true, "a/b/c.txt": true, "dir/": true, "naïve café.txt": true, ".gitignore": true, "a/.hidden/b": true,
		"": false, "/etc/passwd": false, "../x": false, "a/../b": false, "a/./b": false, "a//b": false, "..": false, ".": false,
		"a\x00b": false, "a\nb": false,
	} {
		_, err := CleanPath(in)
		if (err == nil) != ok {
			t.Errorf("CleanPath(%q) = %v; want ok=%v", in, err, ok)
		}
	}
}

// FuzzCleanPath decodes a URL-encoded file path as the router does and
// validates it: nothing accepted may leave the repository root.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"README.md", "a%2Fb", "%2e%2e%2fetc", "..%2F..%2Fx", "%2Fetc%2Fpasswd", "a%00b", "dir%2F", "%252e%252e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		decoded, err := url.PathUnescape(escaped)
		if err != nil {
			return
		}
		clean, err := CleanPath(decoded)
		if err != nil {
			return
		}
		joined := path.Join("/repo", clean)
		if !strings.HasPrefix(joined, "/repo/") {
			t.Fatalf("%q escapes the repository as %q", decoded, joined)
		}
		if clean != path.Clean(clean) {
			t.Fatalf("%q accepted as %q, which is not clean", decoded, clean)
		}
	})
}
