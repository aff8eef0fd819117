package storetest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

func today() string { return time.Now().UTC().Format(model.DateLayout) }

func TestNewUser_uniqueAndStored(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		a := storetest.NewUser(t, db)
		b := storetest.NewUser(t, db, storetest.Admin(), func(u *model.User) { u.Bio = "hello" })
		if a.ID == 0 || a.NamespaceID == 0 || a.Version != 1 || a.State != model.UserActive || a.ConfirmedAt == nil {
			t.Errorf("user %+v", a)
		}
		if a.Username == b.Username || a.Email == b.Email || !strings.HasPrefix(a.Username, "user-") {
			t.Errorf("names %q %q, e-mails %q %q", a.Username, b.Username, a.Email, b.Email)
		}
		if a.Admin || !b.Admin || b.Bio != "hello" {
			t.Errorf("options: a.Admin %v, b.Admin %v, b.Bio %q", a.Admin, b.Admin, b.Bio)
		}
		got, err := db.UserByUsername(ctx, a.Username)
		if err != nil || got.ID != a.ID || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Errorf("read back %+v, %v", got, err)
		}
		ns, err := db.NamespaceByID(ctx, a.NamespaceID)
		if err != nil || ns.Kind != model.NamespaceUser || ns.OwnerID != a.ID || ns.FullPath != a.Username {
			t.Errorf("personal namespace %+v, %v", ns, err)
		}
		if lvl, err := db.NamespaceAccess(ctx, a.ID, a.NamespaceID, today()); err != nil || lvl != model.Owner {
			t.Errorf("access to own namespace %d, %v", lvl, err)
		}
		if _, err := db.UserPreferences(ctx, a.ID); err != nil {
			t.Errorf("preferences: %v", err)
		}
		c := storetest.NewUser(t, db, storetest.Username("carol"))
		if c.Username != "carol" || c.Email != "carol@example.com" {
			t.Errorf("Username option: %q %q", c.Username, c.Email)
		}
	})
}

// Parallel tests on one database never collide.
func TestBuilders_parallelCallsDoNotCollide(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		for i := range 4 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				for range 3 {
					u := storetest.NewUser(t, db)
					g := storetest.NewGroup(t, db, u)
					storetest.NewProject(t, db, u)
					storetest.NewProject(t, db, u, storetest.InGroup(g))
				}
			})
		}
	})
}

func TestNewGroup_ownerAndSubgroups(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		if g.Kind != model.NamespaceGroup || g.ParentID != 0 || g.FullPath != g.Path || g.Visibility != model.Private ||
			g.Traversal != fmt.Sprintf("%d/", g.ID) || g.RunnersToken == "" || g.Settings != model.DefaultGroupSettings() {
			t.Errorf("group %+v", g)
		}
		m, err := db.Member(ctx, model.SourceNamespace, g.ID, owner.ID)
		if err != nil || m.AccessLevel != model.Owner {
			t.Errorf("owner membership %+v, %v", m, err)
		}
		// The owner of the parent reaches a subgroup made by someone else.
		other := storetest.NewUser(t, db)
		storetest.AddMember(t, db, g, other, model.Maintainer)
		sub := storetest.NewGroup(t, db, other, storetest.Parent(g), func(g *model.Group) { g.Visibility = model.Internal })
		if sub.ParentID != g.ID || sub.FullPath != g.Path+"/"+sub.Path || sub.Visibility != model.Internal {
			t.Errorf("subgroup %+v", sub)
		}
		for _, c := range []struct {
			user model.User
			want model.AccessLevel
		}{{owner, model.Owner}, {other, model.Owner}} {
			if lvl, err := db.NamespaceAccess(ctx, c.user.ID, sub.ID, today()); err != nil || lvl != c.want {
				t.Errorf("%s reaches the subgroup with %d, %v; want %d", c.user.Username, lvl, err, c.want)
			}
		}
		// Nobody: no members at all.
		lone := storetest.NewGroup(t, db, model.User{})
		if n, err := db.OwnerCount(ctx, lone.ID, today()); err != nil || n != 0 {
			t.Errorf("ownerless group has %d owners, %v", n, err)
		}
	})
}

func TestNewProject_personalAndInGroups(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		if p.NamespaceID != owner.NamespaceID || p.CreatorID != owner.ID || p.FullPath() != owner.Username+"/"+p.Path ||
			!p.EmptyRepo || p.DefaultBranch != "main" || !strings.HasPrefix(p.DiskPath, "@hashed/") || p.Settings.RunnersToken == "" {
			t.Errorf("personal project %+v", p)
		}
		m, err := db.Member(ctx, model.SourceProject, p.ID, owner.ID)
		if err != nil || m.AccessLevel != model.Owner {
			t.Errorf("personal project owner membership %+v, %v", m, err)
		}
		if lvl, _ := db.ProjectAccess(ctx, owner.ID, p.ID, today()); lvl != model.Owner {
			t.Errorf("owner's access %d", lvl)
		}

		g := storetest.NewGroup(t, db, owner)
		dev := storetest.NewUser(t, db)
		storetest.AddMember(t, db, g, dev, model.Developer)
		// A developer of the group who creates a project maintains it.
		gp := storetest.NewProject(t, db, dev, storetest.InGroup(g), func(p *model.Project) { p.Visibility = model.Public })
		if gp.Namespace.ID != g.ID || gp.FullPath() != g.FullPath+"/"+gp.Path || gp.Visibility != model.Public {
			t.Errorf("group project %+v", gp)
		}
		for _, c := range []struct {
			user model.User
			want model.AccessLevel
		}{{owner, model.Owner}, {dev, model.Maintainer}} {
			if lvl, err := db.ProjectAccess(ctx, c.user.ID, gp.ID, today()); err != nil || lvl != c.want {
				t.Errorf("%s's access %d, %v; want %d", c.user.Username, lvl, err, c.want)
			}
		}
		// The group's owner gets no extra membership.
		if _, err := db.Member(ctx, model.SourceProject, storetest.NewProject(t, db, owner, storetest.InGroup(g)).ID, owner.ID); err == nil {
			t.Error("group owner got a project membership")
		}
	})
}

func TestAddMember_projectsAndExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		guest := storetest.NewUser(t, db)
		m := storetest.AddMember(t, db, p, guest, model.Reporter)
		if m.ID == 0 || m.SourceType != model.SourceProject || m.SourceID != p.ID || m.User.ID != guest.ID || m.AccessLevel != model.Reporter {
			t.Errorf("member %+v", m)
		}
		if lvl, _ := db.ProjectAccess(ctx, guest.ID, p.ID, today()); lvl != model.Reporter {
			t.Errorf("reporter's access %d", lvl)
		}
		past := storetest.NewUser(t, db)
		m = storetest.AddMember(t, db, p, past, model.Developer, storetest.ExpiresAt("2000-01-01"))
		if m.ExpiresAt != "2000-01-01" {
			t.Errorf("expiry %q", m.ExpiresAt)
		}
		if lvl, _ := db.ProjectAccess(ctx, past.ID, p.ID, today()); lvl != 0 {
			t.Errorf("expired member's access %d", lvl)
		}
		// A second membership of the same source is the store's conflict.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CreateMember(ctx, &model.Member{SourceType: model.SourceProject, SourceID: p.ID, UserID: guest.ID, AccessLevel: model.Guest})
		})
		if !store.IsUnique(err, store.UniqueMember) {
			t.Errorf("duplicate membership: %v", err)
		}
	})
}
