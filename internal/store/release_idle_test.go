package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReleaseIdle: on SQLite the idle connections of both pools are
// closed (their page caches and prepared statements go) and the next
// statements open new ones; on PostgreSQL the pool keeps its connections.
func TestReleaseIdle(t *testing.T) {
	ctx := context.Background()
	targets := map[string]string{"sqlite": ""}
	if u := os.Getenv("QUARRY_TEST_DATABASE_URL"); u != "" {
		targets["postgres"] = u
	}
	for name, url := range targets {
		t.Run(name, func(t *testing.T) {
			db, err := Open(ctx, url, filepath.Join(t.TempDir(), "q.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			use := func() {
				t.Helper()
				var one int
				if err := db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
					t.Fatalf("read: %d, %v", one, err)
				}
				if _, err := db.w.ExecContext(ctx, "SELECT 1"); err != nil {
					t.Fatalf("writer: %v", err)
				}
			}
			use()
			idle := func() int { return db.r.Stats().Idle + db.w.Stats().Idle }
			if idle() == 0 {
				t.Fatal("no idle connection after use")
			}
			before := idle()
			db.ReleaseIdle()
			if db.Dialect == SQLite && idle() != 0 {
				t.Errorf("%d idle connections after ReleaseIdle; want 0", idle())
			}
			if db.Dialect == Postgres && idle() != before {
				t.Errorf("%d idle connections after ReleaseIdle; want the %d kept", idle(), before)
			}
			use()
			if db.r.Stats().MaxOpenConnections == 0 || idle() == 0 {
				t.Errorf("the pools keep no idle connection after ReleaseIdle (stats %+v)", db.r.Stats())
			}
		})
	}
}
