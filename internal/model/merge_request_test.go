package model

import "testing"

func TestMRStateCanMoveTo(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{MRStateOpened, MRStateClosed, true}, {MRStateClosed, MRStateOpened, true}, {MRStateOpened, MRStateLocked, true},
		{MRStateLocked, MRStateMerged, true}, {MRStateLocked, MRStateOpened, true},
		{MRStateOpened, MRStateMerged, false}, {MRStateMerged, MRStateOpened, false}, {MRStateMerged, MRStateClosed, false},
		{MRStateClosed, MRStateMerged, false}, {MRStateClosed, MRStateLocked, false}, {MRStateLocked, MRStateClosed, false},
	} {
		if got := MRStateCanMoveTo(c.from, c.to); got != c.ok {
			t.Errorf("%s → %s: %v; want %v", c.from, c.to, got, c.ok)
		}
	}
}

func TestIsDraftTitle(t *testing.T) {
	for title, want := range map[string]bool{"Draft: x": true, "[Draft] x": true, "(draft) x": true, "draft - x": true,
		"x": false, "Drafting x": false, "WIP: x": false} {
		if IsDraftTitle(title) != want {
			t.Errorf("IsDraftTitle(%q) = %v", title, !want)
		}
	}
}
