package protectedenvs

import (
	"errors"
	"testing"

	"quarry/internal/model"
)

func TestAdmits(t *testing.T) {
	lvl := func(l model.AccessLevel) *model.AccessLevel { return &l }
	id := func(n int64) *int64 { return &n }
	member := func(direct, inherited []int64) func(int64, int) (bool, error) {
		return func(g int64, inherit int) (bool, error) {
			for _, x := range direct {
				if x == g {
					return true, nil
				}
			}
			if inherit == model.GroupInheritAll {
				for _, x := range inherited {
					if x == g {
						return true, nil
					}
				}
			}
			return false, nil
		}
	}
	none := member(nil, nil)
	for _, tc := range []struct {
		name    string
		g       model.EnvironmentAccess
		admin   bool
		acc     model.AccessLevel
		inGroup func(int64, int) (bool, error)
		want    bool
	}{
		{"maintainers, maintainer", model.EnvironmentAccess{AccessLevel: lvl(model.Maintainer)}, false, model.Maintainer, none, true},
		{"maintainers, owner", model.EnvironmentAccess{AccessLevel: lvl(model.Maintainer)}, false, model.Owner, none, true},
		{"maintainers, developer", model.EnvironmentAccess{AccessLevel: lvl(model.Maintainer)}, false, model.Developer, none, false},
		{"reporters, reporter", model.EnvironmentAccess{AccessLevel: lvl(model.Reporter)}, false, model.Reporter, none, true},
		{"admins, owner", model.EnvironmentAccess{AccessLevel: lvl(model.AdminAccess)}, false, model.Owner, none, false},
		{"admins, admin", model.EnvironmentAccess{AccessLevel: lvl(model.AdminAccess)}, true, 0, none, true},
		{"user, same", model.EnvironmentAccess{UserID: id(7)}, false, 0, none, true},
		{"user, other", model.EnvironmentAccess{UserID: id(8)}, false, model.Owner, none, false},
		{"group direct, member", model.EnvironmentAccess{GroupID: id(3)}, false, 0, member([]int64{3}, nil), true},
		{"group direct, ancestor member", model.EnvironmentAccess{GroupID: id(3)}, false, 0, member(nil, []int64{3}), false},
		{"group all, ancestor member", model.EnvironmentAccess{GroupID: id(3), GroupInheritanceType: model.GroupInheritAll}, false, 0, member(nil, []int64{3}), true},
		{"empty grant", model.EnvironmentAccess{}, false, model.Owner, none, false},
	} {
		got, err := Admits(tc.g, 7, tc.admin, tc.acc, tc.inGroup)
		if err != nil || got != tc.want {
			t.Errorf("%s: Admits = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	boom := errors.New("boom")
	if _, err := Admits(model.EnvironmentAccess{GroupID: id(1)}, 7, false, 0, func(int64, int) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("group error: %v", err)
	}
}
