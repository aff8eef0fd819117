package ciconfig

import (
	"strings"
	"testing"
	"time"
)

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false}, // * stays in a segment
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"src/**/*.go", "src/x.go", true},
		{"src/**/*.go", "src/a/b/x.go", true},
		{"src/**/*.go", "lib/x.go", false},
		{"docs/**", "docs/a", true},
		{"docs/**", "docs/a/b", false}, // ** last is a *
		{"docs/*", "docs/.hidden", true},
		{".gitlab-ci.yml", ".gitlab-ci.yml", true},
		{"*", ".env", true}, // dots are not special
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file10.txt", false},
		{"[abc].txt", "b.txt", true},
		{"[!abc].txt", "b.txt", false},
		{"[^abc].txt", "d.txt", true},
		{"[a-c].txt", "c.txt", true},
		{"[a-c].txt", "d.txt", false},
		{"{src,lib}/*.go", "lib/x.go", true},
		{"{src,lib}/*.go", "cmd/x.go", false},
		{"*.{yml,yaml}", "a.yaml", true},
		{"{a,{b,c}}.txt", "c.txt", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{"[.txt", "[.txt", true}, // an unclosed class is a character
		{"Dockerfile", "dockerfile", false},
		{"ünï/*", "ünï/ç", true},
		{"?", "ç", true},
	} {
		if got := MatchGlob(c.glob, c.path); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v; want %v", c.glob, c.path, got, c.want)
		}
	}
}

// TestMatchGlob_hostile: globs made to blow up take no time.
func TestMatchGlob_hostile(t *testing.T) {
	path := strings.Repeat("a/", 60) + "b"
	for _, glob := range []string{
		strings.Repeat("**/", 60) + "c",
		strings.Repeat("{a,b}", 30),
		strings.Repeat("*a", 200) + "b",
		strings.Repeat("{", 2000) + strings.Repeat("}", 2000),
	} {
		start := time.Now()
		MatchGlob(glob, path)
		MatchGlob(glob, strings.Repeat("a", 4000))
		if d := time.Since(start); d > time.Second {
			t.Errorf("MatchGlob(%.30q…) took %v", glob, d)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"1h 30m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"3 hours", 3 * time.Hour},
		{"10m", 10 * time.Minute},
		{"90", 90 * time.Second},
		{"1.5 hours", 90 * time.Minute},
		{"1 week and 2 days", 9 * 24 * time.Hour},
		{"2 days, 3 hours", 51 * time.Hour},
		{"1 month", 30 * 24 * time.Hour},
		{"1 year", 8766 * time.Hour},
		{"day", 24 * time.Hour},
		{"1:30", 90 * time.Second},
		{"1:00:00", time.Hour},
		{"30 Minutes", 30 * time.Minute},
	} {
		if got, err := ParseDuration(c.in); err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "0 seconds", "forever", "1 fortnight", "1 2", "-"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v; want an error", in, d)
		}
	}
}
