package codeowners

import (
	"reflect"
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
