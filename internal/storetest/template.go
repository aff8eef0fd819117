package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quarry/internal/store"
)

// templateSchema is the schema of every migrated copy: its URL sets
// search_path to it, as NewPostgresSchema's URLs do to theirs.
const templateSchema = "quarry"

// staleAfter is how old a test database of a process not running on this
// machine must be before a new test process drops it: the PostgreSQL
// server may be shared with other machines, whose process ids mean
// nothing here, and none of their test runs lasts that long.
const staleAfter = 6 * time.Hour

// pgTemplate is the migrated template database of this test process: made
// once, by the first test asking for a copy, and copied by every one.
var pgTemplate struct {
	once sync.Once
	name string // quarry_tpl_<pid>_<token>
	err  error
	tok  string       // <pid>_<token>: the part of the names that is this process's
	n    atomic.Int64 // copies made
}

// pgDrops are the copies' drops under way. A test does not wait for its
// database's: DROP DATABASE waits for a checkpoint of the whole server,
// which writes out and syncs every database made since the last one (each
// some 700 relation files), and the test's slot among the parallel tests is
// better spent on the next test. Drops at once share a checkpoint.
// DropPostgresDatabases waits for them.
var pgDrops struct {
	wg    sync.WaitGroup
	slots chan struct{} // at most cap(slots) connections dropping at once
	mu    sync.Mutex
	errs  []error
}

func init() { pgDrops.slots = make(chan struct{}, 4) }

// NewPostgresDatabase returns the URL of a fresh database on the server
// named by QUARRY_TEST_DATABASE_URL, with every migration applied and
// nothing else: a copy of a template this process migrated once (with
// store.Migrate, as a server's start does), so a server started on it
// finds nothing to migrate and creates its administrator as on an empty
// database. The URL sets search_path to the migrated schema. Once the
// test has ended the database is dropped in the background, with whatever
// is still connected to it: a package whose tests use NewPostgresDatabase
// calls DropPostgresDatabases from its TestMain once they are done. A test
// of the migrations themselves uses NewPostgresSchema.
func NewPostgresDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabaseURL)
	if base == "" {
		t.Fatalf("%s is not set", EnvDatabaseURL)
	}
	tpl := &pgTemplate
	tpl.once.Do(func() {
		var b [3]byte
		_, _ = rand.Read(b[:])
		tpl.tok = strconv.Itoa(os.Getpid()) + "_" + hex.EncodeToString(b[:])
		tpl.name, tpl.err = makeTemplate(base, "quarry_tpl_"+tpl.tok)
	})
	if tpl.err != nil {
		t.Fatalf("postgres at %s: migrated template: %v", redact(base), tpl.err)
	}
	name := fmt.Sprintf("quarry_t_%s_%d", tpl.tok, tpl.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Copies may be made at once: each takes a share lock of the template,
	// and none connects to it.
	err := withAdmin(ctx, base, func(admin *sql.Conn) error {
		_, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tpl.name)
		return err
	})
	if err != nil {
		t.Fatalf("postgres at %s: create database %s: %v", redact(base), name, err)
	}
	t.Cleanup(func() {
		pgDrops.wg.Add(1)
		go func() {
			defer pgDrops.wg.Done()
			pgDrops.slots <- struct{}{}
			defer func() { <-pgDrops.slots }()
			// A drop cancelled midway leaves the database invalid, for the
			// sweep to drop; the checkpoint may take long on a busy disk.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := dropDatabase(ctx, base, name); err != nil {
				pgDrops.mu.Lock()
				pgDrops.errs = append(pgDrops.errs, fmt.Errorf("drop database %s: %w", name, err))
				pgDrops.mu.Unlock()
			}
		}()
	})
	u, err := databaseURL(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// DropPostgresDatabases waits for the drops of the copies
// NewPostgresDatabase made and then drops their template, if this process
// made one, and returns what failed. A package whose tests use
// NewPostgresDatabase calls it once they are done (TestMain). What a
// process killed first leaves behind is dropped by a later test process
// (see sweepStale).
func DropPostgresDatabases() error {
	pgDrops.wg.Wait()
	pgDrops.mu.Lock()
	err := errors.Join(pgDrops.errs...)
	pgDrops.errs = nil
	pgDrops.mu.Unlock()
	tpl := &pgTemplate
	if tpl.name == "" || tpl.err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, withAdmin(ctx, os.Getenv(EnvDatabaseURL), func(admin *sql.Conn) error {
		if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+tpl.name+" IS_TEMPLATE false"); err != nil {
			return err
		}
		_, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+tpl.name+" WITH (FORCE)")
		return err
	}))
}

// makeTemplate creates the database name, migrates it and marks it a
// template nothing may connect to (a database being copied must have no
// other session). It first drops the stale test databases of earlier
// processes.
func makeTemplate(base, name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := withAdmin(ctx, base, func(admin *sql.Conn) error {
		sweepStale(ctx, admin)
		_, err := admin.ExecContext(ctx, "CREATE DATABASE "+name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	if err := migrateTemplate(ctx, base, name); err != nil {
		return "", errors.Join(err, dropDatabase(ctx, base, name))
	}
	err = withAdmin(ctx, base, func(admin *sql.Conn) error {
		_, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
		return err
	})
	if err != nil {
		return "", errors.Join(fmt.Errorf("mark %s a template: %w", name, err), dropDatabase(ctx, base, name))
	}
	return name, nil
}

// migrateTemplate creates the schema the copies' URLs name and applies
// every migration to it, through the store as a server's start does.
func migrateTemplate(ctx context.Context, base, name string) error {
	u, err := databaseURL(base, name)
	if err != nil {
		return err
	}
	plain, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	_, err = plain.ExecContext(ctx, "CREATE SCHEMA "+templateSchema)
	if cerr := plain.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	db, err := store.Open(ctx, u, "")
	if err != nil {
		return err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// sweepStale drops the test databases (quarry_tpl_<pid>_<token>,
// quarry_t_<pid>_<token>_<n>) older than staleAfter whose process is not
// running on this machine, or is this one (the process made none yet, so
// they are an earlier process's of the same id): those of test processes
// killed before their cleanup ran. It is
// housekeeping only: a server that does not say how old a database is
// (pg_stat_file needs a privileged role) keeps them.
func sweepStale(ctx context.Context, admin *sql.Conn) {
	rows, err := admin.QueryContext(ctx, `SELECT datname, (pg_stat_file('base/' || oid || '/PG_VERSION')).modification
		FROM pg_database WHERE datname LIKE 'quarry\_t%'`)
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var name string
		var made time.Time
		if rows.Scan(&name, &made) != nil {
			continue
		}
		pid, ok := testDatabasePID(name)
		if ok && time.Since(made) > staleAfter && (pid == os.Getpid() || !running(pid)) {
			stale = append(stale, name)
		}
	}
	rows.Close()
	for _, name := range stale {
		_, _ = admin.ExecContext(ctx, "ALTER DATABASE "+name+" IS_TEMPLATE false")
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
}

// testDatabasePID reads the process id out of a test database's name.
func testDatabasePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "quarry_tpl_")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "quarry_t_"); !ok {
			return 0, false
		}
	}
	rest, _, ok = strings.Cut(rest, "_")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(rest)
	return pid, err == nil && pid > 0
}

// running reports whether a process with this id runs on this machine.
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// dropDatabase drops name, ending the sessions still connected to it.
func dropDatabase(ctx context.Context, base, name string) error {
	return withAdmin(ctx, base, func(admin *sql.Conn) error {
		_, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	})
}

// withAdmin runs fn on one connection to the database of base, closed
// when fn returns: between a test's start and its end no connection of
// its own stays open to count against the server's max_connections.
func withAdmin(ctx context.Context, base string, fn func(*sql.Conn) error) error {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(conn)
}

// databaseURL is base with its database replaced by name and search_path
// set to the migrated schema.
func databaseURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", EnvDatabaseURL, err)
	}
	u.Path = "/" + name
	q := u.Query()
	q.Set("search_path", templateSchema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
