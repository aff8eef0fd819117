package store

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrations embed.FS

// Migrate applies every pending migration of the DB's dialect. On
// PostgreSQL an advisory lock keeps concurrent processes from migrating at
// once.
func (db *DB) Migrate(ctx context.Context) (applied int, err error) {
	sub, err := fs.Sub(migrations, "migrations/"+string(db.Dialect))
	if err != nil {
		return 0, fmt.Errorf("migrations for %s: %w", db.Dialect, err)
	}
	var opts []goose.ProviderOption
	dialect := goose.DialectSQLite3
	if db.Dialect == Postgres {
		dialect = goose.DialectPostgres
		// The lock guards one schema's migrations: processes sharing a
		// database but not a schema (tests, several installations) do not
		// wait for each other; those sharing one retry every second.
		var schema string
		if err := db.w.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return 0, fmt.Errorf("migration lock: %w", mapErr(err))
		}
		h := fnv.New64a()
		h.Write([]byte("quarry migrate " + schema))
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
		if err != nil {
			return 0, fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db.w, sub, opts...)
	if err != nil {
		return 0, fmt.Errorf("load migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	return len(res), nil
}

// SchemaVersion is the newest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	return v, mapErr(err)
}

// PendingMigrations counts the migrations of this build that the database
// has not applied (every one, on a database never migrated). It writes
// nothing, so a process that must not write (a secondary geo node) can
// ask.
func (db *DB) PendingMigrations(ctx context.Context) (int, error) {
	sub, err := fs.Sub(migrations, "migrations/"+string(db.Dialect))
	if err != nil {
		return 0, fmt.Errorf("migrations for %s: %w", db.Dialect, err)
	}
	files, err := fs.Glob(sub, "*.sql")
	if err != nil {
		return 0, err
	}
	exists := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'"
	if db.Dialect == Postgres {
		exists = "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'goose_db_version'"
	}
	var n int
	if err := db.r.QueryRowContext(ctx, exists).Scan(&n); err != nil {
		return 0, fmt.Errorf("migration state: %w", mapErr(err))
	}
	applied := map[int64]bool{}
	if n > 0 {
		rows, err := db.r.QueryContext(ctx, "SELECT version_id FROM goose_db_version WHERE is_applied")
		if err != nil {
			return 0, fmt.Errorf("migration state: %w", mapErr(err))
		}
		defer rows.Close()
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				return 0, mapErr(err)
			}
			applied[v] = true
		}
		if err := rows.Err(); err != nil {
			return 0, mapErr(err)
		}
	}
	pending := 0
	for _, f := range files {
		var v int64
		if _, err := fmt.Sscanf(f, "%d_", &v); err != nil {
			return 0, fmt.Errorf("migration file %q: %w", f, err)
		}
		if !applied[v] {
			pending++
		}
	}
	return pending, nil
}
