package changelog

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"quarry/internal/changelog/tmpl"
)

func TestParseConfig_hostile(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
date_format: "%d %B %Y"
template: "{% each categories %}{{ title }}{% end %}"
categories:
  feature: Features
  bug: Bug fixes
tag_regex: '^release-(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)$'
include_groups:
  - g/sub
other: ignored
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DateFormat != "%d %B %Y" || cfg.Template != "{% each categories %}{{ title }}{% end %}" ||
		fmt.Sprint(cfg.Categories) != "[{feature Features} {bug Bug fixes}]" || !cfg.TagRegex.MatchString("release-1.2.3") ||
		fmt.Sprint(cfg.IncludeGroups) != "[g/sub]" {
		t.Errorf("parsed %+v", cfg)
	}
	for _, c := range []struct{ src, msg string }{
		{"date_format: [x]", `The "date_format" configuration key must be a String`},
		{"- a", "The changelog configuration must be a Hash"},
		{"categories: [a]", `The "categories" configuration key must be a Hash`},
		{"include_groups: a", `The "include_groups" configuration key must be an Array`},
		{"tag_regex: '('", "The regular expression to use for finding the previous tag for a version is invalid"},
		{"template: '{% if %}'", "Failed to parse the template"},
		{"a: [", "The changelog configuration is not valid YAML"},
		{"x: &a Features\ncategories:\n  feature: *a", "aliases are not allowed"},
		{"c: &y [*y]", "aliases are not allowed"}, // an anchor enclosing itself
		{"base: &b {date_format: x}\n<<: *b", "aliases are not allowed"},
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "not valid YAML"},
		{"a: '" + strings.Repeat("x", MaxConfigSize) + "'", "too large"},
	} {
		_, err := ParseConfig([]byte(c.src))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, c.msg) {
			short := c.src
			if len(short) > 60 {
				short = short[:60] + "…"
			}
			t.Errorf("ParseConfig(%q) = %v; want a ConfigError containing %q", short, err, c.msg)
		}
	}
}

// TestParseConfig_aliasBomb: a "billion laughs" document (10^9 strings
// when expanded) is refused after a walk of its few hundred nodes, in
// little memory.
func TestParseConfig_aliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 {a: lol, b: lol, c: lol, d: lol, e: lol, f: lol, g: lol, h: lol, i: lol, j: lol}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&b, "*l%d, ", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("categories: *l0\ninclude_groups: *l9\ntemplate: *l9\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := ParseConfig([]byte(b.String()))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "aliases are not allowed") {
		t.Fatalf("ParseConfig = %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 || took > 5*time.Second {
		t.Errorf("allocated %d KiB in %v for %d bytes of YAML", n>>10, took, b.Len())
	}
}

// FuzzParseConfig: any bytes parse or fail with a ConfigError; what is
// read is never more than the input holds (no expansion of any kind); a
// template read parses; a date format read formats within bounds.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("date_format: '%Y'\ncategories:\n  a: A\n  b: B\ninclude_groups: [g, h/i]\ntag_regex: '^v(?P<major>\\d+)'\n"))
	f.Add([]byte("template: |\n  {% each categories %}\n  {{ title }}\n  {% end %}\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\ncategories: *b\n"))
	f.Add([]byte("categories: {\"\\L\\L\\L\": \"\\P\\P\", ? k}\ninclude_groups: [\"\\N\"]\n"))
	f.Add([]byte("categories:\ncategories: {a: b}\n---\nx: y\n"))
	f.Add([]byte("{{{{{{{{[[[[[[[["))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Msg == "" {
				t.Fatalf("ParseConfig(%q) = %T %v", data, err, err)
			}
			return
		}
		n, size := len(cfg.Categories)+len(cfg.IncludeGroups), 0
		for _, m := range cfg.Categories {
			size += len(m.Name) + len(m.Title)
		}
		for _, g := range cfg.IncludeGroups {
			size += len(g)
		}
		// YAML escapes such as "\L" (2 bytes) give 3 bytes: at most 3/2.
		if n > len(data) || size > 2*len(data) {
			t.Fatalf("ParseConfig(%q) read %d entries, %d bytes from %d", data, n, size, len(data))
		}
		if cfg.TagRegex == nil {
			t.Fatalf("ParseConfig(%q) left no tag regex", data)
		}
		if _, err := tmpl.Parse(cfg.Template); err != nil {
			t.Fatalf("ParseConfig(%q) kept a template that does not parse: %v", data, err)
		}
		if out := Strftime(time.Unix(1700000000, 0).UTC(), cfg.DateFormat); len(out) > 10*len(cfg.DateFormat) {
			t.Fatalf("date format %q gave %d bytes", cfg.DateFormat, len(out))
		}
	})
}
