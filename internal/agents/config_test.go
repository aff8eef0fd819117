package agents

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	many := "ci_access:\n  projects:\n"
	for i := range maxAuthorized + 5 {
		many += fmt.Sprintf("    - id: g/p%d\n", i)
	}
	for _, c := range []struct {
		name           string
		in             string
		projects, grps []string
	}{
		{"both sections, lower-cased", `
gitops:
  manifest_projects: [{id: x/y}]
ci_access:
  projects:
    - id: Group/Project
      default_namespace: ns
    - id: other/one
  groups:
    - id: Group/Sub
`, []string{"group/project", "other/one"}, []string{"group/sub"}},
		{"empty file", ``, nil, nil},
		{"no ci_access", "user_access:\n  access_as: {agent: {}}\n", nil, nil},
		{"entries without ids", "ci_access:\n  projects:\n    - {}\n    - id: ''\n    - id: '  '\n    - id: a/b\n", []string{"a/b"}, nil},
		{"not YAML", "ci_access: [\n", nil, nil},
		{"wrong shape", "ci_access:\n  projects: a/b\n", nil, nil},
		{"a list at the top", "- ci_access\n", nil, nil},
		{"a number as id", "ci_access:\n  groups:\n    - id: 42\n", []string{}, []string{"42"}},
		{"too large", "ci_access:\n  projects:\n    - id: a/b\n#" + strings.Repeat("x", MaxConfigBytes), nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ParseConfig([]byte(c.in))
			if !slices.Equal(got.Projects, c.projects) && !(len(got.Projects) == 0 && len(c.projects) == 0) {
				t.Errorf("projects %q; want %q", got.Projects, c.projects)
			}
			if !slices.Equal(got.Groups, c.grps) && !(len(got.Groups) == 0 && len(c.grps) == 0) {
				t.Errorf("groups %q; want %q", got.Groups, c.grps)
			}
		})
	}
	if got := ParseConfig([]byte(many)); len(got.Projects) != maxAuthorized || got.Projects[0] != "g/p0" {
		t.Errorf("%d entries: %d kept (first %q); want the first %d", maxAuthorized+5, len(got.Projects), got.Projects[0], maxAuthorized)
	}
}

func TestCIAccess_authorizes(t *testing.T) {
	c := CIAccess{Projects: []string{"a/p"}, Groups: []string{"g/sub"}}
	for _, tc := range []struct {
		path   string
		groups []string
		want   bool
	}{
		{"a/p", ancestorPaths("a"), true},
		{"a/q", ancestorPaths("a"), false},
		{"g/sub/deep/x", ancestorPaths("g/sub/deep"), true},
		{"g/subway/x", ancestorPaths("g/subway"), false},
		{"g/x", ancestorPaths("g"), false},
	} {
		if got := c.authorizes(tc.path, tc.groups); got != tc.want {
			t.Errorf("authorizes(%q, %q) = %v; want %v", tc.path, tc.groups, got, tc.want)
		}
	}
}

func TestRootTraversal(t *testing.T) {
	for in, want := range map[string]string{"7/": "7/", "7/12/40/": "7/", "": ""} {
		if got := rootTraversal(in); got != want {
			t.Errorf("rootTraversal(%q) = %q; want %q", in, got, want)
		}
	}
}
