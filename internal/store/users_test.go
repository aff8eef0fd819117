package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// maxPages bounds every walk through keyset pages: a store that keeps
// handing out cursors fails the test instead of hanging it.
const maxPages = 1000

func newUser(name string, at time.Time) model.User {
	return model.User{Username: name, Email: name + "@example.com", Name: "N " + name, State: model.UserActive,
		Type: model.UserHuman, CanCreateGroup: true, ProjectsLimit: 10, ThemeID: 1, ColorSchemeID: 1,
		CreatedAt: at, UpdatedAt: at}
}

func create(t *testing.T, db *store.DB, u *model.User) error {
	t.Helper()
	return db.InTx(context.Background(), func(tx *store.Tx) error { return tx.CreateUser(context.Background(), u) })
}

func TestUsers_createGetAndUniqueness(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		u := newUser("Alice", now)
		exp := now.Add(time.Hour)
		u.PasswordExpiresAt = &exp
		u.PublicEmail = "Alice@example.com"
		limit := 5
		u.SharedRunnersMinutesLimit = &limit
		if err := create(t, db, &u); err != nil {
			t.Fatal(err)
		}
		if u.ID == 0 || u.NamespaceID == 0 || u.Version != 1 {
			t.Fatalf("created %+v", u)
		}
		got, err := db.UserByUsername(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || !got.CreatedAt.Equal(now) || got.PasswordExpiresAt == nil || !got.PasswordExpiresAt.Equal(exp) ||
			got.PublicEmail != u.PublicEmail || got.SharedRunnersMinutesLimit == nil || *got.SharedRunnersMinutesLimit != 5 ||
			got.ConfirmedAt != nil || got.State != model.UserActive {
			t.Errorf("read back %+v", got)
		}
		if _, err := db.UserByID(ctx, u.ID+100); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("missing user: %v", err)
		}
		dupName := newUser("ALICE", now)
		dupName.Email = "other@example.com"
		if err := create(t, db, &dupName); !store.IsUnique(err, store.UniqueUsername) {
			t.Errorf("duplicate username: %v", err)
		}
		dupMail := newUser("bob", now)
		dupMail.Email = "ALICE@example.com"
		if err := create(t, db, &dupMail); !store.IsUnique(err, store.UniqueEmail) || !errors.Is(err, model.ErrConflict) {
			t.Errorf("duplicate e-mail: %v", err)
		}
		taken, err := db.TopLevelPathTaken(ctx, "ALICE", 0)
		if err != nil || !taken {
			t.Errorf("namespace path taken = %v, %v", taken, err)
		}
		if taken, _ := db.EmailTaken(ctx, "alice@EXAMPLE.com", u.ID); taken {
			t.Error("own e-mail counted as taken")
		}
	})
}

// Two writers that read the same version: the second update is refused.
func TestUsers_updateDetectsConcurrentWriter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		u := storetest.NewUser(t, db, storetest.Username("carol"))
		a, _ := db.UserByID(ctx, u.ID)
		b, _ := db.UserByID(ctx, u.ID)
		a.Bio, b.Bio = "first", "second"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateUser(ctx, &a) }); err != nil {
			t.Fatal(err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateUser(ctx, &b) })
		if model.KindOf(err) != model.KindConflict {
			t.Fatalf("second writer: %v; want a conflict", err)
		}
		got, _ := db.UserByID(ctx, u.ID)
		if got.Bio != "first" || got.Version != 2 {
			t.Errorf("stored bio %q version %d", got.Bio, got.Version)
		}
		// A rename moves the personal namespace along.
		got.Username = "caroline"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateUser(ctx, &got) }); err != nil {
			t.Fatal(err)
		}
		if taken, _ := db.TopLevelPathTaken(ctx, "caroline", 0); !taken {
			t.Error("namespace did not follow the rename")
		}
		if taken, _ := db.TopLevelPathTaken(ctx, "carol", 0); taken {
			t.Error("old namespace path still taken")
		}
	})
}

func TestUsers_listFiltersAndPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var ids []int64
		for i := 0; i < 25; i++ {
			u := storetest.NewUser(t, db, storetest.Username(fmt.Sprintf("user%02d", i)), func(u *model.User) {
				u.Name = fmt.Sprintf("Name %02d", 24-i)
				u.CreatedAt = base.Add(time.Duration(i) * time.Hour)
				switch i {
				case 3:
					u.State = model.UserBlocked
				case 4:
					u.External = true
				case 5:
					u.Admin = true
				case 6:
					u.Type = model.UserGhost
				}
			})
			ids = append(ids, u.ID)
		}
		count := func(f model.UserFilter) int {
			t.Helper()
			_, info, err := db.ListUsers(ctx, f, model.Page{Number: 1, PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			return info.Total
		}
		after := base.Add(20 * time.Hour)
		for name, c := range map[string]struct {
			f    model.UserFilter
			want int
		}{
			"all":              {model.UserFilter{}, 25},
			"visible":          {model.UserFilter{VisibleStatesOnly: true}, 24},
			"blocked":          {model.UserFilter{Blocked: true}, 1},
			"external":         {model.UserFilter{External: true}, 1},
			"exclude external": {model.UserFilter{ExcludeExternal: true}, 24},
			"admins":           {model.UserFilter{Admins: true}, 1},
			"exclude internal": {model.UserFilter{ExcludeInternal: true}, 24},
			"username":         {model.UserFilter{Username: "USER07"}, 1},
			"search name":      {model.UserFilter{Search: "name 1"}, 10},
			"search literal %": {model.UserFilter{Search: "%"}, 0},
			"search email":     {model.UserFilter{Search: "user08@example.com", SearchEmails: true}, 1},
			"email hidden":     {model.UserFilter{Search: "user08@example.com"}, 0},
			"created after":    {model.UserFilter{CreatedAfter: &after}, 5}, // inclusive, like GitLab
			"without projects": {model.UserFilter{WithoutProjects: true}, 25},
			"two factor on":    {model.UserFilter{TwoFactor: "enabled"}, 0},
		} {
			if got := count(c.f); got != c.want {
				t.Errorf("%s: %d users; want %d", name, got, c.want)
			}
		}

		// Offset pages report totals and "more".
		us, info, err := db.ListUsers(ctx, model.UserFilter{OrderBy: "id", Desc: true}, model.Page{Number: 3, PerPage: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(us) != 5 || info.HasMore || !info.TotalKnown || info.Total != 25 || us[0].ID != ids[4] {
			t.Errorf("page 3: %d users, info %+v", len(us), info)
		}

		// Keyset pages by name visit every user once, in order.
		var seen []string
		pg := model.Page{PerPage: 7, Keyset: true}
		for pages := 0; ; pages++ {
			if pages == maxPages {
				t.Fatalf("keyset: a next cursor after %d pages", maxPages)
			}
			us, info, err := db.ListUsers(ctx, model.UserFilter{OrderBy: "name"}, pg)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				seen = append(seen, u.Name)
			}
			if info.NextCursor == "" {
				break
			}
			pg.Cursor = info.NextCursor
		}
		if len(seen) != 25 {
			t.Fatalf("keyset saw %d users", len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i-1] >= seen[i] {
				t.Fatalf("keyset order broken at %d: %q then %q", i, seen[i-1], seen[i])
			}
		}
		if _, _, err := db.ListUsers(ctx, model.UserFilter{}, model.Page{PerPage: 5, Keyset: true, Cursor: "garbage!"}); model.KindOf(err) != model.KindParam {
			t.Errorf("bad cursor: %v", err)
		}
	})
}

func TestTokens_storeLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		u := storetest.NewUser(t, db)
		now := time.Now().UTC()
		tok := model.PersonalAccessToken{UserID: u.ID, Name: "ci", Digest: "d1", Scopes: []model.Scope{model.ScopeAPI, model.ScopeSudo},
			ExpiresAt: "2099-01-01", CreatedAt: now, UpdatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateToken(ctx, &tok) }); err != nil {
			t.Fatal(err)
		}
		got, owner, err := db.TokenWithUser(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		if owner.ID != u.ID || got.ID != tok.ID || !got.HasScope(model.ScopeSudo) || got.ExpiresAt != "2099-01-01" {
			t.Errorf("token %+v owner %d", got, owner.ID)
		}
		var first, second bool
		err = db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if first, err = tx.RevokeToken(ctx, tok.ID, now); err != nil {
				return err
			}
			second, err = tx.RevokeToken(ctx, tok.ID, now)
			return err
		})
		if err != nil || !first || second {
			t.Errorf("revoke twice: %v %v %v", first, second, err)
		}
		ts, _, err := db.ListTokens(ctx, model.TokenFilter{UserID: u.ID, State: "inactive", Today: "2026-01-01"}, model.Page{Number: 1, PerPage: 20})
		if err != nil || len(ts) != 1 {
			t.Errorf("inactive tokens %d, %v", len(ts), err)
		}
	})
}
