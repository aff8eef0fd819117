package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"quarry/internal/model"
)

// PostgreSQL transactions. database/sql sends BEGIN, every statement and
// COMMIT each in its own round trip; a transaction here runs on one
// connection of the pool and reaches for pgx's own interface where that
// saves round trips: its BEGIN goes out with its first statement (one
// pgx.Batch), and a statement may carry the read that follows it
// (MoveJobReadAhead). Everything else runs through database/sql on the
// same connection, unchanged.

// roundTrips counts the exchanges with PostgreSQL this process waited
// for (a statement, a batch, BEGIN or COMMIT sent alone).
var roundTrips atomic.Int64

// RoundTrips is how many round trips to PostgreSQL this process has
// waited for so far (benchmarks read it; SQLite adds none).
func RoundTrips() int64 { return roundTrips.Load() }

// roundTrip counts a statement sent alone to PostgreSQL.
func (tx *Tx) roundTrip() {
	if tx.dialect == Postgres {
		roundTrips.Add(1)
	}
}

// pgTx is a transaction's state on its connection.
type pgTx struct {
	conn *sql.Conn
	// begun: BEGIN has been sent.
	begun bool
	// sent counts the statements sent; ahead is a read sent with the
	// statement that made sent what ahead.at says.
	sent  int64
	ahead *readAhead
	// last are statements that go with the COMMIT, in its round trip.
	last []lastStmt
}

// lastStmt is a statement sent with the COMMIT and what reads its result.
type lastStmt struct {
	q    string
	args []any
	read func(br pgx.BatchResults) error
}

// withCommit queues a statement to run when the transaction commits,
// after every other statement, in the COMMIT's round trip; read reads
// its result then. A failure fails the commit (the transaction is rolled
// back). A statement that takes a lock others wait for (a project's
// counter) holds it for the server's time and the commit only, not for
// round trips.
func (tx *Tx) withCommit(ctx context.Context, q string, args []any, read func(br pgx.BatchResults) error) error {
	if tx.pg == nil {
		return errors.New("store: a statement for the commit outside a PostgreSQL transaction")
	}
	q = tx.rebind(q)
	if _, err := tx.prepared(ctx, q, args); err != nil { // counted as the statement it is
		return err
	}
	tx.pg.last = append(tx.pg.last, lastStmt{q: q, args: args, read: read})
	return nil
}

// readAhead is what a pipeline's processing reads of its jobs (status
// counts, created jobs), read in the same round trip as the statement
// before (MoveJobReadAhead); counts and created are taken once each.
type readAhead struct {
	at       int64
	pipeline int64
	counts   model.StageStatuses
	created  []model.Job
	// countsTaken, createdTaken: handed out already.
	countsTaken, createdTaken bool
}

// inPgTx is InTx on PostgreSQL.
func (db *DB) inPgTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", mapErr(err))
	}
	pt := &pgTx{conn: conn}
	tx := &Tx{q: conn, dialect: Postgres, notes: db.notes, clock: db.clock, seal: db.seal, authw: db.authw, inTx: true, pg: pt}
	defer func() {
		p := recover()
		if p != nil || err != nil {
			pt.rollback(ctx)
		}
		// A connection left inside a transaction (a failed rollback) is
		// discarded by the driver when the pool takes it back.
		_ = conn.Close()
		if p != nil {
			panic(p)
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = pt.commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	db.committed(tx)
	return nil
}

// raw runs fn with the pgx connection under the transaction.
func (t *pgTx) raw(fn func(c *pgx.Conn) error) error {
	return t.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: a %T is not a pgx connection", dc)
		}
		return fn(c.Conn())
	})
}

// send runs a batch of statements in one round trip, BEGIN first if the
// transaction has not begun; read reads their results in order.
func (t *pgTx) send(ctx context.Context, queue func(b *pgx.Batch), read func(br pgx.BatchResults) error) error {
	return t.raw(func(c *pgx.Conn) error {
		b := &pgx.Batch{}
		begin := !t.begun
		if begin {
			b.Queue("BEGIN")
		}
		queue(b)
		roundTrips.Add(1)
		br := c.SendBatch(ctx, b)
		if begin {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				return err
			}
			t.begun = true
		}
		err := read(br)
		return errors.Join(err, br.Close())
	})
}

// beginAlone sends BEGIN by itself, before a statement that cannot go
// in a batch (a query read row by row through database/sql).
func (t *pgTx) beginAlone(ctx context.Context) error {
	if t.begun {
		return nil
	}
	roundTrips.Add(1)
	if _, err := t.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	t.begun = true
	return nil
}

// commit ends the transaction; one that failed on the server (COMMIT
// answered ROLLBACK) is an error, never a silent loss.
func (t *pgTx) commit(ctx context.Context) error {
	if len(t.last) > 0 {
		last := t.last
		t.last = nil
		return t.send(ctx, func(b *pgx.Batch) {
			for _, st := range last {
				b.Queue(st.q, st.args...)
			}
			b.Queue("COMMIT")
		}, func(br pgx.BatchResults) error {
			for _, st := range last {
				if err := st.read(br); err != nil {
					return err
				}
			}
			return committed(br.Exec())
		})
	}
	if !t.begun {
		return nil // nothing was sent
	}
	return t.raw(func(c *pgx.Conn) error {
		roundTrips.Add(1)
		return committed(c.Exec(ctx, "COMMIT"))
	})
}

// committed is the outcome of a COMMIT: one the server answered with
// ROLLBACK (the transaction had failed) is an error.
func committed(tag pgconn.CommandTag, err error) error {
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// rollback ends a transaction that failed; a rollback that fails leaves
// the connection inside it, which the pool then discards.
func (t *pgTx) rollback(ctx context.Context) {
	if !t.begun {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	roundTrips.Add(1)
	if _, err := t.conn.ExecContext(ctx, "ROLLBACK"); err == nil {
		t.begun = false
	}
}

// pgResult is an exec's result read through pgx.
type pgResult struct{ n int64 }

func (r pgResult) LastInsertId() (int64, error) {
	return 0, errors.New("postgres: no last insert id")
}
func (r pgResult) RowsAffected() (int64, error) { return r.n, nil }

// pgExec runs an exec of the transaction: with BEGIN if it is the first.
func (tx *Tx) pgExec(ctx context.Context, q string, args []any) (sql.Result, error) {
	t := tx.pg
	t.sent++
	if t.begun {
		roundTrips.Add(1)
		return tx.q.ExecContext(ctx, q, args...)
	}
	var res pgResult
	err := t.send(ctx, func(b *pgx.Batch) { b.Queue(q, args...) }, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		res.n = tag.RowsAffected()
		return err
	})
	return res, err
}

// pgRow runs a one-row read of the transaction: with BEGIN if it is
// the first.
func (tx *Tx) pgRow(ctx context.Context, dest []any, q string, args []any) error {
	t := tx.pg
	t.sent++
	if t.begun {
		roundTrips.Add(1)
		return tx.q.QueryRowContext(ctx, q, args...).Scan(dest...)
	}
	return t.send(ctx, func(b *pgx.Batch) { b.Queue(q, args...) }, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(dest...)
	})
}

// pgQuery runs a many-row read of the transaction (BEGIN alone first if
// it is the first statement).
func (tx *Tx) pgQuery(ctx context.Context, q string, args []any) (*sql.Rows, error) {
	t := tx.pg
	if err := t.beginAlone(ctx); err != nil {
		return nil, err
	}
	t.sent++
	roundTrips.Add(1)
	return tx.q.QueryContext(ctx, q, args...)
}

// ahead returns what was read ahead for a pipeline with the statement
// last sent, if anything was (no statement since).
func (tx *Tx) readAhead(pipelineID int64) *readAhead {
	t := tx.pg
	if t == nil || t.ahead == nil {
		return nil
	}
	if a := t.ahead; a.at == t.sent && a.pipeline == pipelineID {
		return a
	}
	t.ahead = nil
	return nil
}

// countsAhead returns the status counts of a pipeline read ahead.
func (tx *Tx) countsAhead(pipelineID int64) (model.StageStatuses, bool) {
	a := tx.readAhead(pipelineID)
	if a == nil || a.countsTaken {
		return nil, false
	}
	a.countsTaken = true
	return a.counts, true
}

// createdAhead returns the created jobs of a pipeline read ahead.
func (tx *Tx) createdAhead(pipelineID int64) ([]model.Job, bool) {
	a := tx.readAhead(pipelineID)
	if a == nil || a.createdTaken {
		return nil, false
	}
	a.createdTaken = true
	return a.created, true
}
