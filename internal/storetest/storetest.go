// Package storetest opens migrated test databases: SQLite always, and a
// fresh PostgreSQL schema when QUARRY_TEST_DATABASE_URL is set (or, for a
// server to start on, a fresh copy of a migrated database:
// NewPostgresDatabase). A test that
// was told to use PostgreSQL and cannot reach it fails; it never skips.
//
// Row builders insert the rows a domain service would create, through the
// store's own methods, and return what the store reads back. Each call
// takes a fresh number, so names never collide, even between parallel
// tests on one database. Options run on the value before it is inserted and
// may change any field; the builders do not validate, so a test can build
// a state the services would refuse. Nothing is written outside the
// database (no repository, no avatar). Errors fail the test (t.Fatal).
//
//	db := storetest.Open(t, target, "")
//	owner := storetest.NewUser(t, db)
//	admin := storetest.NewUser(t, db, storetest.Admin())
//	g := storetest.NewGroup(t, db, owner)
//	sub := storetest.NewGroup(t, db, owner, storetest.Parent(g))
//	p := storetest.NewProject(t, db, owner, storetest.InGroup(sub),
//		func(p *model.Project) { p.Visibility = model.Public })
//	storetest.AddMember(t, db, g, dev, model.Developer)
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"quarry/internal/secrets"
	"quarry/internal/store"
)

// EnvDatabaseURL names the variable that enables PostgreSQL in tests.
const EnvDatabaseURL = "QUARRY_TEST_DATABASE_URL"

// Target is one database a test body runs against.
type Target struct {
	Name string // "sqlite" or "postgres"
	// DatabaseURL is empty for SQLite; for PostgreSQL it selects a fresh
	// schema that is dropped when the test ends.
	DatabaseURL string
}

// Dialects lists the databases every store and API test runs on.
func Dialects() []string {
	if os.Getenv(EnvDatabaseURL) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// Each runs body once per database in Dialects, as subtests named after them.
func Each(t *testing.T, body func(t *testing.T, target Target)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(d, func(t *testing.T) {
			target := Target{Name: d}
			if d == "postgres" {
				target.DatabaseURL = NewPostgresSchema(t)
			}
			body(t, target)
		})
	}
}

// Open returns a migrated database of the given target; SQLite files live in
// dir (a temp dir when empty). Its secrets are sealed with a key of its
// own held in memory, so the store's sealing runs in every store test.
func Open(t testing.TB, target Target, dir string) *store.DB {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, target.DatabaseURL, filepath.Join(dir, "quarry.db"))
	if err != nil {
		t.Fatalf("open %s: %v", target.Name, err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetSealer(secrets.Ephemeral())
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", target.Name, err)
	}
	return db
}

// NewPostgresSchema creates an empty schema on the server named by
// QUARRY_TEST_DATABASE_URL and returns a URL whose connections use it. The
// schema is dropped when the test ends.
func NewPostgresSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		t.Fatalf("%s is not set", EnvDatabaseURL)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("postgres at %s: create schema: %v", redact(base), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvDatabaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable url)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return strings.TrimSpace(u.String())
}
