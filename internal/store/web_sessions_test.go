package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestWebSessions: a session is found by its digest with its user, moves
// its end while live and not once ended, ends on delete and is swept
// once expired.
func TestWebSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		u := newUser("alice", now)
		if err := create(t, db, &u); err != nil {
			t.Fatal(err)
		}
		in := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		mk := func(digest string, expires time.Time) model.WebSession {
			t.Helper()
			s := model.WebSession{Digest: digest, UserID: u.ID, CreatedAt: now, ExpiresAt: expires, LastSeenAt: now}
			in(func(tx *store.Tx) error { return tx.CreateWebSession(ctx, &s) })
			if s.ID == 0 {
				t.Fatal("no id")
			}
			return s
		}
		a := mk("digest-a", now.Add(time.Hour))
		mk("digest-b", now.Add(time.Minute))
		mk("digest-c", now.Add(2*time.Hour))
		got, gu, err := db.WebSessionWithUser(ctx, "digest-a")
		if err != nil || got.ID != a.ID || gu.ID != u.ID || gu.Username != "alice" || !got.ExpiresAt.Equal(now.Add(time.Hour)) || !got.CreatedAt.Equal(now) {
			t.Fatalf("read back %+v of %+v: %v", got, gu, err)
		}
		if _, _, err := db.WebSessionWithUser(ctx, "digest-x"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("missing session: %v", err)
		}
		for _, c := range []struct {
			seen time.Time
			live bool
		}{
			{now.Add(30 * time.Minute), true},   // moves the end to +90m
			{now.Add(80 * time.Minute), true},   // past the first end, within the moved one
			{now.Add(300 * time.Minute), false}, // past the end
		} {
			var live bool
			in(func(tx *store.Tx) (err error) {
				live, err = tx.TouchWebSession(ctx, a.ID, c.seen, c.seen.Add(time.Hour))
				return err
			})
			if live != c.live {
				t.Errorf("touch at %v: live %v; want %v", c.seen, live, c.live)
			}
		}
		var n int64
		in(func(tx *store.Tx) (err error) {
			n, err = tx.DeleteExpiredWebSessions(ctx, now.Add(3*time.Hour), 1)
			return err
		})
		if n != 1 {
			t.Errorf("swept %d with a limit of 1", n)
		}
		in(func(tx *store.Tx) (err error) {
			n, err = tx.DeleteExpiredWebSessions(ctx, now.Add(90*time.Minute), 16)
			return err
		})
		if _, _, err := db.WebSessionWithUser(ctx, "digest-b"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("expired session kept: %v", err)
		}
		in(func(tx *store.Tx) error { return tx.DeleteWebSession(ctx, "digest-c") })
		if _, _, err := db.WebSessionWithUser(ctx, "digest-c"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("deleted session kept: %v", err)
		}
	})
}
