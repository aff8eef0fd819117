package housekeeping

import (
	"testing"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

func TestStrategyFor(t *testing.T) {
	st := model.DefaultApplicationSettings() // 10, 50, 200
	for _, tc := range []struct {
		n    int64
		want gitrepo.Strategy
		ok   bool
	}{
		{0, 0, false}, {1, 0, false}, {9, 0, false},
		{10, gitrepo.Incremental, true}, {20, gitrepo.Incremental, true}, {49, 0, false},
		{50, gitrepo.Full, true}, {100, gitrepo.Full, true}, {110, gitrepo.Incremental, true},
		{200, gitrepo.GC, true}, {400, gitrepo.GC, true}, {201, 0, false},
	} {
		got, ok := strategyFor(tc.n, st)
		if got != tc.want || ok != tc.ok {
			t.Errorf("strategyFor(%d) = %v, %v; want %v, %v", tc.n, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for _, tg := range []Target{ProjectRepository(3), ProjectWiki(4), GroupWiki(5), Snippet(6)} {
		if got, err := parseTarget(tg.Key()); err != nil || got != tg {
			t.Errorf("parseTarget(%q) = %v, %v", tg.Key(), got, err)
		}
	}
	for _, bad := range []string{"", "project", "project/", "project/0", "project/-1", "snippets/1", "project/1/2", "project/x"} {
		if _, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) accepted", bad)
		}
	}
}
