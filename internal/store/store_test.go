package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

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
