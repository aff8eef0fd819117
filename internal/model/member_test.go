package model

import "testing"

func TestMatchesBranch(t *testing.T) {
	for _, c := range []struct {
		rule, branch string
		want         bool
	}{
		{"main", "main", true},
		{"main", "main2", false},
		{"release/*", "release/1.0", true},
		{"release/*", "release/1.0/hotfix", true},
		{"release/*", "releases/1", false},
		{"*-stable", "9-0-stable", true},
		{"*-stable", "stable", false},
		{"*", "anything", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
	} {
		if got := MatchesBranch(c.rule, c.branch); got != c.want {
			t.Errorf("MatchesBranch(%q, %q) = %v; want %v", c.rule, c.branch, got, c.want)
		}
	}
}

func FuzzMatchesBranch(f *testing.F) {
	f.Add("rel*/x", "rel/a/x")
	f.Fuzz(func(t *testing.T, rule, branch string) {
		if MatchesBranch(rule, branch) && rule == "" && branch != "" {
			t.Fatal("empty rule matched")
		}
		_ = MatchesBranch(rule, branch)
	})
}

func TestValidMemberLevel(t *testing.T) {
	if ValidMemberLevel(SourceProject, Owner) || !ValidMemberLevel(SourceNamespace, Owner) || ValidMemberLevel(SourceProject, 31) {
		t.Error("member levels wrong")
	}
}
