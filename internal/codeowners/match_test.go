package codeowners

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		// Anchored at the root.
		{"/README.md", []string{"README.md", "/README.md"}, []string{"docs/README.md", "README.mdx", "README"}},
		{"/docs/README.md", []string{"docs/README.md"}, []string{"a/docs/README.md", "docs/api/README.md"}},
		// Unanchored: at any depth, also with a slash inside.
		{"README.md", []string{"README.md", "a/README.md", "a/b/c/README.md"}, []string{"README.mdx", "xREADME.md"}},
		{"internal/README.md", []string{"internal/README.md", "docs/internal/README.md"}, []string{"internal/x/README.md", "xinternal/README.md"}},
		{"*.rb", []string{"a.rb", "app/models/user.rb", ".rb"}, []string{"a.rbx", "a.rb/x", "rb"}},
		{"*", []string{"a", "a/b/c", ".gitignore"}, nil},
		// Trailing slash: a directory and all below it, not a file.
		{"/docs/", []string{"docs/a.md", "docs/api/v4/a.md"}, []string{"docs", "a/docs/x.md", "docsx/a.md"}},
		{"docs/", []string{"docs/a.md", "x/docs/a.md", "x/docs/y/z"}, []string{"docs", "x/docs", "xdocs/a"}},
		{"/", []string{"a", "a/b"}, nil},
		// Without wildcards: the path named or anything below it.
		{"docs", []string{"docs", "docs/a.md", "x/docs/a/b"}, []string{"docsx", "xdocs/a"}},
		{"/app/models", []string{"app/models", "app/models/user.rb"}, []string{"x/app/models/user.rb", "app/modelsx"}},
		// * stays within a segment; wildcard patterns do not extend below.
		{"/docs/*", []string{"docs/a", "docs/.hidden"}, []string{"docs/a/b", "docs"}},
		{"/docs/*.md", []string{"docs/a.md", "docs/.md"}, []string{"docs/a/b.md", "a/docs/a.md"}},
		{"/docs/*/README.md", []string{"docs/api/README.md"}, []string{"docs/README.md", "docs/a/b/README.md"}},
		{"/docs/*spec*", []string{"docs/qa_specs.rb", "docs/spec", "docs/runtime.spec"}, []string{"docs/x/spec"}},
		{"/docs/index.*", []string{"docs/index.md", "docs/index."}, []string{"docs/index", "docs/index/x"}},
		// ** crosses directories.
		{"/docs/**/index.md", []string{"docs/index.md", "docs/api/index.md", "docs/api/graphql/index.md"}, []string{"index.md", "docs/xindex.md"}},
		{"**/*.rb", []string{"a.rb", "config/database.rb", "app/controllers/users/stars_controller.rb"}, []string{"a.rbs"}},
		{"/src/**/java/", []string{"src/java/A.java", "src/main/java/x/A.java"}, []string{"src/java", "src/javax/A"}},
		{"/docs/**", []string{"docs/a", "docs/a/b/c"}, []string{"docs", "a/docs/b"}},
		{"**", []string{"a", "a/b"}, nil},
		{"/a**b", []string{"ab", "axxb"}, []string{"ax/b"}},
		// ? and classes never match /.
		{"/a?c", []string{"abc", "a.c"}, []string{"ac", "a/c", "abbc"}},
		{"/[abc].txt", []string{"a.txt", "c.txt"}, []string{"d.txt", "[abc].txt"}},
		{"/[!abc].txt", []string{"d.txt", "..txt"}, []string{"a.txt"}},
		{"/a[!x]b", []string{"acb"}, []string{"a/b", "axb"}},
		{"/[^a-c]x", []string{"dx"}, []string{"bx"}},
		{"/a[/]b", nil, []string{"a/b"}},
		{"/[]]x", []string{"]x"}, []string{"ax"}},
		{"/[a", []string{"[a"}, []string{"a"}},
		// Dotfiles are not special.
		{".gitlab-ci.yml", []string{".gitlab-ci.yml", "sub/.gitlab-ci.yml"}, []string{"gitlab-ci.yml"}},
		{"/.github/", []string{".github/CODEOWNERS"}, []string{"github/x"}},
		{"/*.yml", []string{".gitlab-ci.yml", "a.yml"}, []string{"a/b.yml"}},
		// Escapes: spaces, #, wildcards made literal.
		{`path\ with\ spaces/*.md`, []string{"path with spaces/a.md", "x/path with spaces/a.md"}, []string{"path/a.md"}},
		{`\#notes`, []string{"#notes", "a/#notes"}, []string{"notes"}},
		{`/a\*b`, []string{"a*b", "a*b/c"}, []string{"axb"}},
		{`/a\`, []string{`a\`}, []string{"a"}},
		// Case-sensitive; non-ASCII characters are one character.
		{"/Makefile", []string{"Makefile"}, []string{"makefile"}},
		{"/d?c/é?", []string{"doc/éa", "dxc/éé"}, []string{"doc/e"}},
		// Empty patterns and paths match nothing.
		{"", nil, []string{"a", ""}},
		{"*", nil, []string{"", "/"}},
	} {
		for _, p := range c.yes {
			if !Match(c.pattern, p) {
				t.Errorf("Match(%q, %q) = false; want true", c.pattern, p)
			}
		}
		for _, p := range c.no {
			if Match(c.pattern, p) {
				t.Errorf("Match(%q, %q) = true; want false", c.pattern, p)
			}
		}
	}
}

// TestMatch_hostile checks patterns that make backtracking matchers
// exponential stay fast.
func TestMatch_hostile(t *testing.T) {
	pattern := strings.Repeat("*a", 50) + "b"
	path := strings.Repeat("a", 4000)
	if Match(pattern, path) {
		t.Errorf("Match(*a…b, a…) = true")
	}
	pattern = "/" + strings.Repeat("*a", 1024)
	path = strings.Repeat("a", 4096) + "b"
	if Match(pattern, path) {
		t.Errorf("Match(/*a…, a…b) = true")
	}
	pattern = strings.Repeat("**/", 200) + "x"
	path = strings.Repeat("d/", 2000) + "y"
	if Match(pattern, path) {
		t.Errorf("Match(**/…x, d/…y) = true")
	}
}
