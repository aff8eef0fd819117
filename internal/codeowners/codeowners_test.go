package codeowners

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	def := func(entries ...Entry) Section {
		return Section{Name: DefaultSection, ApprovalsRequired: 1, Entries: entries}
	}
	e := func(line int, pattern string, owners ...string) Entry {
		return Entry{Pattern: pattern, Owners: owners, Line: line}
	}
	for _, c := range []struct {
		name string
		in   string
		want []Section
		errs []string // "line N: part of the message", in order
	}{
		{
			name: "default section",
			in:   "* @a\n*.rb @b @c\n",
			want: []Section{def(e(1, "*", "@a"), e(2, "*.rb", "@b", "@c"))},
		},
		{
			name: "comments, blank lines, CRLF, BOM, indentation",
			in:   "\xef\xbb\xbf# owners\r\n\r\n   \t\n  # indented comment @nobody\r\n\t/a   @x\t@y \r\n",
			want: []Section{def(e(5, "/a", "@x", "@y"))},
		},
		{
			name: "empty file",
			in:   "",
		},
		{
			name: "owner kinds, duplicates dropped case-insensitively",
			in:   "x @user @group/sub/team me@example.com @@maintainer @User ME@example.com\n",
			want: []Section{def(e(1, "x", "@user", "@group/sub/team", "me@example.com", "@@maintainer"))},
		},
		{
			name: "sections: optional, counts, merged by name, default owners",
			in: "* @all\n" +
				"[Docs]\ndocs/ @d\n" +
				"^[DB][2] @db @db\nmodel/\nschema.rb @x\n" +
				"[docs]\nREADME.md @r\n" +
				"^[Opt]\n*.go @g\n" +
				"[Two][3]\n",
			want: []Section{
				def(e(1, "*", "@all")),
				{Name: "Docs", ApprovalsRequired: 1, Entries: []Entry{e(3, "docs/", "@d"), e(8, "README.md", "@r")}},
				{Name: "DB", Optional: true, ApprovalsRequired: 2, DefaultOwners: []string{"@db"},
					Entries: []Entry{e(5, "model/", "@db"), e(6, "schema.rb", "@x")}},
				{Name: "Opt", Optional: true, ApprovalsRequired: 1, Entries: []Entry{e(10, "*.go", "@g")}},
				{Name: "Two", ApprovalsRequired: 3},
			},
			errs: []string{`line 4: optional section "DB" requires no approvals`},
		},
		{
			name: "a required heading makes a merged section required; the largest count wins",
			in:   "^[S]\na @x\n[s][2]\nb @y\n^[S][3]\n",
			want: []Section{{Name: "S", ApprovalsRequired: 3, Entries: []Entry{e(2, "a", "@x"), e(4, "b", "@y")}}},
			errs: []string{`line 5: optional section "S" requires no approvals`},
		},
		{
			name: "default owners belong to their heading",
			in:   "[D] @a\nx\n[d] @b @a\ny\nz @c\n[E]\nw\n",
			want: []Section{
				{Name: "D", ApprovalsRequired: 1, DefaultOwners: []string{"@a", "@b"},
					Entries: []Entry{e(2, "x", "@a"), e(4, "y", "@b", "@a"), e(5, "z", "@c")}},
				{Name: "E", ApprovalsRequired: 1, Entries: []Entry{e(7, "w")}},
			},
		},
		{
			name: "a pattern without owners outside a defaulted section clears ownership",
			in:   "* @x\n/vendor/\n",
			want: []Section{def(e(1, "*", "@x"), e(2, "/vendor/"))},
		},
		{
			name: "a heading named like the default section joins it",
			in:   "a @x\n[CodeOwners][2] @y\nb\n",
			want: []Section{{Name: DefaultSection, ApprovalsRequired: 2, DefaultOwners: []string{"@y"},
				Entries: []Entry{e(1, "a", "@x"), e(3, "b", "@y")}}},
		},
		{
			name: "section names keep inner spaces and brackets",
			in:   "[ Section name ]\na @x\n[a[b]\nb @y\n",
			want: []Section{
				{Name: "Section name", ApprovalsRequired: 1, Entries: []Entry{e(2, "a", "@x")}},
				{Name: "a[b", ApprovalsRequired: 1, Entries: []Entry{e(4, "b", "@y")}},
			},
		},
		{
			name: "escapes stay in the pattern",
			in:   "path\\ with\\ spaces/ @a\n\\#file @b\ntrailing\\  @c\n\\[not-a-section] @d\n^x @e\n",
			want: []Section{def(
				e(1, `path\ with\ spaces/`, "@a"), e(2, `\#file`, "@b"), e(3, `trailing\ `, "@c"),
				e(4, `\[not-a-section]`, "@d"), e(5, "^x", "@e"))},
		},
		{
			name: "malformed owners are dropped, inline comments included",
			in:   "x @a bob # note\ny bob\n[S] @ok not-an-owner\nz\n",
			want: []Section{
				def(e(1, "x", "@a")),
				{Name: "S", ApprovalsRequired: 1, DefaultOwners: []string{"@ok"}, Entries: []Entry{e(4, "z", "@ok")}},
			},
			errs: []string{
				`line 1: malformed owners ignored: "bob" "#" "note"`,
				`line 2: malformed owners ignored: "bob"`,
				`line 2: entry "y" has no well-formed owner; line ignored`,
				`line 3: malformed owners ignored: "not-an-owner"`,
			},
		},
		{
			name: "malformed owner syntax",
			in:   "x @ @-a @a/ @a//b @@ @@guest a@ @b@c a@b. a@@b @a,\n",
			errs: []string{
				`line 1: malformed owners ignored: "@" "@-a" "@a/" "@a//b" "@@" and 6 more`,
				`line 1: entry "x" has no well-formed owner`,
			},
		},
		{
			name: "malformed headings",
			in: "[Docs\nx @a\n[]\ny @b\n^[ ] @c\n[S][x]\nz @c\n[T][0]\n[U][99999999999999999999999]\n[V][2\n" +
				"[W][]\n[X]junk\n",
			want: []Section{
				def(e(2, "x", "@a"), e(4, "y", "@b")),
				{Name: "S", ApprovalsRequired: 1, Entries: []Entry{e(7, "z", "@c")}},
				{Name: "T", ApprovalsRequired: 1},
				{Name: "U", ApprovalsRequired: 1000},
				{Name: "W", ApprovalsRequired: 1},
				{Name: "X", ApprovalsRequired: 1},
			},
			errs: []string{
				`line 1: section heading "[Docs" has no closing ]`,
				`line 3: section heading without a name`,
				`line 5: section heading without a name`,
				`line 6: approvals count "x" of section "S" is not a number; 1 assumed`,
				`line 8: approvals count of section "T" is not positive; 1 assumed`,
				`line 9: approvals count of section "U" is above 1000; 1000 assumed`,
				`line 10: approvals count of section "V" has no closing ]`,
				`line 11: approvals count of section "W" is not positive`,
				`line 12: malformed owners ignored: "junk"`,
			},
		},
		{
			name: "exclusions are not supported",
			in:   "* @a\n!*.lock\n",
			want: []Section{def(e(1, "*", "@a"))},
			errs: []string{`line 2: exclusion "!*.lock" is not supported`},
		},
		{
			name: "long lines and patterns are skipped",
			in:   "/" + strings.Repeat("a", 5000) + " @x\n" + "b @" + strings.Repeat("c", 17000) + "\nc @y\n",
			want: []Section{def(e(3, "c", "@y"))},
			errs: []string{"line 1: pattern longer than 4096 bytes", "line 2: line longer than 16384 bytes"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, errs := Parse([]byte(c.in))
			if !reflect.DeepEqual(f.Sections, c.want) {
				t.Errorf("sections\n got %+v\nwant %+v", f.Sections, c.want)
			}
			if len(errs) != len(c.errs) {
				t.Errorf("got %d errors %v; want %d %v", len(errs), errs, len(c.errs), c.errs)
			}
			for i := 0; i < min(len(errs), len(c.errs)); i++ {
				var le *LineError
				if !errors.As(errs[i], &le) {
					t.Errorf("error %d is %T; want *LineError", i, errs[i])
				}
				if !strings.HasPrefix(errs[i].Error(), c.errs[i]) {
					t.Errorf("error %d: got %q; want it to start with %q", i, errs[i], c.errs[i])
				}
			}
		})
	}
}

// TestParse_limits: a file at a bound parses; one past it is invalid as a
// whole (no sections, one *LimitError naming the bound).
func TestParse_limits(t *testing.T) {
	entries := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "/f%d @u\n", i)
		}
		return b.String()
	}
	sections := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "[S%d]\n/f @u\n", i)
		}
		return b.String()
	}
	// sized is a valid file of exactly n bytes: one entry, then comments.
	sized := func(n int) string {
		head := "/only @u\n"
		var b strings.Builder
		b.WriteString(head)
		for b.Len() < n {
			line := "# " + strings.Repeat("c", min(99, n-b.Len()-3)) + "\n"
			if n-b.Len() < 3 {
				line = strings.Repeat("\n", n-b.Len())
			}
			b.WriteString(line)
		}
		return b.String()
	}
	for _, c := range []struct {
		name     string
		in       string
		sections int    // when valid
		entries  int    // when valid
		limit    string // the *LimitError, when invalid
	}{
		{name: "entries at the bound", in: entries(MaxEntries), sections: 1, entries: MaxEntries},
		{name: "one entry too many", in: entries(MaxEntries + 1),
			limit: fmt.Sprintf("line %d: more than 10000 entries; the file is ignored", MaxEntries+1)},
		{name: "entries far past the bound", in: entries(3 * MaxEntries),
			limit: fmt.Sprintf("line %d: more than 10000 entries; the file is ignored", MaxEntries+1)},
		{name: "sections at the bound", in: sections(MaxSections), sections: MaxSections, entries: MaxSections},
		{name: "one section too many", in: sections(MaxSections + 1),
			limit: fmt.Sprintf("line %d: more than 1000 sections; the file is ignored", 2*MaxSections+1)},
		{name: "a heading repeated does not count again", in: strings.Repeat("[S]\n/f @u\n", MaxSections+5), sections: 1,
			entries: MaxSections + 5},
		{name: "size at the bound", in: sized(MaxFileBytes), sections: 1, entries: 1},
		{name: "one byte too many", in: sized(MaxFileBytes + 1), limit: "file of 1048577 bytes is larger than 1048576 bytes; the file is ignored"},
		{name: "too large and too many entries: the size is reported", in: entries(MaxEntries) + sized(MaxFileBytes),
			limit: fmt.Sprintf("file of %d bytes is larger than 1048576 bytes; the file is ignored", len(entries(MaxEntries))+MaxFileBytes)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.limit == "" && len(c.in) > MaxFileBytes || strings.HasPrefix(c.name, "size") && len(c.in) != MaxFileBytes {
				t.Fatalf("test input of %d bytes", len(c.in))
			}
			f, errs := Parse([]byte(c.in))
			if c.limit != "" {
				var le *LimitError
				if len(f.Sections) != 0 || len(errs) != 1 || !errors.As(errs[0], &le) || le.Error() != c.limit {
					t.Errorf("got %d sections, errors %v; want none and %q", len(f.Sections), errs, c.limit)
				}
				return
			}
			n := 0
			for _, s := range f.Sections {
				n += len(s.Entries)
			}
			if len(errs) != 0 || len(f.Sections) != c.sections || n != c.entries {
				t.Errorf("got %d sections, %d entries, errors %v; want %d, %d and none", len(f.Sections), n, errs, c.sections, c.entries)
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		_, errs := Parse([]byte(strings.Repeat("!x\n", 5000)))
		if len(errs) != maxErrors+1 || !strings.Contains(errs[maxErrors].Error(), "too many errors") {
			t.Errorf("got %d errors, last %v; want %d then a last one", len(errs), errs[len(errs)-1], maxErrors)
		}
	})
}

func TestCheckSize(t *testing.T) {
	for _, c := range []struct {
		size int64
		ok   bool
	}{{0, true}, {1, true}, {MaxFileBytes - 1, true}, {MaxFileBytes, true}, {MaxFileBytes + 1, false}, {6 << 20, false}, {1 << 40, false}} {
		err := CheckSize(c.size)
		var le *LimitError
		if (err == nil) != c.ok || err != nil && (!errors.As(err, &le) || !strings.Contains(err.Error(), "larger than 1048576 bytes")) {
			t.Errorf("CheckSize(%d) = %v; want ok %v", c.size, err, c.ok)
		}
	}
}

// TestParse_hostileOwners: owners repeated or many on a line, and long
// default-owner lists shared by many entries, parse in linear time and
// memory (deduplication by map, not by comparison with each owner).
func TestParse_hostileOwners(t *testing.T) {
	var b strings.Builder
	b.WriteString("[S]")
	for i := 0; b.Len() < 15<<10; i++ {
		fmt.Fprintf(&b, " @o%d", i)
	}
	b.WriteString("\n")
	for i := 0; i < MaxEntries-1; i++ {
		b.WriteString("x\n[S] @o1\n")
	}
	f, errs := Parse([]byte(b.String()))
	if len(errs) != 0 || len(f.Sections) != 1 || len(f.Sections[0].Entries) != MaxEntries-1 {
		t.Fatalf("got %d sections, errors %v", len(f.Sections), errs)
	}
	if n := len(f.Sections[0].DefaultOwners); n < 2000 {
		t.Errorf("%d default owners", n)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		owner, kind, name string
	}{
		{"@alice", KindName, "alice"},
		{"@mygroup", KindName, "mygroup"},
		{"@a.b-c_d", KindName, "a.b-c_d"},
		{"@_x", KindName, "_x"},
		{"@group/sub", KindGroup, "group/sub"},
		{"@gitlab-org/maintainers/group-name", KindGroup, "gitlab-org/maintainers/group-name"},
		{"jane.doe@example.com", KindEmail, "jane.doe@example.com"},
		{"Jane@Example.COM", KindEmail, "Jane@Example.COM"},
		{"@@developer", KindRole, "developer"},
		{"@@Maintainers", KindRole, "maintainer"},
		{"@@owners", KindRole, "owner"},
		{"@@guest", "", ""},
		{"@@", "", ""},
		{"@", "", ""},
		{"@-x", "", ""},
		{"@.x", "", ""},
		{"@a/", "", ""},
		{"@/a", "", ""},
		{"@a//b", "", ""},
		{"@a,", "", ""},
		{"@a b", "", ""},
		{"@héllo", "", ""},
		{"alice", "", ""},
		{"#", "", ""},
		{"", "", ""},
		{"a@", "", ""},
		{"@b@c", "", ""},
		{"a@b@c", "", ""},
		{"a@b.", "", ""},
		{"a\\ b@c", "", ""},
		{strings.Repeat("x", 101) + "@a", "", ""},
	} {
		kind, name := Classify(c.owner)
		if kind != c.kind || name != c.name {
			t.Errorf("Classify(%q) = %q, %q; want %q, %q", c.owner, kind, name, c.kind, c.name)
		}
	}
}

// TestParse_packageExample: the file in the package comment parses cleanly.
func TestParse_packageExample(t *testing.T) {
	in := "# A comment: # only starts one at the start of a line.\n* @default-owner\n/docs/ @docs-team docs@example.com\n" +
		"path\\ with\\ spaces/ @group/subgroup\n\\#file_with_hash @user @@maintainer\n\n" +
		"# A section requiring 2 approvals, with default owners:\n[Documentation][2] @docs-team\n" +
		"# Owned by the heading's default owners:\ndocs/\n# An optional section:\n^[Database] @db-team\n"
	f, errs := Parse([]byte(in))
	if len(errs) != 0 || len(f.Sections) != 3 || len(f.Sections[0].Entries) != 4 {
		t.Errorf("got %+v, errors %v", f.Sections, errs)
	}
	got := f.OwnersFor([]string{"docs/index.md", "#file_with_hash"})
	if len(got) != 2 || got[1].Section != "Documentation" || got[1].ApprovalsRequired != 2 ||
		!reflect.DeepEqual(got[0].Owners, []string{"@docs-team", "docs@example.com", "@user", "@@maintainer"}) {
		t.Errorf("OwnersFor: %+v", got)
	}
}
