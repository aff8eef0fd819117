package model

import (
	"strings"
	"testing"
)

func TestTrackedError_Title(t *testing.T) {
	for _, c := range []struct{ name, desc, want string }{
		{"KeyError", "'user'", "KeyError 'user'"},
		{"disk full", "disk full", "disk full"},
		{"E", "", "E"},
		{"E", strings.Repeat("x", 62), "E " + strings.Repeat("x", 62)},
		{"E", strings.Repeat("x", 63), "E " + strings.Repeat("x", 59) + "..."},
		{"É", strings.Repeat("é", 100), "É " + strings.Repeat("é", 59) + "..."},
	} {
		if got := (TrackedError{Name: c.name, Description: c.desc}).Title(); got != c.want {
			t.Errorf("Title(%q, %q) = %q; want %q", c.name, c.desc, got, c.want)
		}
	}
}

func TestErrorStatus_transitions(t *testing.T) {
	all := []ErrorStatus{ErrorUnresolved, ErrorResolved, ErrorIgnored}
	for _, from := range all {
		for _, to := range all {
			if got := from.CanMoveTo(to); got != (from != to) {
				t.Errorf("%s → %s: %v", from, to, got)
			}
		}
	}
	if ErrorStatus("done").Valid() || ErrorStatus("done").CanMoveTo(ErrorResolved) {
		t.Error("an undeclared status moves")
	}
}
