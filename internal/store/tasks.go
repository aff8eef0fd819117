package store

import (
	"context"
	"errors"
	"time"

	"quarry/internal/model"
)

const taskColumns = `id, kind, payload, state, attempts, max_attempts, run_at, lease_until, locked_by, last_error, created_at, updated_at`

func taskDest(t *model.Task) []any {
	return []any{&t.ID, &t.Kind, &t.Payload, &t.State, &t.Attempts, &t.MaxAttempts, tsScan{&t.RunAt},
		nullTSScan{&t.LeaseUntil}, nullString{&t.LockedBy}, nullString{&t.LastError}, tsScan{&t.CreatedAt}, tsScan{&t.UpdatedAt}}
}

// EnqueueTask stores a pending task and sets t.ID. Call it inside the
// transaction that makes the work necessary, so both land or neither.
func (tx *Tx) EnqueueTask(ctx context.Context, t *model.Task) error {
	now := time.Now()
	if t.RunAt.IsZero() {
		t.RunAt = now
	}
	if t.MaxAttempts == 0 {
		t.MaxAttempts = 3
	}
	t.State, t.CreatedAt, t.UpdatedAt = model.TaskPending, now, now
	q := `INSERT INTO tasks (kind, payload, state, attempts, max_attempts, run_at, created_at, updated_at, dedupe_key)
		VALUES (?, ?, 'pending', 0, ?, ?, ?, ?, ?)`
	args := []any{t.Kind, t.Payload, t.MaxAttempts, micros(t.RunAt), micros(now), micros(now), emptyNull(t.DedupeKey)}
	if t.DedupeKey != "" {
		// Already pending for this key: the waiting task does the work.
		_, err := tx.exec(ctx, q+" ON CONFLICT DO NOTHING", args...)
		return err
	}
	id, err := tx.insert(ctx, q, args...)
	t.ID = id
	return err
}

// ClaimTask takes the oldest task that is due (pending and due, or running
// with an expired lease: its worker died), marks it running under worker
// until leaseUntil and counts the attempt. ok is false when none is due.
// On PostgreSQL, SKIP LOCKED lets several processes claim at once without
// taking the same task; SQLite has a single writer.
func (db *DB) ClaimTask(ctx context.Context, worker string, now, leaseUntil time.Time) (t model.Task, ok bool, err error) {
	pick := `SELECT id FROM tasks WHERE (state = 'pending' AND run_at <= ?) OR (state = 'running' AND lease_until < ?)
		ORDER BY run_at, id LIMIT 1`
	if db.Dialect == Postgres {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		return tx.row(ctx, taskDest(&t), `UPDATE tasks SET state = 'running', attempts = attempts + 1, lease_until = ?,
			locked_by = ?, updated_at = ? WHERE id = (`+pick+`) RETURNING `+taskColumns,
			micros(leaseUntil), worker, micros(now), micros(now), micros(now))
	})
	if errors.Is(err, model.ErrNotFound) {
		return t, false, nil
	}
	return t, err == nil, err
}

// ExtendTaskLease keeps a running task's lease while its worker holds it;
// false means the worker lost the task.
func (tx *Tx) ExtendTaskLease(ctx context.Context, id int64, worker string, leaseUntil time.Time) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE tasks SET lease_until = ? WHERE id = ? AND state = 'running' AND locked_by = ?",
		micros(leaseUntil), id, worker)
	return n == 1, err
}

// FinishTask moves a running task held by worker to its next state:
// done, failed, or pending again at runAt for a retry.
func (tx *Tx) FinishTask(ctx context.Context, id int64, worker string, next model.TaskState, runAt time.Time, lastError string) (bool, error) {
	n, err := tx.execN(ctx, `UPDATE tasks SET state = ?, run_at = ?, lease_until = NULL, locked_by = NULL, last_error = ?, updated_at = ?
		WHERE id = ? AND state = 'running' AND locked_by = ?`, string(next), micros(runAt), emptyNull(lastError), micros(time.Now()), id, worker)
	return n == 1, err
}

// TaskByID returns one task.
func (tx *Tx) TaskByID(ctx context.Context, id int64) (model.Task, error) {
	var t model.Task
	err := tx.row(ctx, taskDest(&t), "SELECT "+taskColumns+" FROM tasks WHERE id = ?", id)
	return t, err
}

// DeleteFinishedTasks removes done tasks older than before.
func (tx *Tx) DeleteFinishedTasks(ctx context.Context, before time.Time) (int64, error) {
	return tx.execN(ctx, "DELETE FROM tasks WHERE state = 'done' AND updated_at < ?", micros(before))
}
