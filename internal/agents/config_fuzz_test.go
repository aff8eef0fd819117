package agents

import (
	"strings"
	"testing"
	"time"
)

// FuzzParseConfig: no configuration makes ParseConfig panic or take long;
// what it keeps is lower-cased, non-empty, at most maxAuthorized entries
// per list, and nothing from a file over MaxConfigBytes.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"ci_access:\n  projects:\n    - id: Group/Project\n  groups:\n    - id: group/sub\n",
		"ci_access: {projects: [{id: a/b, default_namespace: x, access_as: {ci_job: {}}}], groups: [{id: g}]}",
		"a: &a [*a, *a]\nci_access: {projects: *a}",
		"ci_access:\n  projects:\n    - id: [1, 2]\n",
		"ci_access: !!binary aGVsbG8=",
		"---\nci_access: {}\n---\nci_access: {groups: [{id: x}]}\n",
		"\xef\xbb\xbfci_access:\n\tprojects: []",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		c := ParseConfig(data)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("ParseConfig took %v", d)
		}
		if len(data) > MaxConfigBytes && (len(c.Projects) > 0 || len(c.Groups) > 0) {
			t.Fatalf("a file of %d bytes authorized %v", len(data), c)
		}
		for _, list := range [][]string{c.Projects, c.Groups} {
			if len(list) > maxAuthorized {
				t.Fatalf("%d entries kept", len(list))
			}
			for _, p := range list {
				if p == "" || p != strings.ToLower(p) || strings.TrimSpace(p) != p {
					t.Fatalf("entry %q", p)
				}
			}
		}
	})
}
