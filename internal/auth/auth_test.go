package auth

import (
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestNewToken(t *testing.T) {
	a, da := NewToken("glpat-")
	b, db := NewToken("glpat-")
	if !strings.HasPrefix(a, "glpat-") || len(a) != len("glpat-")+32 {
		t.Fatalf("token %q", a)
	}
	if a == b || da == db {
		t.Fatal("two tokens are equal")
	}
	if Digest(a) != da || len(da) != 64 {
		t.Fatalf("digest %q", da)
	}
}

func TestPassword(t *testing.T) {
	h, err := HashPassword("correct horse", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "correct horse") || CheckPassword(h, "wrong") || CheckPassword("", "") {
		t.Fatal("password check is wrong")
	}
}

func TestScopeRule(t *testing.T) {
	tok := func(s ...model.Scope) *model.PersonalAccessToken { return &model.PersonalAccessToken{Scopes: s} }
	readUser := ScopeRule{Extra: []model.Scope{model.ScopeReadUser}}
	cases := []struct {
		name   string
		rule   ScopeRule
		method string
		token  *model.PersonalAccessToken
		want   bool
	}{
		{"api writes", ScopeRule{}, "POST", tok(model.ScopeAPI), true},
		{"read_api reads", ScopeRule{}, "GET", tok(model.ScopeReadAPI), true},
		{"read_api no writes", ScopeRule{}, "POST", tok(model.ScopeReadAPI), false},
		{"read_user on users read", readUser, "GET", tok(model.ScopeReadUser), true},
		{"read_user elsewhere", ScopeRule{}, "GET", tok(model.ScopeReadUser), false},
		{"write_repository no REST", ScopeRule{}, "GET", tok(model.ScopeWriteRepository), false},
		{"sudo alone", ScopeRule{}, "GET", tok(model.ScopeSudo), false},
		{"any", ScopeRule{Any: true}, "DELETE", tok(model.ScopeReadRepository), true},
		{"anonymous", ScopeRule{}, "GET", nil, true},
	}
	for _, c := range cases {
		if got := c.rule.Allows(c.method, c.token); got != c.want {
			t.Errorf("%s: Allows = %v; want %v", c.name, got, c.want)
		}
	}
	if got := ScopeString(readUser.Accepted("GET")); got != "api read_api read_user" {
		t.Errorf("accepted = %q", got)
	}
}

func TestCan(t *testing.T) {
	admin := &model.User{ID: 1, Admin: true, State: model.UserActive}
	alice := &model.User{ID: 2, State: model.UserActive}
	bob := &model.User{ID: 3, State: model.UserActive}
	blocked := &model.User{ID: 4, State: model.UserBlocked}
	private := &model.User{ID: 5, State: model.UserActive, PrivateProfile: true}
	aliceToken := &model.PersonalAccessToken{UserID: 2}
	as := func(u *model.User) Actor { return Actor{User: u} }
	cases := []struct {
		actor  Actor
		action Action
		res    Resource
		want   bool
	}{
		{as(alice), ReadUser, Resource{User: bob}, true},
		{Anonymous, ReadUser, Resource{User: bob}, true},
		{as(alice), ReadUser, Resource{User: blocked}, false},
		{as(admin), ReadUser, Resource{User: blocked}, true},
		{as(blocked), ReadUser, Resource{User: blocked}, true},
		{as(alice), ReadUserProfile, Resource{User: private}, false},
		{as(private), ReadUserProfile, Resource{User: private}, true},
		{as(admin), ReadUserProfile, Resource{User: private}, true},
		{as(alice), AdminUsers, Resource{}, false},
		{as(admin), AdminUsers, Resource{}, true},
		{Anonymous, UpdateOwnStatus, Resource{}, false},
		{as(alice), UpdateOwnStatus, Resource{}, true},
		{as(alice), ReadToken, Resource{Token: aliceToken}, true},
		{as(bob), ReadToken, Resource{Token: aliceToken}, false},
		{as(admin), RevokeToken, Resource{Token: aliceToken}, true},
		{as(bob), RevokeToken, Resource{Token: aliceToken}, false},
		{as(admin), Action("nonsense"), Resource{}, false},
	}
	for i, c := range cases {
		if got := Can(c.actor, c.action, c.res); got != c.want {
			t.Errorf("case %d: Can(%v, %s) = %v; want %v", i, c.actor.UserID(), c.action, got, c.want)
		}
	}
}
