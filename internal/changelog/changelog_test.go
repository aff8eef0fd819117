package changelog

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestPreviousTag(t *testing.T) {
	tags := []Tag{{"v1.0.0", "a"}, {"v1.1.0", "b"}, {"v2.0.0", "c"}, {"2.1.0-rc1", "d"}, {"release-3", "e"}, {"1.10.0", "f"}}
	cases := []struct{ version, want string }{
		{"2.1.0", "v2.0.0"},  // the pre-release of 2.1.0 does not count
		{"1.1.1", "v1.1.0"},  // patch release
		{"1.2.0", "v1.1.0"},  // numbers, not text: 1.10 > 1.2
		{"1.11.0", "1.10.0"}, // both forms of tag names
		{"v3.0.0-beta", "v2.0.0"},
		{"1.0.0", ""},
	}
	for _, c := range cases {
		v, ok := ParseVersion(c.version)
		if !ok {
			t.Fatalf("version %s", c.version)
		}
		tag, found := PreviousTag(v, tags, defaultTagRe)
		if (c.want == "") == found || tag.Name != c.want {
			t.Errorf("previous of %s = %q (%v), want %q", c.version, tag.Name, found, c.want)
		}
	}
	custom := regexp.MustCompile(`^release-(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)$`)
	if tag, ok := PreviousTag(Version{Major: "2", Minor: "0", Patch: "0"}, []Tag{{"release-1.9.0", "x"}, {"v1.9.9", "y"}}, custom); !ok || tag.Name != "release-1.9.0" {
		t.Errorf("custom regex: %v %v", tag, ok)
	}
	for _, bad := range []string{"1.0", "one", "1.0.0.0", "01.0.0", ""} {
		if _, ok := ParseVersion(bad); ok {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	ordered := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "99999999999999999999.0.0"}
	for i := 0; i+1 < len(ordered); i++ {
		a, _ := ParseVersion(ordered[i])
		b, _ := ParseVersion(ordered[i+1])
		if Compare(a, b) >= 0 || Compare(b, a) <= 0 {
			t.Errorf("%s should sort before %s", ordered[i], ordered[i+1])
		}
	}
}

func commit(id, msg string, trailers map[string][]string) Commit {
	title, _, _ := strings.Cut(msg, "\n")
	return Commit{ID: id, Title: title, Message: msg, Trailers: trailers}
}

func sha(c byte) string { return strings.Repeat(string(c), 40) }

func TestSelect(t *testing.T) {
	feat := map[string][]string{"Changelog": {"added"}}
	commits := []Commit{ // newest first
		commit(sha('f'), "Revert \"b\"\n\nThis reverts commit "+sha('b')+".", nil), // revert without trailer
		commit(sha('e'), "Revert \"c\"\n\nThis reverts commit "+sha('c')+".\n\nChangelog: fixed", // revert with trailer
			map[string][]string{"Changelog": {"fixed"}}),
		commit(sha('d'), "lowercase trailer", map[string][]string{"changelog": {"added"}}),
		commit(sha('c'), "c", feat),
		commit(sha('b'), "b", feat),
		commit(sha('a'), "a", feat),
		commit(sha('0'), "revert of a commit outside the range\n\nThis reverts commit "+sha('9')+".", nil),
	}
	var got []string
	for _, c := range Select(commits, "Changelog") {
		got = append(got, c.Title)
	}
	if strings.Join(got, "|") != `Revert "c"|a` {
		t.Errorf("selected %v", got)
	}
}

func TestRenderDefaultTemplate(t *testing.T) {
	mk := func(id, title, cat, author string, credit bool) Entry {
		return Entry{Commit: Commit{ID: id, Title: title}, Category: cat, CommitURL: "https://q.example/g/p/-/commit/" + id,
			CommitReference: "g/p@" + id, AuthorReference: author, Credit: credit}
	}
	entries := []Entry{
		mk(sha('3'), "Fix Z", "fixed", "", false),
		mk(sha('2'), "Add Y", "added", "@bob", false),
		mk(sha('1'), "Add X", "added", "@alice", true),
	}
	cats := Group(entries, []Mapping{{"added", "Features"}, {"removed", "Removals"}})
	date := time.Date(2021, 1, 5, 10, 0, 0, 0, time.UTC)
	got, err := Render("1.0.0", date, DefaultConfig(), cats)
	if err != nil {
		t.Fatal(err)
	}
	want := "## 1.0.0 (2021-01-05)\n\n" +
		"### Features (2 changes)\n\n" +
		"- [Add Y](https://q.example/g/p/-/commit/" + sha('2') + ")\n" +
		"- [Add X](https://q.example/g/p/-/commit/" + sha('1') + ") by @alice\n\n" +
		"### fixed (1 change)\n\n" +
		"- [Fix Z](https://q.example/g/p/-/commit/" + sha('3') + ")\n\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	empty, _ := Render("v2.0.0", date, Config{Template: DefaultTemplate, DateFormat: "%B %-d, %Y"}, nil)
	if empty != "## v2.0.0 (January 5, 2021)\n\nNo changes.\n\n" {
		t.Errorf("empty notes %q", empty)
	}
}

func TestInsert(t *testing.T) {
	section := func(v string) string { return "## " + v + " (2021-01-01)\n\n- " + v + "\n\n" }
	file := "# Changelog\n\n## 3.0.0 (2021-01-01)\n\n- 3\n\n## 1.0.0 (2020-01-01)\n\n- 1\n"
	cases := []struct {
		name, existing, version, want string
		changed                       bool
	}{
		{"empty file", "", "1.0.0", section("1.0.0"), true},
		{"between", file, "2.0.0", "# Changelog\n\n## 3.0.0 (2021-01-01)\n\n- 3\n\n" + section("2.0.0") + "## 1.0.0 (2020-01-01)\n\n- 1\n", true},
		{"newest on top", file, "4.0.0", "# Changelog\n\n" + section("4.0.0") + "## 3.0.0 (2021-01-01)\n\n- 3\n\n## 1.0.0 (2020-01-01)\n\n- 1\n", true},
		{"oldest at the end", file, "0.9.0", file + "\n" + strings.TrimSpace(section("0.9.0")) + "\n", true},
		{"title only", "# Changelog\n", "1.0.0", "# Changelog\n" + strings.TrimSpace(section("1.0.0")) + "\n", true},
		{"already there", file, "3.0.0", file, false},
	}
	for _, c := range cases {
		got, changed := Insert(c.existing, c.version, section(c.version))
		if got != c.want || changed != c.changed {
			t.Errorf("%s: changed %v\n%q\nwant\n%q", c.name, changed, got, c.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("date_format: '%d/%m/%Y'\ncategories:\n  feature: Features\n  bug: Bug fixes\ninclude_groups:\n  - g/sub\nunknown: 1\ntemplate: |\n  {% each categories %}{{ title }}{% end %}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DateFormat != "%d/%m/%Y" || len(cfg.Categories) != 2 || cfg.Categories[1] != (Mapping{"bug", "Bug fixes"}) ||
		cfg.IncludeGroups[0] != "g/sub" || !strings.HasPrefix(cfg.Template, "{% each") {
		t.Errorf("config %+v", cfg)
	}
	for src, msg := range map[string]string{
		"categories: [a, b]":     `The "categories" configuration key must be a Hash`,
		"template: '{% if x %}'": "Failed to parse the template: line 1:",
		"tag_regex: '('":         "The regular expression to use for finding the previous tag for a version is invalid",
		"date_format: [1]":       `"date_format"`,
		"a: [":                   "not valid YAML",
		"- just\n- a list":       "must be a Hash",
		"include_groups: g":      `"include_groups"`,
		"template: \"x\\n{% each a %}\\n{% else %}\"": "line 2",
	} {
		_, err := ParseConfig([]byte(src))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, msg) {
			t.Errorf("%q: %v, want %q", src, err, msg)
		}
	}
	if cfg, err := ParseConfig(nil); err != nil || cfg.Template != DefaultTemplate {
		t.Errorf("empty config %v", err)
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2021, 3, 7, 15, 4, 5, 6e6, time.UTC)
	for format, want := range map[string]string{
		"%Y-%m-%d":          "2021-03-07",
		"%-d %B %Y":         "7 March 2021",
		"%e %b %y":          " 7 Mar 21",
		"%A %a %j %u %w":    "Sunday Sun 066 7 0",
		"%H:%M:%S.%L %I%p":  "15:04:05.006 03PM",
		"%F %T %Z %z %% %q": "2021-03-07 15:04:05 UTC +0000 % %q",
	} {
		if got := Strftime(tm, format); got != want {
			t.Errorf("%q = %q, want %q", format, got, want)
		}
	}
}
