package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestOnAuthWrite: the hooks run after a commit that wrote a user's row
// or revoked a token — never for a rolled back one, nor for writes that
// do not change what authentication decides (a token's use recorded).
func TestOnAuthWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		u := storetest.NewUser(t, db)
		tok := model.PersonalAccessToken{UserID: u.ID, Name: "t", Digest: "digest-" + u.Username, Scopes: []model.Scope{model.ScopeAPI},
			CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateToken(ctx, &tok) }); err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int64
		db.OnAuthWrite(func() { calls.Add(1) })
		rollback := errors.New("rolled back")
		for _, c := range []struct {
			name string
			fn   func(tx *store.Tx) error
			want int64
		}{
			{"a user updated", func(tx *store.Tx) error {
				cur, err := tx.UserByID(ctx, u.ID)
				if err != nil {
					return err
				}
				cur.State = model.UserBlocked
				return tx.UpdateUser(ctx, &cur)
			}, 1},
			{"a user updated, rolled back", func(tx *store.Tx) error {
				cur, err := tx.UserByID(ctx, u.ID)
				if err != nil {
					return err
				}
				cur.Name = "Other"
				if err := tx.UpdateUser(ctx, &cur); err != nil {
					return err
				}
				return rollback
			}, 0},
			{"a token's use recorded", func(tx *store.Tx) error {
				return tx.TouchToken(ctx, tok.ID, time.Now(), time.Now().Add(-time.Hour))
			}, 0},
			{"a token revoked", func(tx *store.Tx) error {
				_, err := tx.RevokeToken(ctx, tok.ID, time.Now())
				return err
			}, 1},
			{"the dormant sweep", func(tx *store.Tx) error {
				_, err := tx.DeactivateDormantUsers(ctx, "2000-01-01", time.Unix(0, 0))
				return err
			}, 1},
			{"a user deleted", func(tx *store.Tx) error { return tx.DeleteUser(ctx, u.ID) }, 1},
		} {
			before := calls.Load()
			err := db.InTx(ctx, c.fn)
			if err != nil && !errors.Is(err, rollback) {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := calls.Load() - before; got != c.want {
				t.Errorf("%s: the hooks ran %d times; want %d", c.name, got, c.want)
			}
		}
	})
}

// TestOnCommit: the hooks run after every committed transaction,
// whatever it wrote, once, and never after a rolled back one.
func TestOnCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		u := storetest.NewUser(t, db)
		var calls atomic.Int64
		db.OnCommit(func() { calls.Add(1) })
		rollback := errors.New("rolled back")
		for _, c := range []struct {
			name string
			fn   func(tx *store.Tx) error
			want int64
		}{
			{"a token created", func(tx *store.Tx) error {
				tok := model.PersonalAccessToken{UserID: u.ID, Name: "t", Digest: "commit-" + u.Username, Scopes: []model.Scope{model.ScopeAPI},
					CreatedAt: time.Now(), UpdatedAt: time.Now()}
				return tx.CreateToken(ctx, &tok)
			}, 1},
			{"nothing written", func(tx *store.Tx) error { return nil }, 1},
			{"rolled back", func(tx *store.Tx) error {
				cur, err := tx.UserByID(ctx, u.ID)
				if err != nil {
					return err
				}
				cur.Name = "Other"
				if err := tx.UpdateUser(ctx, &cur); err != nil {
					return err
				}
				return rollback
			}, 0},
		} {
			before := calls.Load()
			if err := db.InTx(ctx, c.fn); err != nil && !errors.Is(err, rollback) {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := calls.Load() - before; got != c.want {
				t.Errorf("%s: the hooks ran %d times; want %d", c.name, got, c.want)
			}
		}
	})
}
