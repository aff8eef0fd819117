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
