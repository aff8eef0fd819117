package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/model"
)

// Every change of a task's state goes through moveTask, which checks the
// move against model's transition table and applies it as a compare-and-set
// on the state (and, for a running task, on the worker holding it). Callers
// pass the time: the queue owns the clock.

const taskColumns = `id, kind, payload, state, attempts, max_attempts, takeovers, run_at, lease_until, locked_by, last_error, created_at,
	updated_at`

func taskDest(t *model.Task) []any {
	return []any{&t.ID, &t.Kind, &t.Payload, &t.State, &t.Attempts, &t.MaxAttempts, &t.Takeovers, tsScan{&t.RunAt},
		nullTSScan{&t.LeaseUntil}, nullString{&t.LockedBy}, nullString{&t.LastError}, tsScan{&t.CreatedAt}, tsScan{&t.UpdatedAt}}
}

// EnqueueTask stores t as a pending task created at now (RunAt zero: due at
// now; MaxAttempts zero: 3) and sets its ID, State and times. Call it inside
// the transaction that makes the work necessary, so both land or neither.
// When t has a DedupeKey and a task of the same kind and key is already
// pending, nothing is stored, t.ID stays 0 and inserted is false: the
// waiting task does the work.
func (tx *Tx) EnqueueTask(ctx context.Context, t *model.Task, now time.Time) (inserted bool, err error) {
	if t.RunAt.IsZero() {
		t.RunAt = now
	}
	if t.MaxAttempts == 0 {
		t.MaxAttempts = 3
	}
	t.State, t.Attempts, t.CreatedAt, t.UpdatedAt = model.TaskPending, 0, now, now
	id, err := tx.insert(ctx, `INSERT INTO tasks (kind, payload, state, attempts, max_attempts, run_at, created_at, updated_at, dedupe_key)
		VALUES (?, ?, 'pending', 0, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		t.Kind, t.Payload, t.MaxAttempts, micros(t.RunAt), micros(now), micros(now), emptyNull(t.DedupeKey))
	if errors.Is(err, model.ErrNotFound) && t.DedupeKey != "" {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	t.ID = id
	return true, nil
}

// moveTask moves task id from state from to state to, setting the columns
// of set (an "a = ?, b = ?" list with its args) as well. holder, when not
// empty, is the worker that must hold the task. A move the transition
// table does not allow is refused (model.ErrTransition) without a query;
// moved is false when the task was no longer in from (or no longer held by
// holder): another worker got there first. With dest, the moved row is
// scanned into it.
func (tx *Tx) moveTask(ctx context.Context, id int64, from, to model.TaskState, holder string, dest []any, set string, args ...any) (moved bool, err error) {
	if !from.CanMoveTo(to) {
		return false, fmt.Errorf("task %d from %s to %s: %w", id, from, to, model.ErrTransition)
	}
	q := "UPDATE tasks SET state = ?, " + set + " WHERE id = ? AND state = ?"
	all := append(append([]any{string(to)}, args...), id, string(from))
	if holder != "" {
		q += " AND locked_by = ?"
		all = append(all, holder)
	}
	if dest != nil {
		err := tx.row(ctx, dest, q+" RETURNING "+taskColumns, all...)
		if errors.Is(err, model.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	n, err := tx.execN(ctx, q, all...)
	return n == 1, err
}

// ClaimTask takes the oldest due task — pending with run_at reached, or
// running with an expired lease (its worker died: a takeover) — of one of
// kinds (no kinds: of any kind) and marks it running under worker until
// leaseUntil. A claim of a pending task counts an attempt; a takeover
// counts a takeover instead (the attempt that was cut short goes on),
// and an attempt too once the task was taken over model.MaxTakeovers
// times. ok is false when none is due. On
// PostgreSQL, SKIP LOCKED lets several processes claim at once without
// taking the same task; SQLite has a single writer.
func (db *DB) ClaimTask(ctx context.Context, worker string, now, leaseUntil time.Time, kinds ...string) (t model.Task, ok bool, err error) {
	filter, args := kindFilter(kinds)
	pick := `SELECT id, state, locked_by FROM tasks WHERE ` + filter + `((state = 'pending' AND run_at <= ?) OR (state = 'running' AND lease_until < ?))
		ORDER BY run_at, id LIMIT 1`
	if db.Dialect == Postgres {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	args = append(args, micros(now), micros(now))
	err = db.InTx(ctx, func(tx *Tx) error {
		var id int64
		var state model.TaskState
		var holder string
		if err := tx.row(ctx, []any{&id, &state, nullString{&holder}}, pick, args...); err != nil {
			return err
		}
		// The row is locked (PostgreSQL) or the writer is ours (SQLite):
		// the move cannot lose a race, but it is checked all the same.
		ok, err = tx.moveTask(ctx, id, state, model.TaskRunning, holder, taskDest(&t),
			"attempts = attempts + CASE WHEN state = 'pending' OR takeovers >= ? THEN 1 ELSE 0 END, "+
				"takeovers = takeovers + CASE WHEN state = 'running' THEN 1 ELSE 0 END, lease_until = ?, locked_by = ?, updated_at = ?",
			model.MaxTakeovers, micros(leaseUntil), worker, micros(now))
		return err
	})
	if errors.Is(err, model.ErrNotFound) {
		return t, false, nil
	}
	return t, ok && err == nil, err
}

// kindFilter is the "kind IN (…) AND " condition for kinds, with its
// arguments; empty for no kinds.
func kindFilter(kinds []string) (string, []any) {
	if len(kinds) == 0 {
		return "", nil
	}
	args := make([]any, len(kinds), len(kinds)+2)
	for i, k := range kinds {
		args[i] = k
	}
	return "kind IN (" + placeholders(len(kinds)) + ") AND ", args
}

// NextTaskDue returns the earliest time at which a task of one of kinds
// (no kinds: of any kind) becomes claimable — a pending task's run_at, a
// running task's lease end; ok is false when there is none.
func (tx *Tx) NextTaskDue(ctx context.Context, kinds ...string) (at time.Time, ok bool, err error) {
	filter, args := kindFilter(kinds)
	var next *time.Time
	err = tx.row(ctx, []any{nullTSScan{&next}}, `SELECT MIN(CASE WHEN state = 'pending' THEN run_at ELSE lease_until END)
		FROM tasks WHERE `+filter+`state IN ('pending', 'running')`, args...)
	if err != nil || next == nil {
		return at, false, err
	}
	return *next, true, nil
}

// ExtendTaskLease keeps a running task's lease while worker holds it;
// false means the worker lost the task.
func (tx *Tx) ExtendTaskLease(ctx context.Context, id int64, worker string, leaseUntil time.Time) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE tasks SET lease_until = ? WHERE id = ? AND state = 'running' AND locked_by = ?",
		micros(leaseUntil), id, worker)
	return n == 1, err
}

// FinishTask moves a running task held by worker to next at now: done,
// failed, or pending again at runAt for a retry; lastError is kept. moved
// is false when the worker no longer held the task (its lease ran out and
// another worker took it over): the row is left alone. A next the
// transition table does not allow is refused with model.ErrTransition.
func (tx *Tx) FinishTask(ctx context.Context, id int64, worker string, next model.TaskState, runAt time.Time, lastError string, now time.Time) (moved bool, err error) {
	if next == model.TaskRunning {
		// running → running is a takeover, which only ClaimTask does.
		return false, fmt.Errorf("finish task %d as %s: %w", id, next, model.ErrTransition)
	}
	return tx.moveTask(ctx, id, model.TaskRunning, next, worker, nil,
		"run_at = ?, lease_until = NULL, locked_by = NULL, last_error = ?, updated_at = ?",
		micros(runAt), emptyNull(lastError), micros(now))
}

// CompletePendingTask moves a pending task to done at now without running
// it: its enqueuer did the work itself. false when the task is no longer
// pending (a worker claimed it, and will find the work done).
func (tx *Tx) CompletePendingTask(ctx context.Context, id int64, now time.Time) (bool, error) {
	return tx.moveTask(ctx, id, model.TaskPending, model.TaskDone, "", nil, "updated_at = ?", micros(now))
}

// TaskByID returns one task.
func (tx *Tx) TaskByID(ctx context.Context, id int64) (model.Task, error) {
	var t model.Task
	err := tx.row(ctx, taskDest(&t), "SELECT "+taskColumns+" FROM tasks WHERE id = ?", id)
	return t, err
}

// DeleteFinishedTasks removes done tasks last updated before before.
func (tx *Tx) DeleteFinishedTasks(ctx context.Context, before time.Time) (int64, error) {
	return tx.execN(ctx, "DELETE FROM tasks WHERE state = 'done' AND updated_at < ?", micros(before))
}
