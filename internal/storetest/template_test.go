package storetest

import (
	"context"
	"testing"
	"time"

	"quarry/internal/store"
)

// A copy of the template is a database as the migrations leave it: nothing
// to migrate, no user (a server's first start creates its administrator),
// and a database of its own for each copy.
func TestNewPostgresDatabase_migratedAndEmpty(t *testing.T) {
	for _, d := range Dialects() {
		if d != "postgres" {
			continue
		}
		t.Run(d, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			first, second := NewPostgresDatabase(t), NewPostgresDatabase(t)
			if first == second {
				t.Fatalf("two copies share the URL %s", first)
			}
			for _, u := range []string{first, second} {
				db, err := store.Open(ctx, u, "")
				if err != nil {
					t.Fatal(err)
				}
				pending, err := db.PendingMigrations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				users, err := db.CountUsers(ctx)
				if err != nil {
					t.Fatal(err)
				}
				db.Close()
				if pending != 0 || users != 0 {
					t.Errorf("%s: %d migrations pending, %d users; want 0, 0", redact(u), pending, users)
				}
			}
		})
	}
}

func TestTestDatabasePID(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"quarry_tpl_1234_a1b2c3", 1234, true},
		{"quarry_t_1234_a1b2c3_17", 1234, true},
		{"quarry_tpl_1234", 0, false},
		{"quarry_t_x_a1b2c3_1", 0, false},
		{"quarry_t_0_a1b2c3_1", 0, false},
		{"quarry", 0, false},
		{"test", 0, false},
	} {
		pid, ok := testDatabasePID(c.name)
		if pid != c.pid || ok != c.ok {
			t.Errorf("testDatabasePID(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}
