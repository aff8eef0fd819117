package entity

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// The cache keeps within its bound, dropping the least recently used.
func TestCacheBound(t *testing.T) {
	tpl := func(n int) *Template { return NewTemplate(make([]byte, n)) }
	one := tpl(1000).size()
	c := NewCache(3 * one)
	for i := int64(1); i <= 3; i++ {
		c.Put(CacheKey{Kind: KindProject, ID: i}, tpl(1000))
	}
	if n, used := c.Stats(); n != 3 || used != 3*one {
		t.Fatalf("3 entries of %d: %d entries, %d bytes", one, n, used)
	}
	if _, ok := c.Get(CacheKey{Kind: KindProject, ID: 1}); !ok { // 1 is now the most recently used
		t.Fatal("entry 1 missing")
	}
	c.Put(CacheKey{Kind: KindProject, ID: 4}, tpl(1000))
	if _, ok := c.Get(CacheKey{Kind: KindProject, ID: 2}); ok {
		t.Error("entry 2, the least recently used, still kept past the bound")
	}
	for _, id := range []int64{1, 3, 4} {
		if _, ok := c.Get(CacheKey{Kind: KindProject, ID: id}); !ok {
			t.Errorf("entry %d dropped", id)
		}
	}
	// A bigger template replacing one makes room by dropping others.
	c.Put(CacheKey{Kind: KindProject, ID: 4}, tpl(2000))
	if n, used := c.Stats(); used > 3*one || n != 2 {
		t.Errorf("after growing entry 4: %d entries, %d bytes (bound %d)", n, used, 3*one)
	}
	// One larger than the whole bound is not kept, and drops nothing.
	c.Put(CacheKey{Kind: KindProject, ID: 5}, tpl(int(4*one)))
	if _, ok := c.Get(CacheKey{Kind: KindProject, ID: 5}); ok {
		t.Error("a template larger than the bound was kept")
	}
	if n, used := c.Stats(); used > 3*one || n != 2 {
		t.Errorf("after the oversized put: %d entries, %d bytes", n, used)
	}
	// Off: nothing kept, nothing found.
	var off *Cache = NewCache(0)
	off.Put(CacheKey{ID: 1}, tpl(10))
	if _, ok := off.Get(CacheKey{ID: 1}); ok || off != nil {
		t.Error("a cache of 0 bytes keeps entries")
	}
}

// A spliced project is byte for byte the entity encoded whole, for every
// combination of the parts the template leaves out and of callers.
func TestSpliceProjectMatchesEncoding(t *testing.T) {
	r := New("https://quarry.example", func() time.Time { return time.Unix(1700000000, 0) })
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	ns := model.Namespace{ID: 7, Name: "Group <&>", Path: "group", Kind: model.NamespaceGroup, FullPath: "group", FullName: "Group <&>", EntityVersion: 3}
	userNS := model.Namespace{ID: 8, Name: "Alice", Path: "alice", Kind: model.NamespaceUser, OwnerID: 5, FullPath: "alice", FullName: "Alice"}
	base := model.Project{ID: 42, NamespaceID: 7, Namespace: ns, CreatorID: 1, Name: "Proj \"q\"", Path: "proj",
		Description: "line <b>1</b>\nline 2 & \"x\"", Visibility: model.Public, DefaultBranch: "main", EmptyRepo: false, HasReadme: true,
		IssuesAccessLevel: "enabled", MergeRequestsAccessLevel: "disabled", Settings: model.DefaultProjectSettings(),
		LastActivityAt: now, CreatedAt: now, UpdatedAt: now, StarCount: 2, ForksCount: 1, EntityVersion: 9}
	base.Settings.RunnersToken = "glrt-secret"
	src := base
	src.ID, src.Name, src.Path = 41, "Source", "source"
	admin := auth.Actor{User: &model.User{ID: 1, Admin: true}}
	user := auth.Actor{User: &model.User{ID: 2}}
	owner := model.User{ID: 5, Username: "alice", Name: "Alice <a>", State: model.UserActive}
	mirror := base
	mirror.Settings.Mirror = true
	personal := base
	personal.Namespace, personal.NamespaceID = userNS, userNS.ID
	n := 0
	for _, a := range []auth.Actor{admin, user} {
		for _, p := range []model.Project{base, mirror, personal} {
			for _, fork := range []bool{false, true} {
				for _, shared := range []bool{false, true} {
					for _, perm := range []int{0, 1, 2, 3} {
						for _, canAdmin := range []bool{false, true} {
							v := projects.View{Project: p, Access: model.Developer, CanReadCode: perm != 1, CanAdmin: canAdmin,
								Topics: []string{"a", "b<"}}
							if perm&1 != 0 {
								v.ProjectAccess = model.Maintainer
							}
							if perm&2 != 0 {
								v.GroupAccess, v.GroupMember = model.Reporter, true
							}
							if fork {
								v.Project.ForkedFromID = &src.ID
								v.ForkedFrom = &src
							}
							if shared {
								v.SharedWith = []model.GroupLink{{GroupID: 3, GroupAccess: model.Developer, ExpiresAt: "2030-01-01",
									Group: model.Namespace{Name: "Shared", FullPath: "shared"}}, {GroupID: 4, GroupAccess: model.Guest}}
							}
							if p.Namespace.Kind == model.NamespaceUser {
								v.Owner = &owner
							}
							want, err := json.Marshal(r.Project(&v, a))
							if err != nil {
								t.Fatal(err)
							}
							tpl, err := r.ProjectTemplate(&v, a)
							if err != nil {
								t.Fatal(err)
							}
							got, err := r.SpliceProject([]byte("x"), tpl, &v, a)
							if err != nil {
								t.Fatal(err)
							}
							if string(got[1:]) != string(want) {
								t.Fatalf("case %d: spliced\n%s\nencoded\n%s", n, got[1:], want)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n != 192 {
		t.Fatal(fmt.Sprint("cases: ", n))
	}
}

// A spliced user (the administrator's views) is byte for byte the entity
// encoded whole, with and without a creator.
func TestSpliceUserAdminMatchesEncoding(t *testing.T) {
	r := New("https://quarry.example", nil)
	admin := auth.Actor{User: &model.User{ID: 1, Admin: true}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	creator := model.User{ID: 1, Username: "root", Name: "Admin <&>", State: model.UserActive}
	u := model.User{ID: 9, Username: "u", Name: "U \"q\"", Email: "u@example.com", State: model.UserActive, Type: model.UserHuman,
		Bio: "<b>bio</b>", CreatedAt: now, LastActivityOn: "2026-01-02", Identities: []model.Identity{{Provider: "ldap", ExternUID: "uid=u"}}}
	for _, details := range []bool{false, true} {
		for _, withCreator := range []bool{false, true} {
			var cr *model.User
			if withCreator {
				u.CreatedByID, cr = &creator.ID, &creator
			}
			a := r.UserAdmin(&u, admin)
			if cr != nil {
				b := r.UserBasic(cr)
				a.CreatedBy = &b
			}
			var v any = a
			if details {
				v = r.UserDetailsAdmin(&u, a)
			}
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			tpl, err := r.UserAdminTemplate(&u, admin, details)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.SpliceUserAdmin(nil, tpl, cr)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("details %v, creator %v: spliced\n%s\nencoded\n%s", details, withCreator, got, want)
			}
		}
	}
}
