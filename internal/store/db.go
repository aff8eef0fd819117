// Package store holds all of Quarry's SQL. Queries are hand-written with `?`
// placeholders and run unchanged on SQLite and PostgreSQL; the dialect
// work is rebinding placeholders and mapping driver errors, both here, and
// sending a PostgreSQL transaction's statements in fewer round trips
// (pgtx.go).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"quarry/internal/gencache"
)

// Dialect names the SQL engine behind a DB.
type Dialect string

// The supported engines.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Tx runs queries. Inside DB.InTx it is one transaction; the Tx embedded in
// DB reads from the reader pool outside any transaction (writes must go
// through InTx).
type Tx struct {
	q       queryer
	dialect Dialect
	// On SQLite, reads outside transactions reuse statements prepared
	// once per connection: parsing SQL costs more than running a keyed
	// lookup. (Transactions hold the only writer connection, so they
	// prepare as they go.)
	stmts *stmtCache
	// notes delivers notifications (Notify); one per DB.
	notes *notifier
	// clock stamps writes; one per DB (SetClock).
	clock *clock
	// seal seals and opens secrets; one per DB (SetSealer).
	seal *sealerRef
	// authw runs after a commit that wrote a user or a token; one per DB
	// (OnAuthWrite).
	authw *hooks
	// inTx marks a Tx made by InTx; after holds what runs once it commits,
	// notified the SQLite notifications already queued.
	inTx     bool
	after    []func()
	notified map[[2]string]bool
	// On SQLite, a transaction reuses the statements prepared on the one
	// writer connection (sqlTx.StmtContext); those it did not find are
	// prepared there once it has ended (missed), for the next ones.
	sqlTx  *sql.Tx
	wstmts *stmtCache
	missed []string
	// pg is a PostgreSQL transaction's state (pgtx.go); nil outside
	// transactions and on SQLite.
	pg *pgTx
	// starts remembers where offset pages start (listStart); on SQLite's
	// reader only, nil elsewhere.
	starts *gencache.Cache[listStartEntry]
	// pages remembers whole pages of the lists read most (pages.go); on
	// SQLite's reader only, nil elsewhere.
	pages *gencache.Cache[any]
}

// hooks are functions run after commits (OnAuthWrite, OnCommit).
type hooks struct {
	mu  sync.Mutex
	fns []func()
}

func (h *hooks) add(fn func()) {
	h.mu.Lock()
	h.fns = append(h.fns, fn)
	h.mu.Unlock()
}

func (h *hooks) run() {
	h.mu.Lock()
	fns := h.fns
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// OnAuthWrite adds fn to what runs after every commit, in this process,
// that wrote a user's row (its state, admin flag, deletion, the dormant
// sweep) or a token's (revoked): caches of what authentication decided
// forget it there. Writes by other processes are not seen: a cache must
// bound its entries' age or be used where this process is the only one.
func (db *DB) OnAuthWrite(fn func()) { db.authw.add(fn) }

// OnCommit adds fn to what runs after every write transaction this
// process commits (InTx), whatever it wrote: caches of reads that join
// many tables (a project's head: the project, its namespace, the
// caller's memberships and authorizations) forget them there. Writes by
// other processes are not seen, as with OnAuthWrite.
func (db *DB) OnCommit(fn func()) { db.commits.add(fn) }

// authWritten runs the OnAuthWrite hooks once this transaction commits.
func (tx *Tx) authWritten() {
	if h := tx.authw; h != nil {
		tx.afterCommit(h.run)
	}
}

// afterCommit runs fn once the transaction has committed, before InTx
// returns; never if it rolls back. Hooks run in the order they were added.
func (tx *Tx) afterCommit(fn func()) { tx.after = append(tx.after, fn) }

// DB is an open, migrated database.
type DB struct {
	*Tx
	Dialect Dialect
	w, r    *sql.DB
	// wstmts are statements prepared on the SQLite writer (nil on
	// PostgreSQL, whose driver caches statements per connection).
	wstmts *stmtCache
	// commits run after every committed transaction (OnCommit).
	commits hooks
}

// IdleConnectionTimeout closes a pooled connection unused that long: a
// busy server keeps its connections (with SQLite's page cache and the
// prepared statements each holds), an idle one gives their memory back,
// and PostgreSQL's connections to the processes that share it.
const IdleConnectionTimeout = time.Minute

// The PostgreSQL pool: at most pgMaxConns connections, each caching up to
// pgStatementCache prepared statements (pgx's statement cache, least
// recently used out; list queries vary with their filters).
const (
	pgMaxConns       = 32
	pgStatementCache = 1024
)

// Open connects to PostgreSQL when databaseURL is set, else to the SQLite
// file at sqlitePath (created if missing). It does not migrate.
func Open(ctx context.Context, databaseURL, sqlitePath string) (*DB, error) {
	if databaseURL != "" {
		cfg, err := pgx.ParseConfig(databaseURL)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// Each statement is prepared once per connection and then runs
		// in one round trip (bind and execute), unless the URL chooses
		// otherwise (default_query_exec_mode=exec behind a transaction
		// pooler, statement_cache_capacity).
		if !strings.Contains(databaseURL, "default_query_exec_mode") {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
		}
		if !strings.Contains(databaseURL, "statement_cache_capacity") {
			cfg.StatementCacheCapacity = pgStatementCache
		}
		pool := stdlib.OpenDB(*cfg)
		// Connections are kept without an age limit while they are used
		// (a connection closed takes its prepared statements with it);
		// one unused for IdleConnectionTimeout is closed.
		pool.SetMaxOpenConns(pgMaxConns)
		pool.SetMaxIdleConns(pgMaxConns)
		pool.SetConnMaxLifetime(0)
		pool.SetConnMaxIdleTime(IdleConnectionTimeout)
		if err := pool.PingContext(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("connect postgres: %w", err)
		}
		// Notification channels are scoped to the schema the connections use.
		var schema sql.NullString
		if err := pool.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			pool.Close()
			return nil, fmt.Errorf("postgres schema: %w", err)
		}
		notes := newPostgresNotifier(databaseURL, schema.String)
		return &DB{Tx: &Tx{q: pool, dialect: Postgres, notes: notes, clock: &clock{now: time.Now}, seal: &sealerRef{}, authw: &hooks{}}, Dialect: Postgres, w: pool, r: pool}, nil
	}
	if err := os.MkdirAll(filepath.Dir(sqlitePath), 0o750); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	pragmas := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		pragmas.Add("_pragma", p)
	}
	wdsn := "file:" + sqlitePath + "?" + pragmas.Encode() + "&_txlock=immediate"
	w, err := sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	// One writer: SQLite allows one at a time, and queueing in Go is
	// cheaper than retrying SQLITE_BUSY.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(IdleConnectionTimeout)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %q: %w", sqlitePath, err)
	}
	pragmas.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", "file:"+sqlitePath+"?"+pragmas.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite reader: %w", err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(IdleConnectionTimeout)
	notes := newNotifier()
	starts := gencache.New[listStartEntry](startsFor, maxStarts)
	db := &DB{Tx: &Tx{q: r, dialect: SQLite, stmts: newStmtCache(r), notes: notes, clock: &clock{now: time.Now}, seal: &sealerRef{}, authw: &hooks{},
		starts: starts, pages: newPages()}, Dialect: SQLite, w: w, r: r, wstmts: newStmtCache(w)}
	db.OnCommit(starts.Invalidate)
	db.OnCommit(db.pages.Invalidate)
	return db, nil
}

// Close closes every connection, ends every subscription and stops the
// notification listener.
func (db *DB) Close() error {
	db.notes.close()
	db.Tx.stmts.close()
	db.wstmts.close()
	err := db.w.Close()
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// ReleaseIdle closes the SQLite pools' idle connections, and with them
// their page caches and prepared statements: what an idle server holds
// for nothing (SQLite's memory is its own, out of the collector's
// reach). The next statement opens a connection and prepares again.
// PostgreSQL's connections stay: their prepared statements are worth
// more, and the pool closes one unused for IdleConnectionTimeout.
func (db *DB) ReleaseIdle() {
	if db.Dialect != SQLite {
		return
	}
	for _, p := range []*sql.DB{db.r, db.w} {
		n := p.Stats().MaxOpenConnections
		p.SetMaxIdleConns(0) // closes the idle ones
		p.SetMaxIdleConns(n)
	}
}

// Ping checks that the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// InTx runs fn in one transaction on the writer, committing when fn returns
// nil and rolling back otherwise. Once the commit succeeds, what the
// transaction queued to happen after it (Notify) runs, before InTx returns.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if db.Dialect == Postgres {
		return db.inPgTx(ctx, fn)
	}
	sqlTx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", mapErr(err))
	}
	tx := &Tx{q: sqlTx, dialect: db.Dialect, notes: db.notes, clock: db.clock, seal: db.seal, authw: db.authw, inTx: true, sqlTx: sqlTx, wstmts: db.wstmts}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = sqlTx.Rollback()
		}
		// The writer is free again: prepare what this transaction
		// missed, for the next ones.
		db.wstmts.prepareAll(ctx, tx.missed)
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	db.committed(tx)
	return nil
}

// committed runs what a transaction queued for after its commit, then
// the OnCommit hooks.
func (db *DB) committed(tx *Tx) {
	for _, f := range tx.after {
		f()
	}
	db.commits.run()
}

// clock is the one clock of a DB: the time writes stamp, and services
// read (DB.Now), so a test can set the time of everything at once.
type clock struct{ now func() time.Time }

// SetClock replaces the clock (tests); call it before the DB is used.
func (db *DB) SetClock(now func() time.Time) { db.clock.now = now }

// Now is the time by the DB's clock.
func (tx *Tx) Now() time.Time { return tx.clock.now() }

// Dialect is the engine the Tx speaks to.
func (tx *Tx) Dialect() Dialect { return tx.dialect }

var rebound sync.Map // query → PostgreSQL form

// rebind turns `?` placeholders into `$n` for PostgreSQL. Queries must not
// contain a literal `?`.
func (tx *Tx) rebind(q string) string {
	if tx.dialect != Postgres {
		return q
	}
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	s := b.String()
	rebound.Store(q, s)
	return s
}

// statements counts the statements this process has sent to any
// database (benchmarks read it to count the queries of a request).
var statements atomic.Int64

// Statements is how many statements this process has sent so far.
func Statements() int64 { return statements.Load() }

// QueryCounter counts the statements sent on behalf of one context (a
// request): tests prove that a list costs a fixed number of queries.
// Made by RecordQueries, it also keeps each statement with its arguments.
type QueryCounter struct {
	n    atomic.Int64
	keep bool // set when made, read without the lock
	mu   sync.Mutex
	log  []Query
}

// Query is a statement as a store method wrote it (`?` placeholders) with
// its arguments.
type Query struct {
	SQL  string
	Args []any
}

// RecordQueries is CountQueries keeping the statements too (Queries).
func RecordQueries(ctx context.Context) (context.Context, *QueryCounter) {
	c := &QueryCounter{keep: true}
	return context.WithValue(ctx, queryCounterKey{}, c), c
}

func (c *QueryCounter) record(q string, args []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, Query{SQL: q, Args: slices.Clone(args)})
}

// Queries returns the statements recorded so far (RecordQueries).
func (c *QueryCounter) Queries() []Query {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

// N is how many statements were sent so far.
func (c *QueryCounter) N() int64 { return c.n.Load() }

type queryCounterKey struct{}

// CountQueries returns a context whose statements, and those of every
// context derived from it, are counted by the returned counter.
func CountQueries(ctx context.Context) (context.Context, *QueryCounter) {
	c := &QueryCounter{}
	return context.WithValue(ctx, queryCounterKey{}, c), c
}

// prepared returns the cached statement for q, or nil when statements
// are not cached. Inside a transaction on SQLite it is the writer's
// statement bound to the transaction; one not prepared yet is noted and
// the query runs unprepared this time.
func (tx *Tx) prepared(ctx context.Context, q string, args []any) (*sql.Stmt, error) {
	statements.Add(1)
	if c, ok := ctx.Value(queryCounterKey{}).(*QueryCounter); ok {
		c.n.Add(1)
		if c.keep {
			c.record(q, args)
		}
	}
	if tx.sqlTx != nil {
		st, ok := tx.wstmts.lookup(q)
		if !ok {
			if tx.wstmts != nil {
				tx.missed = append(tx.missed, q)
			}
			return nil, nil
		}
		return tx.sqlTx.StmtContext(ctx, st), nil
	}
	return tx.stmts.get(ctx, q)
}

func (tx *Tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := tx.prepared(ctx, q, args)
	if err != nil {
		return nil, mapErr(err)
	}
	if st != nil {
		res, err := st.ExecContext(ctx, args...)
		return res, mapErr(err)
	}
	if tx.pg != nil {
		res, err := tx.pgExec(ctx, tx.rebind(q), args)
		return res, mapErr(err)
	}
	tx.roundTrip()
	res, err := tx.q.ExecContext(ctx, tx.rebind(q), args...)
	return res, mapErr(err)
}

// execN runs a statement and returns the number of rows it changed.
func (tx *Tx) execN(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

func (tx *Tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := tx.prepared(ctx, q, args)
	if err != nil {
		return nil, mapErr(err)
	}
	if st != nil {
		rows, err := st.QueryContext(ctx, args...)
		return rows, mapErr(err)
	}
	if tx.pg != nil {
		rows, err := tx.pgQuery(ctx, tx.rebind(q), args)
		return rows, mapErr(err)
	}
	tx.roundTrip()
	rows, err := tx.q.QueryContext(ctx, tx.rebind(q), args...)
	return rows, mapErr(err)
}

// row scans one row into dest; sql.ErrNoRows becomes model.ErrNotFound.
func (tx *Tx) row(ctx context.Context, dest []any, q string, args ...any) error {
	st, err := tx.prepared(ctx, q, args)
	if err != nil {
		return mapErr(err)
	}
	if st != nil {
		return mapErr(st.QueryRowContext(ctx, args...).Scan(dest...))
	}
	if tx.pg != nil {
		return mapErr(tx.pgRow(ctx, dest, tx.rebind(q), args))
	}
	tx.roundTrip()
	return mapErr(tx.q.QueryRowContext(ctx, tx.rebind(q), args...).Scan(dest...))
}

// insert runs an INSERT … RETURNING id and returns the new id.
func (tx *Tx) insert(ctx context.Context, q string, args ...any) (int64, error) {
	var id int64
	err := tx.row(ctx, []any{&id}, q+" RETURNING id", args...)
	return id, err
}

// maxInsertRows bounds the rows of one multi-row INSERT (insertRows):
// 64 rows of a 35-column table are 2,240 parameters, far below either
// engine's limit, and statements of 1 to 64 rows keep the prepared
// statements few.
const maxInsertRows = 64

// insertRows inserts rows (each the values of columns, in order) into
// table with one multi-row INSERT … RETURNING id per maxInsertRows rows,
// and returns the new ids in the rows' order. Ids are handed out as the
// rows are inserted, in the order of the VALUES list (PostgreSQL's
// sequence is called row by row; SQLite gives each new row the largest
// id plus one), so the rows' ids are the returned ids in ascending order,
// whatever order RETURNING lists them in.
func (tx *Tx) insertRows(ctx context.Context, table, columns string, rows [][]any) ([]int64, error) {
	ids := make([]int64, 0, len(rows))
	err := multiRowInserts(table, columns, rows, func(q string, args []any, n int) error {
		first := len(ids)
		err := tx.each(ctx, q+" RETURNING id", args, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
		if err == nil && len(ids)-first != n {
			err = fmt.Errorf("insert into %s: %d ids for %d rows", table, len(ids)-first, n)
		}
		if err != nil {
			ids = ids[:first]
			return err
		}
		slices.Sort(ids[first:])
		return nil
	})
	return ids, err
}

// execRows inserts rows into table as insertRows does, without ids.
func (tx *Tx) execRows(ctx context.Context, table, columns string, rows [][]any) error {
	return multiRowInserts(table, columns, rows, func(q string, args []any, _ int) error {
		_, err := tx.exec(ctx, q, args...)
		return err
	})
}

// multiRowInserts calls run with each INSERT of up to maxInsertRows of
// rows, its arguments and its number of rows.
func multiRowInserts(table, columns string, rows [][]any, run func(q string, args []any, n int) error) error {
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), maxInsertRows)]
		rows = rows[len(chunk):]
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + columns + ") VALUES ")
		row := "(" + placeholders(len(chunk[0])) + ")"
		args := make([]any, 0, len(chunk)*len(chunk[0]))
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
			args = append(args, r...)
		}
		if err := run(b.String(), args, len(chunk)); err != nil {
			return err
		}
	}
	return nil
}

// each runs q and calls scan for every row.
func (tx *Tx) each(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return mapErr(err)
		}
	}
	return mapErr(rows.Err())
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// assignments turns "a, b" into "a = ?, b = ?".
func assignments(columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c) + " = ?"
	}
	return strings.Join(cols, ", ")
}

// stmtCache keeps prepared statements of one pool by query text.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache; list queries vary with their filters.
const maxCachedStmts = 2000

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns the prepared statement for q, preparing it on first use;
// nil (not an error) when the cache is off or full.
func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	st, ok := c.m[q]
	full := len(c.m) >= maxCachedStmts
	c.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[q]; ok {
		st.Close()
		return prev, nil
	}
	c.m[q] = st
	return st, nil
}

// lookup returns the prepared statement for q without preparing it.
func (c *stmtCache) lookup(q string) (*sql.Stmt, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[q]
	return st, ok
}

// prepareAll prepares the queries not cached yet (a statement that fails
// to prepare is left out: its query keeps running unprepared).
func (c *stmtCache) prepareAll(ctx context.Context, queries []string) {
	if c == nil {
		return
	}
	for _, q := range queries {
		_, _ = c.get(ctx, q)
	}
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// PreparedStatements counts, by their text, the statements prepared on the
// connection this transaction runs on: PostgreSQL's pg_prepared_statements
// of the session (pgx's statement cache); on SQLite those of the writer
// (none outside a transaction, which reads on the reader pool).
// The text is the one sent (PostgreSQL's has `$n` placeholders). Tests
// prove with it that a statement is prepared once per connection.
func (tx *Tx) PreparedStatements(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	if tx.dialect != Postgres {
		if tx.wstmts != nil {
			tx.wstmts.mu.Lock()
			for q := range tx.wstmts.m {
				out[q]++
			}
			tx.wstmts.mu.Unlock()
		}
		return out, nil
	}
	rows, err := tx.q.QueryContext(ctx, "SELECT statement FROM pg_prepared_statements")
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			return nil, mapErr(err)
		}
		out[q]++
	}
	return out, mapErr(rows.Err())
}

// FullScans explains q with args and returns what in its plan reads a
// whole table, or reads one whole and sorts it: on PostgreSQL a
// sequential scan in a plan made with them disabled (enable_seqscan =
// off, so that one left is one no index can serve) and a Sort node over
// a scan with no index condition; on SQLite a temporary B-tree for ORDER
// BY in a plan that scans a table whole. Tests prove with it that the lists' filters and orders
// have their indexes.
func (db *DB) FullScans(ctx context.Context, q string, args []any) ([]string, error) {
	var plan []string
	err := db.InTx(ctx, func(tx *Tx) error {
		explain := "EXPLAIN QUERY PLAN "
		if tx.dialect == Postgres {
			if err := tx.pg.beginAlone(ctx); err != nil {
				return mapErr(err)
			}
			if _, err := tx.q.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
				return mapErr(err)
			}
			explain = "EXPLAIN (COSTS OFF) "
		}
		rows, err := tx.q.QueryContext(ctx, explain+tx.rebind(q), args...)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return mapErr(err)
		}
		for rows.Next() {
			// The plan's text is the last column.
			cells := make([]any, len(cols))
			var line string
			for i := range cells {
				cells[i] = new(any)
			}
			cells[len(cells)-1] = &line
			if err := rows.Scan(cells...); err != nil {
				return mapErr(err)
			}
			plan = append(plan, line)
		}
		return mapErr(rows.Err())
	})
	if err != nil {
		return nil, err
	}
	if db.Dialect == Postgres {
		return pgFullScans(plan), nil
	}
	return sqliteFullScans(plan), nil
}

// pgFullScans finds in the lines of an EXPLAIN the sequential scans, and
// the sorts whose input holds a scan without an index condition (a whole
// table read, then sorted).
func pgFullScans(plan []string) []string {
	type line struct {
		depth int
		text  string
		node  bool
	}
	lines := make([]line, len(plan))
	for i, l := range plan {
		text := strings.TrimSpace(l)
		rest, isNode := strings.CutPrefix(text, "->")
		if !isNode {
			isNode = i == 0 // the plan's root
		}
		lines[i] = line{depth: len(l) - len(strings.TrimLeft(l, " ")), text: strings.TrimSpace(rest), node: isNode}
	}
	// whole reports whether the scan node at i has no index condition.
	whole := func(i int) bool {
		// (A bitmap scan has its condition on the index scan it reads.)
		if !strings.Contains(lines[i].text, "Scan") || strings.HasPrefix(lines[i].text, "Bitmap") {
			return false
		}
		for k := i + 1; k < len(lines) && !lines[k].node; k++ {
			if strings.HasPrefix(lines[k].text, "Index Cond:") || strings.HasPrefix(lines[k].text, "Recheck Cond:") {
				return false
			}
		}
		return strings.Contains(lines[i].text, " on ")
	}
	var found []string
	for i, l := range lines {
		if !l.node {
			continue
		}
		if strings.HasPrefix(l.text, "Seq Scan on ") {
			found = append(found, l.text)
		}
		if !strings.HasPrefix(l.text, "Sort") && !strings.HasPrefix(l.text, "Incremental Sort") {
			continue
		}
		for k := i + 1; k < len(lines) && (lines[k].depth > l.depth || !lines[k].node); k++ {
			if lines[k].node && whole(k) {
				found = append(found, l.text+" over "+lines[k].text)
				break
			}
		}
	}
	return found
}

// sqliteFullScans finds in the lines of an EXPLAIN QUERY PLAN the sorts
// for ORDER BY of a plan that scans a table whole. (A SCAN alone walks a
// table in its id's order, which a list ordered by id stops at its page's
// end: the keyset order.)
func sqliteFullScans(plan []string) []string {
	subqueries := map[string]bool{}
	for _, step := range plan {
		for _, kind := range []string{"CO-ROUTINE ", "MATERIALIZE "} {
			if name, ok := strings.CutPrefix(step, kind); ok {
				subqueries[name] = true
			}
		}
	}
	var scans []string
	for _, step := range plan {
		if rest, ok := strings.CutPrefix(step, "SCAN "); ok && !strings.HasPrefix(rest, "CONSTANT") &&
			!subqueries[strings.Fields(rest)[0]] {
			scans = append(scans, step)
		}
	}
	var found []string
	for _, step := range plan {
		if len(scans) > 0 && strings.HasPrefix(step, "USE TEMP B-TREE FOR ORDER BY") {
			found = append(found, step+" after "+strings.Join(scans, ", "))
		}
	}
	return found
}
