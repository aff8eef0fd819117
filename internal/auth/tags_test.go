package auth

import (
	"testing"

	"quarry/internal/model"
)

func TestCanCreateTag(t *testing.T) {
	lvl := func(l model.AccessLevel) model.BranchAccess { return model.BranchAccess{AccessLevel: &l} }
	id := func(n int64) *int64 { return &n }
	user := Actor{User: &model.User{ID: 9}}
	admin := Actor{User: &model.User{ID: 1, Admin: true}}
	rules := []model.ProtectedTag{
		{Name: "v*", Create: []model.BranchAccess{lvl(model.Maintainer)}},
		{Name: "dev-*", Create: []model.BranchAccess{lvl(model.Developer)}},
		{Name: "locked", Create: []model.BranchAccess{lvl(model.NoOneAccess)}},
		{Name: "mine", Create: []model.BranchAccess{lvl(model.Maintainer), {UserID: id(9)}}},
		{Name: "team", Create: []model.BranchAccess{{GroupID: id(5)}}},
		{Name: "admins", Create: []model.BranchAccess{lvl(model.AdminAccess)}},
		// Two rules cover "v-dev-1": either grant is enough.
		{Name: "v-dev-*", Create: []model.BranchAccess{lvl(model.Developer)}},
	}
	inGroup5 := func(g int64) bool { return g == 5 }
	for _, tc := range []struct {
		name    string
		a       Actor
		acc     model.AccessLevel
		tag     string
		inGroup func(int64) bool
		want    bool
	}{
		{"unprotected, developer", user, model.Developer, "other", nil, true},
		{"unprotected, reporter", user, model.Reporter, "other", nil, false},
		{"maintainers only, developer", user, model.Developer, "v1", nil, false},
		{"maintainers only, maintainer", user, model.Maintainer, "v1", nil, true},
		{"maintainers only, admin without membership", admin, -1, "v1", nil, true},
		{"developers, developer", user, model.Developer, "dev-1", nil, true},
		{"developers, reporter", user, model.Reporter, "dev-1", nil, false},
		{"no one, owner", user, model.Owner, "locked", nil, false},
		{"no one, admin", admin, model.Owner, "locked", nil, false},
		{"user grant, that user", user, model.Developer, "mine", nil, true},
		{"user grant, that user as reporter", user, model.Reporter, "mine", nil, false},
		{"user grant, another developer", Actor{User: &model.User{ID: 10}}, model.Developer, "mine", nil, false},
		{"group grant, member", user, model.Developer, "team", inGroup5, true},
		{"group grant, not a member", user, model.Developer, "team", func(int64) bool { return false }, false},
		{"group grant, no group test", user, model.Developer, "team", nil, false},
		{"admin level, maintainer", user, model.Maintainer, "admins", nil, false},
		{"admin level, admin", admin, 0, "admins", nil, true},
		{"overlapping rules, developer", user, model.Developer, "v-dev-1", nil, true},
		{"anonymous", Anonymous, model.Maintainer, "other", nil, false},
	} {
		if got := CanCreateTag(tc.a, tc.acc, tc.tag, rules, tc.inGroup); got != tc.want {
			t.Errorf("%s: CanCreateTag(%q) = %v; want %v", tc.name, tc.tag, got, tc.want)
		}
	}
}
