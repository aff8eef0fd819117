package gitaccess

import (
	"strings"
	"testing"
)

func TestHookPattern(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string
		ok   bool
	}{
		{"v*", "v*", true},
		{"release/*/final", "release/*/final", true},
		{"v1.0", "v1.0", true},
		{"", "", false},
		{"a b", "", false},
		{"v?", "", false},
		{"v[0-9]", "", false},
		{`v\1`, "", false},
		{"v~1", "", false},
		{"v\n1", "", false},
	} {
		got, ok := HookPattern(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HookPattern(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A name HookPattern keeps holds no shell pattern character but `*`
// and no blank, so the hook's unquoted `case` matches what
// model.MatchesBranch matches.
func FuzzHookPattern(f *testing.F) {
	for _, s := range []string{"v*", "a b", "v?", "[x]", "rel/*", "\\", "é*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := HookPattern(name)
		if !ok {
			if got != "" {
				t.Fatalf("dropped %q with %q", name, got)
			}
			return
		}
		if got != name || strings.ContainsAny(got, "?[\\ \t\n~^:") {
			t.Fatalf("HookPattern(%q) = %q", name, got)
		}
	})
}
