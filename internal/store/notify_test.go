package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"quarry/internal/store"
	"quarry/internal/storetest"
)

// waitReady waits, bounded, until sub is live.
func waitReady(t *testing.T, sub *store.Subscription) {
	t.Helper()
	select {
	case <-sub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not ready after 10s")
	}
}

// next returns the next payload on sub, bounded by a deadline.
func next(t *testing.T, sub *store.Subscription) string {
	t.Helper()
	select {
	case p, ok := <-sub.C:
		if !ok {
			t.Fatal("subscription closed")
		}
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no notification after 10s")
	}
	return ""
}

// none checks that nothing is waiting on sub right now.
func none(t *testing.T, sub *store.Subscription, why string) {
	t.Helper()
	select {
	case p := <-sub.C:
		t.Fatalf("%s: got notification %q", why, p)
	default:
	}
}

func notify(t *testing.T, db *store.DB, channel, payload string, fail error) error {
	t.Helper()
	return db.InTx(context.Background(), func(tx *store.Tx) error {
		if err := tx.Notify(context.Background(), channel, payload); err != nil {
			t.Fatalf("notify: %v", err)
		}
		return fail
	})
}

// A notification arrives after its transaction commits, never after a
// rollback, and only on its own channel.
func TestNotify_deliveredOnlyAfterCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		sub, err := db.Subscribe("test_events")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		other, err := db.Subscribe("test_other")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		waitReady(t, sub)
		waitReady(t, other)

		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.Notify(ctx, "test_events", "first"); err != nil {
				return err
			}
			none(t, sub, "before commit")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := next(t, sub); got != "first" {
			t.Errorf("got %q; want first", got)
		}

		boom := errors.New("boom")
		if err := notify(t, db, "test_events", "rolled back", boom); !errors.Is(err, boom) {
			t.Fatalf("rollback: %v", err)
		}
		if err := notify(t, db, "test_events", "second", nil); err != nil {
			t.Fatal(err)
		}
		// Had the rolled-back notification been sent, it would come first.
		if got := next(t, sub); got != "second" {
			t.Errorf("got %q after a rollback; want second", got)
		}
		if err := notify(t, db, "test_other", "elsewhere", nil); err != nil {
			t.Fatal(err)
		}
		if got := next(t, other); got != "elsewhere" {
			t.Errorf("other channel got %q", got)
		}
		none(t, sub, "notification of another channel")
	})
}

// Every subscriber of a channel gets each notification; a closed one gets
// nothing more.
func TestNotify_fansOutToSubscribers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		a, err := db.Subscribe("test_fan")
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := db.Subscribe("test_fan")
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, a)
		waitReady(t, b)
		if err := notify(t, db, "test_fan", "1", nil); err != nil {
			t.Fatal(err)
		}
		if next(t, a) != "1" || next(t, b) != "1" {
			t.Fatal("a subscriber missed the notification")
		}
		b.Close()
		b.Close() // twice is fine
		if _, ok := <-b.C; ok {
			t.Error("closed subscription still delivers")
		}
		if err := notify(t, db, "test_fan", "2", nil); err != nil {
			t.Fatal(err)
		}
		if got := next(t, a); got != "2" {
			t.Errorf("got %q; want 2", got)
		}
	})
}

// Channel names are safe identifiers; payloads fit PostgreSQL's limit;
// Notify needs a transaction.
func TestNotify_refusesBadInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		for _, ch := range []string{"", "Tasks", "1tasks", "a-b", `x"; DROP TABLE tasks; --`, "tasks@public", strings.Repeat("a", 31)} {
			if sub, err := db.Subscribe(ch); err == nil {
				sub.Close()
				t.Errorf("Subscribe(%q) accepted", ch)
			}
			err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Notify(ctx, ch, "") })
			if err == nil {
				t.Errorf("Notify(%q) accepted", ch)
			}
		}
		for _, payload := range []string{strings.Repeat("x", store.MaxNotifyPayload+1), "a\x00b"} {
			err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Notify(ctx, "test_ok", payload) })
			if err == nil {
				t.Errorf("payload of %d bytes accepted", len(payload))
			}
		}
		if err := db.Notify(ctx, "test_ok", "outside"); err == nil {
			t.Error("Notify outside a transaction accepted")
		}
	})
}

// Close ends every subscription and stops the listener goroutine.
//
// Not parallel: it counts the listener goroutines of the whole process,
// and the databases of tests running alongside have listeners of their own.
func TestNotify_closeStopsListener(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db, err := store.Open(context.Background(), target.DatabaseURL, filepath.Join(t.TempDir(), "quarry.db"))
		if err != nil {
			t.Fatal(err)
		}
		sub, err := db.Subscribe("test_close")
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, sub)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case _, ok := <-sub.C:
			if ok {
				t.Error("notification after Close")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("subscription still open after Close")
		}
		sub.Close() // after the DB: fine
		if _, err := db.Subscribe("test_close"); err == nil {
			t.Error("Subscribe on a closed DB accepted")
		}
		// Close has waited for the listener; its goroutine may still be
		// returning.
		deadline := time.Now().Add(5 * time.Second)
		for listenerGoroutines() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := listenerGoroutines(); n != 0 {
			t.Errorf("%d listener goroutines after Close", n)
		}
	})
}

// listenerGoroutines counts the goroutines running a notification
// listener.
func listenerGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "store.(*notifier).listen(")
}

// On PostgreSQL a broken LISTEN connection is replaced; subscribers get a
// "" (notifications may have been lost) and then notifications again.
func TestNotify_postgresListenerReconnects(t *testing.T) {
	if target := postgresTarget(t); target.DatabaseURL != "" {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		sub, err := db.Subscribe("test_reconnect")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		waitReady(t, sub)
		u, err := url.Parse(target.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		listen := `LISTEN "test_reconnect@` + u.Query().Get("search_path") + `"`
		admin, err := sql.Open("pgx", target.DatabaseURL)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		var killed bool
		err = admin.QueryRowContext(ctx, "SELECT COALESCE(bool_or(pg_terminate_backend(pid)), FALSE) FROM pg_stat_activity WHERE query = $1",
			listen).Scan(&killed)
		if err != nil || !killed {
			t.Fatalf("terminate listener (%s): %v %v", listen, killed, err)
		}
		if got := next(t, sub); got != "" {
			t.Fatalf("got %q after the reconnect; want \"\"", got)
		}
		if err := notify(t, db, "test_reconnect", "again", nil); err != nil {
			t.Fatal(err)
		}
		if got := next(t, sub); got != "again" {
			t.Errorf("got %q; want again", got)
		}
		if db.ListenError() != nil {
			t.Errorf("listen error while listening: %v", db.ListenError())
		}
	}
}

// postgresTarget returns a PostgreSQL target when the tests run on
// PostgreSQL (storetest.Dialects), and skips the test, saying so, when they
// do not.
func postgresTarget(t *testing.T) storetest.Target {
	for _, d := range storetest.Dialects() {
		if d == "postgres" {
			return storetest.Target{Name: d, DatabaseURL: storetest.NewPostgresSchema(t)}
		}
	}
	t.Skipf("PostgreSQL only: set %s", storetest.EnvDatabaseURL)
	return storetest.Target{}
}
