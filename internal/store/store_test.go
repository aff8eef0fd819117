package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

func TestMigrate_fromEmptyAndIdempotent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 1 {
			t.Fatalf("schema version %d after migrate", v)
		}
		n, err := db.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("second migrate applied %d migrations; want 0", n)
		}
		if err := db.Ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
}

// Both dialects must carry the same numbered migrations.
func TestMigrations_sameNumbersOnBothDialects(t *testing.T) {
	list := func(d string) []string {
		var names []string
		err := fs.WalkDir(os.DirFS("migrations"), d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				names = append(names, filepath.Base(p))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(names)
		return names
	}
	s, p := list("sqlite"), list("postgres")
	if len(s) != len(p) {
		t.Fatalf("sqlite has %v, postgres has %v", s, p)
	}
	for i := range s {
		if s[i] != p[i] {
			t.Errorf("migration %d: sqlite %q, postgres %q", i, s[i], p[i])
		}
	}
}

// Access flows down the group tree and from direct project memberships; a
// member of a project alone sees the groups above it; expired and removed
// memberships grant nothing.
func TestAuthorizations_followGroupTreeAndMemberships(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		today := time.Now().UTC().Format(model.DateLayout)
		owner := storetest.NewUser(t, db)
		top := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, owner, storetest.Parent(top))
		p := storetest.NewProject(t, db, owner, storetest.InGroup(sub))
		dev, rep, gone, stranger := storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db)
		storetest.AddMember(t, db, top, dev, model.Developer)
		storetest.AddMember(t, db, p, rep, model.Reporter)
		storetest.AddMember(t, db, top, gone, model.Maintainer, storetest.ExpiresAt("2000-01-01"))

		for _, c := range []struct {
			name           string
			user           model.User
			project, subNS model.AccessLevel
			topNS          model.AccessLevel
		}{
			{"owner", owner, model.Owner, model.Owner, model.Owner},
			{"developer of the top group", dev, model.Developer, model.Developer, model.Developer},
			{"reporter of the project", rep, model.Reporter, model.NoAccess, model.NoAccess}, // sees the groups above
			{"expired maintainer", gone, 0, -1, -1},
			{"stranger", stranger, 0, -1, -1},
		} {
			if got, err := db.ProjectAccess(ctx, c.user.ID, p.ID, today); err != nil || got != c.project {
				t.Errorf("%s: project access %d, %v; want %d", c.name, got, err, c.project)
			}
			if got, err := db.NamespaceAccess(ctx, c.user.ID, sub.ID, today); err != nil || got != c.subNS {
				t.Errorf("%s: subgroup access %d, %v; want %d", c.name, got, err, c.subNS)
			}
			if got, err := db.NamespaceAccess(ctx, c.user.ID, top.ID, today); err != nil || got != c.topNS {
				t.Errorf("%s: top group access %d, %v; want %d", c.name, got, err, c.topNS)
			}
		}

		list := func(u model.User) int {
			t.Helper()
			ps, _, err := db.ListProjects(ctx, store.ProjectFilter{Viewer: store.Viewer{UserID: u.ID, Today: today}, Membership: true},
				model.Page{Number: 1, PerPage: 20})
			if err != nil {
				t.Fatal(err)
			}
			return len(ps)
		}
		if list(rep) != 1 || list(stranger) != 0 || list(gone) != 0 {
			t.Errorf("member projects: reporter %d, stranger %d, expired %d", list(rep), list(stranger), list(gone))
		}

		// Removing the membership and recomputing takes the access away.
		m, err := db.Member(ctx, model.SourceNamespace, top.ID, dev.ID)
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.DeleteMember(ctx, m.ID); err != nil {
				return err
			}
			return tx.RefreshAuthorizations(ctx, dev.ID)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := db.ProjectAccess(ctx, dev.ID, p.ID, today); got != 0 {
			t.Errorf("removed developer keeps access %d", got)
		}
	})
}

// PendingMigrations counts every migration on a database never migrated
// and none once migrated, without writing.
func TestPendingMigrations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db, err := store.Open(ctx, target.DatabaseURL, filepath.Join(t.TempDir(), "quarry.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		before, err := db.PendingMigrations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join("migrations", string(db.Dialect), "*.sql"))
		if before == 0 || before != len(files) {
			t.Errorf("pending before migrating: %d; want %d", before, len(files))
		}
		if again, err := db.PendingMigrations(ctx); err != nil || again != before {
			t.Errorf("asking again: %d, %v", again, err)
		}
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if after, err := db.PendingMigrations(ctx); err != nil || after != 0 {
			t.Errorf("pending after migrating: %d, %v", after, err)
		}
	})
}
