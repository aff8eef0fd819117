package codeowners

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestFile_OwnersFor(t *testing.T) {
	for _, c := range []struct {
		name  string
		file  string
		paths []string
		want  []SectionOwners
	}{
		{
			name:  "last match wins within a section",
			file:  "*.md @doc-team\nterms.md @legal-team\n",
			paths: []string{"terms.md"},
			want:  []SectionOwners{{Section: DefaultSection, ApprovalsRequired: 1, Owners: []string{"@legal-team"}, Patterns: []string{"terms.md"}}},
		},
		{
			name:  "sections are independent (GitLab's README example)",
			file:  "* @admin\n\n[README Owners]\nREADME.md @user1 @user2\ninternal/README.md @user4\n\n[README other owners]\nREADME.md @user3\n",
			paths: []string{"internal/README.md"},
			want: []SectionOwners{
				{Section: DefaultSection, ApprovalsRequired: 1, Owners: []string{"@admin"}, Patterns: []string{"*"}},
				{Section: "README Owners", ApprovalsRequired: 1, Owners: []string{"@user4"}, Patterns: []string{"internal/README.md"}},
				{Section: "README other owners", ApprovalsRequired: 1, Owners: []string{"@user3"}, Patterns: []string{"README.md"}},
			},
		},
		{
			name:  "owners of several paths, deduplicated in first-seen order",
			file:  "*.go @go @lead\n/docs/ @docs @LEAD\n/docs/api/ @api\n",
			paths: []string{"main.go", "docs/a.md", "docs/api/x.md", "docs/b.md", "other.txt"},
			want: []SectionOwners{{Section: DefaultSection, ApprovalsRequired: 1,
				Owners: []string{"@go", "@lead", "@docs", "@api"}, Patterns: []string{"*.go", "/docs/", "/docs/api/"}}},
		},
		{
			name:  "sections with no matching path are left out",
			file:  "[Docs]\ndocs/ @docs\n[Code][2]\n*.go @coowner\n",
			paths: []string{"docs/guide.md"},
			want:  []SectionOwners{{Section: "Docs", ApprovalsRequired: 1, Owners: []string{"@docs"}, Patterns: []string{"docs/"}}},
		},
		{
			name:  "nothing matches",
			file:  "[Docs]\ndocs/ @docs\n",
			paths: []string{"NOTES.txt"},
		},
		{
			name:  "no paths",
			file:  "* @x\n",
			paths: nil,
		},
		{
			name:  "an entry without owners clears ownership",
			file:  "* @x\n/vendor/\n",
			paths: []string{"vendor/lib.go"},
		},
		{
			name:  "a cleared path does not hide another path's owners",
			file:  "* @x\n/vendor/\n",
			paths: []string{"vendor/lib.go", "main.go"},
			want:  []SectionOwners{{Section: DefaultSection, ApprovalsRequired: 1, Owners: []string{"@x"}, Patterns: []string{"/vendor/", "*"}}},
		},
		{
			name: "default owners, optional sections and counts",
			file: "* @general\n" +
				"[Documentation][2] @docs-team\ndocs/\nREADME.md\n*.txt\n" +
				"^[Database] @database-team @agarcia\nmodel/db/\nconfig/db/database-setup.md @docs-team\n",
			paths: []string{"model/db/CHANGELOG.txt", "config/db/database-setup.md"},
			want: []SectionOwners{
				{Section: DefaultSection, ApprovalsRequired: 1, Owners: []string{"@general"}, Patterns: []string{"*"}},
				{Section: "Documentation", ApprovalsRequired: 2, Owners: []string{"@docs-team"}, Patterns: []string{"*.txt"}},
				{Section: "Database", Optional: true, ApprovalsRequired: 1, Owners: []string{"@database-team", "@agarcia", "@docs-team"},
					Patterns: []string{"model/db/", "config/db/database-setup.md"}},
			},
		},
		{
			name:  "merged sections: entries of a later heading override earlier ones",
			file:  "[Docs]\ndocs/ @a\n[Other]\n* @o\n[DOCS]\ndocs/x.md @b\n",
			paths: []string{"docs/x.md"},
			want: []SectionOwners{
				{Section: "Docs", ApprovalsRequired: 1, Owners: []string{"@b"}, Patterns: []string{"docs/x.md"}},
				{Section: "Other", ApprovalsRequired: 1, Owners: []string{"@o"}, Patterns: []string{"*"}},
			},
		},
		{
			name:  "leading slash on a path is ignored",
			file:  "/a/ @x\n",
			paths: []string{"/a/b"},
			want:  []SectionOwners{{Section: DefaultSection, ApprovalsRequired: 1, Owners: []string{"@x"}, Patterns: []string{"/a/"}}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, errs := Parse([]byte(c.file))
			if len(errs) != 0 {
				t.Fatalf("Parse: %v", errs)
			}
			got := f.OwnersFor(c.paths)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("OwnersFor(%q)\n got %+v\nwant %+v", c.paths, got, c.want)
			}
		})
	}
}

// ownersForNaive is OwnersFor as the package first wrote it: every entry
// of a section tried against every path with Match, from the last. The
// Index must answer exactly as it does.
func ownersForNaive(f File, paths []string) []SectionOwners {
	var out []SectionOwners
	for _, s := range f.Sections {
		so := SectionOwners{Section: s.Name, Optional: s.Optional, ApprovalsRequired: s.ApprovalsRequired}
		for _, path := range paths {
			for i := len(s.Entries) - 1; i >= 0; i-- {
				e := s.Entries[i]
				if !Match(e.Pattern, path) {
					continue
				}
				for _, o := range e.Owners {
					if !slices.ContainsFunc(so.Owners, func(have string) bool { return strings.EqualFold(have, o) }) {
						so.Owners = append(so.Owners, o)
					}
				}
				if !slices.Contains(so.Patterns, e.Pattern) {
					so.Patterns = append(so.Patterns, e.Pattern)
				}
				break
			}
		}
		if len(so.Owners) > 0 {
			out = append(out, so)
		}
	}
	return out
}

// TestIndex_matchesNaive compares the Index with ownersForNaive on files
// mixing every kind of pattern (anchored or not, files and directories,
// wildcards, escapes, repeated patterns across sections) and paths around
// them (the paths named, below them, above them, beside them, and paths
// git never writes).
func TestIndex_matchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"a", "b", "docs", "app", "x y", "#h", "é", "a.md", "b.go", ".hidden", "README.md", "[a", "a*b"}
	pick := func() string { return segs[rng.IntN(len(segs))] }
	patternOf := func() string {
		var parts []string
		for n := 1 + rng.IntN(3); n > 0; n-- {
			switch rng.IntN(8) {
			case 0:
				parts = append(parts, "*")
			case 1:
				parts = append(parts, "**")
			case 2:
				parts = append(parts, "*."+[]string{"md", "go"}[rng.IntN(2)])
			case 3:
				parts = append(parts, "?"+pick()[1:])
			default:
				parts = append(parts, strings.NewReplacer(" ", `\ `, "#", `\#`, "*", `\*`).Replace(pick()))
			}
		}
		p := strings.Join(parts, "/")
		if rng.IntN(2) == 0 {
			p = "/" + p
		}
		if rng.IntN(3) == 0 {
			p += "/"
		}
		return p
	}
	for round := 0; round < 300; round++ {
		var b strings.Builder
		for i := 0; i < 40; i++ {
			if rng.IntN(10) == 0 {
				fmt.Fprintf(&b, "[S%d]\n", rng.IntN(4))
			}
			owners := ""
			if rng.IntN(8) > 0 {
				owners = fmt.Sprintf(" @o%d @O%d", rng.IntN(5), rng.IntN(5))
			}
			b.WriteString(patternOf() + owners + "\n")
		}
		f, _ := Parse([]byte(b.String()))
		var paths []string
		for i := 0; i < 40; i++ {
			var parts []string
			for n := 1 + rng.IntN(4); n > 0; n-- {
				parts = append(parts, pick())
			}
			p := strings.Join(parts, "/")
			switch rng.IntN(12) {
			case 0:
				p = "/" + p
			case 1:
				p += "/"
			case 2:
				p = strings.Replace(p, "/", "//", 1)
			}
			paths = append(paths, p)
		}
		got, want := f.Index().OwnersFor(paths), ownersForNaive(f, paths)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("file\n%s\npaths %q\n got %+v\nwant %+v", b.String(), paths, got, want)
		}
	}
}
