package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// UserOption changes a user before NewUser inserts it.
type UserOption func(*model.User)

// GroupOption changes a group before NewGroup inserts it.
type GroupOption func(*model.Group)

// ProjectOption changes a project before NewProject inserts it.
type ProjectOption func(*model.Project)

// MemberOption changes a membership before AddMember inserts it.
type MemberOption func(*model.Member)

var seq atomic.Int64

// next is a number no other builder call of this process gets.
func next() string { return strconv.FormatInt(seq.Add(1), 10) }

// now is the builders' clock, to the microsecond the store keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Admin makes the user an administrator.
func Admin() UserOption { return func(u *model.User) { u.Admin = true } }

// Username sets the username, with the e-mail <username>@example.com. The
// test then answers for its uniqueness.
func Username(name string) UserOption {
	return func(u *model.User) { u.Username, u.Email = name, name+"@example.com" }
}

// Parent makes the group a subgroup of parent.
func Parent(parent model.Group) GroupOption {
	return func(g *model.Group) { g.ParentID = parent.ID }
}

// InGroup puts the project in group g instead of the creator's personal
// namespace.
func InGroup(g model.Group) ProjectOption {
	return func(p *model.Project) { p.NamespaceID = g.ID }
}

// ExpiresAt ends the membership on a day ("YYYY-MM-DD").
func ExpiresAt(day string) MemberOption {
	return func(m *model.Member) { m.ExpiresAt = day }
}

// NewUser inserts an active, confirmed human user named "user-<n>"
// (e-mail user-<n>@example.com, name "User <n>") as users.Service.Create
// does: the user, the personal namespace it owns, its preferences.
func NewUser(t testing.TB, db *store.DB, opts ...UserOption) model.User {
	t.Helper()
	n, at := next(), now()
	u := model.User{Username: "user-" + n, Email: "user-" + n + "@example.com", Name: "User " + n,
		State: model.UserActive, Type: model.UserHuman, CanCreateGroup: true, ProjectsLimit: 100000,
		ThemeID: 1, ColorSchemeID: 1, ConfirmedAt: &at, CreatedAt: at, UpdatedAt: at}
	for _, o := range opts {
		o(&u)
	}
	ctx, cancel := timeout()
	defer cancel()
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateUser(ctx, &u) }); err != nil {
		t.Fatalf("storetest.NewUser %q: %v", u.Username, err)
	}
	got, err := db.UserByID(ctx, u.ID)
	if err != nil {
		t.Fatalf("storetest.NewUser: read back %d: %v", u.ID, err)
	}
	return got
}

// NewGroup inserts a private group "group-<n>" (name "Group <n>", default
// settings) as groups.Service.Create does: top level unless Parent says
// otherwise, owner (unless the zero User) its member with the Owner role,
// and the authorizations of everyone who reaches the parent recomputed.
func NewGroup(t testing.TB, db *store.DB, owner model.User, opts ...GroupOption) model.Group {
	t.Helper()
	n, at := next(), now()
	g := model.Group{Settings: model.DefaultGroupSettings(), RunnersToken: secret("GR1348941")}
	g.Name, g.Path, g.Visibility = "Group "+n, "group-"+n, model.Private
	g.CreatedAt, g.UpdatedAt = at, at
	for _, o := range opts {
		o(&g)
	}
	ctx, cancel := timeout()
	defer cancel()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateGroup(ctx, &g); err != nil {
			return err
		}
		if owner.ID != 0 {
			if err := tx.AddMember(ctx, model.SourceNamespace, g.ID, owner.ID, model.Owner, owner.ID, at.UnixMicro()); err != nil {
				return err
			}
		}
		users, err := tx.UsersReaching(ctx, g.ParentID)
		if err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, append(users, owner.ID)...)
	})
	if err != nil {
		t.Fatalf("storetest.NewGroup %q: %v", g.Path, err)
	}
	got, err := db.GroupByID(ctx, g.ID)
	if err != nil {
		t.Fatalf("storetest.NewGroup: read back %d: %v", g.ID, err)
	}
	return got
}

// NewProject inserts a private, empty project "project-<n>" (name "Project
// <n>", default branch main, default settings) created by creator, as
// projects.Service.Create does without the repository on disk: in the
// creator's personal namespace unless InGroup (or NamespaceID) says
// otherwise; a personal project's owner is its Owner member; in a group, a
// creator with less than Maintainer access there becomes a Maintainer
// member. DiskPath is the hashed path gitrepo.HashedPath gives. A zero
// creator makes a project without creator, which needs InGroup.
func NewProject(t testing.TB, db *store.DB, creator model.User, opts ...ProjectOption) model.Project {
	t.Helper()
	n, at := next(), now()
	p := model.Project{NamespaceID: creator.NamespaceID, CreatorID: creator.ID, Name: "Project " + n, Path: "project-" + n,
		Visibility: model.Private, DefaultBranch: "main", RepositoryStorage: "default", EmptyRepo: true, ImportStatus: "none",
		IssuesAccessLevel: "enabled", MergeRequestsAccessLevel: "enabled", Settings: model.DefaultProjectSettings(),
		LastActivityAt: at, CreatedAt: at, UpdatedAt: at}
	p.Settings.RunnersToken = secret("GR1348941")
	for _, o := range opts {
		o(&p)
	}
	ctx, cancel := timeout()
	defer cancel()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		ns, err := tx.NamespaceByID(ctx, p.NamespaceID)
		if err != nil {
			return fmt.Errorf("namespace %d: %w", p.NamespaceID, err)
		}
		if err := tx.CreateProject(ctx, &p); err != nil {
			return err
		}
		p.DiskPath = hashedPath(p.ID)
		if err := tx.UpdateProject(ctx, &p); err != nil {
			return err
		}
		switch {
		case ns.Kind == model.NamespaceUser:
			return tx.AddMember(ctx, model.SourceProject, p.ID, ns.OwnerID, model.Owner, creator.ID, at.UnixMicro())
		case ns.Kind == model.NamespaceGroup && creator.ID != 0:
			acc, err := tx.NamespaceAccess(ctx, creator.ID, ns.ID, today())
			if err != nil || acc >= model.Maintainer {
				return err
			}
			if err := tx.AddMember(ctx, model.SourceProject, p.ID, creator.ID, model.Maintainer, creator.ID, at.UnixMicro()); err != nil {
				return err
			}
			return tx.RefreshAuthorizations(ctx, creator.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("storetest.NewProject %q: %v", p.Path, err)
	}
	got, err := db.ProjectByID(ctx, p.ID)
	if err != nil {
		t.Fatalf("storetest.NewProject: read back %d: %v", p.ID, err)
	}
	return got
}

// AddMember makes user a direct member of a group or project with level,
// as members.Service.Add does (the user's authorizations recomputed), and
// returns the membership with its user. It does not check the level
// against inherited memberships.
func AddMember[S model.Group | model.Project](t testing.TB, db *store.DB, source S, user model.User, level model.AccessLevel, opts ...MemberOption) model.Member {
	t.Helper()
	m := model.Member{UserID: user.ID, AccessLevel: level, CreatedAt: now()}
	m.UpdatedAt = m.CreatedAt
	switch s := any(source).(type) {
	case model.Group:
		m.SourceType, m.SourceID = model.SourceNamespace, s.ID
	case model.Project:
		m.SourceType, m.SourceID = model.SourceProject, s.ID
	}
	for _, o := range opts {
		o(&m)
	}
	ctx, cancel := timeout()
	defer cancel()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateMember(ctx, &m); err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, m.UserID)
	})
	if err != nil {
		t.Fatalf("storetest.AddMember %s %d, user %d: %v", m.SourceType, m.SourceID, m.UserID, err)
	}
	got, err := db.Member(ctx, m.SourceType, m.SourceID, m.UserID)
	if err != nil {
		t.Fatalf("storetest.AddMember: read back: %v", err)
	}
	return got
}

func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

func today() string { return time.Now().UTC().Format(model.DateLayout) }

// secret is a random token with a prefix, like auth.NewSecret.
func secret(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// hashedPath is gitrepo.HashedPath("", id), which storetest may not import.
func hashedPath(id int64) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(id, 10)))
	h := hex.EncodeToString(sum[:])
	return "@hashed/" + h[0:2] + "/" + h[2:4] + "/" + h + ".git"
}
