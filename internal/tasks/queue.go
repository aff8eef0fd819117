// Package tasks runs durable background work: tasks are rows in the
// database, claimed with a lease by a bounded pool of workers, retried with
// backoff, and picked up again after a crash when their lease runs out. On
// PostgreSQL several Quarry processes share one queue without running a
// task twice.
package tasks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// Handler runs one kind of task. Run is called for every attempt; Failed,
// if set, once the last attempt has failed (to record the failure where
// users see it, e.g. a fork's import_status).
type Handler struct {
	Run    func(ctx context.Context, payload []byte) error
	Failed func(ctx context.Context, payload []byte, err error)
}

// Permanent marks an error that retrying cannot fix.
type Permanent struct{ Err error }

func (p Permanent) Error() string { return p.Err.Error() }
func (p Permanent) Unwrap() error { return p.Err }

// Queue is the task queue and its worker pool.
type Queue struct {
	db       *store.DB
	log      *slog.Logger
	handlers map[string]Handler
	worker   string
	workers  int
	lease    time.Duration
	poll     time.Duration
	wake     chan struct{}
	wg       sync.WaitGroup
	now      func() time.Time
}

// Options tune a queue; zero values take the defaults.
type Options struct {
	Workers int           // concurrent tasks
	Lease   time.Duration // how long a claim lasts without renewal (default 1m)
	Poll    time.Duration // how often idle workers look for due tasks (default 1s)
}

// New returns a queue; register handlers, then Start it.
func New(db *store.DB, log *slog.Logger, o Options) *Queue {
	if o.Workers < 0 {
		o.Workers = 0
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Queue{db: db, log: log, handlers: map[string]Handler{}, workers: o.Workers, lease: o.Lease, poll: o.Poll,
		worker: host + "-" + strconv.Itoa(os.Getpid()) + "-" + fmt.Sprintf("%x", b), wake: make(chan struct{}, 1), now: time.Now}
}

// Register sets the handler of a kind. Call before Start.
func (q *Queue) Register(kind string, h Handler) { q.handlers[kind] = h }

// Enqueue stores a task for kind with payload (marshalled as JSON) inside
// tx, and returns it. Wake the workers after the transaction commits.
func Enqueue(ctx context.Context, tx *store.Tx, kind string, payload any) (model.Task, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return model.Task{}, fmt.Errorf("task payload: %w", err)
	}
	t := model.Task{Kind: kind, Payload: string(b)}
	return t, tx.EnqueueTask(ctx, &t)
}

// Wake tells idle workers that a task is waiting.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Start runs the workers until ctx is cancelled; Wait waits for them.
func (q *Queue) Start(ctx context.Context) {
	for i := 0; i < q.workers; i++ {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.loop(ctx)
		}()
	}
}

// Wait blocks until every worker has stopped.
func (q *Queue) Wait() { q.wg.Wait() }

func (q *Queue) loop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-q.wake:
		}
		for ctx.Err() == nil && q.runOne(ctx) {
		}
		t.Reset(q.poll)
	}
}

// runOne claims and runs one due task; it reports whether there was one.
func (q *Queue) runOne(ctx context.Context) bool {
	now := q.now()
	task, ok, err := q.db.ClaimTask(ctx, q.worker, now, now.Add(q.lease))
	if err != nil {
		if ctx.Err() == nil {
			q.log.Error("claim task", "err", err)
		}
		return false
	}
	if !ok {
		return false
	}
	q.execute(ctx, task)
	return true
}

func (q *Queue) execute(ctx context.Context, task model.Task) {
	log := q.log.With("task_id", task.ID, "kind", task.Kind, "attempt", task.Attempts)
	h, ok := q.handlers[task.Kind]
	var runErr error
	if !ok {
		runErr = Permanent{fmt.Errorf("no handler for task kind %q", task.Kind)}
	} else {
		runErr = q.runWithLease(ctx, task, h)
	}
	if ctx.Err() != nil {
		// Shutting down: leave the task running; its lease runs out and
		// a worker (here after restart, or elsewhere) takes it again.
		return
	}
	next, runAt, msg := model.TaskDone, q.now(), ""
	if runErr != nil {
		msg = runErr.Error()
		var perm Permanent
		if task.Attempts >= task.MaxAttempts || errors.As(runErr, &perm) {
			next = model.TaskFailed
		} else {
			next = model.TaskPending
			runAt = q.now().Add(backoff(task.Attempts))
		}
	}
	if next == model.TaskFailed {
		log.Error("task failed", "err", runErr)
		if ok && h.Failed != nil {
			h.Failed(ctx, []byte(task.Payload), runErr)
		}
	} else if runErr != nil {
		log.Warn("task will be retried", "err", runErr, "at", runAt)
	}
	err := q.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.FinishTask(ctx, task.ID, q.worker, next, runAt, msg)
		return err
	})
	if err != nil {
		log.Error("finish task", "err", err)
	}
}

// runWithLease runs the handler while renewing the lease.
func (q *Queue) runWithLease(ctx context.Context, task model.Task, h Handler) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(q.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				var held bool
				err := q.db.InTx(rctx, func(tx *store.Tx) error {
					var err error
					held, err = tx.ExtendTaskLease(rctx, task.ID, q.worker, q.now().Add(q.lease))
					return err
				})
				if err == nil && !held {
					q.log.Warn("task lease lost", "task_id", task.ID)
					cancel()
					return
				}
			}
		}
	}()
	err := runSafely(rctx, h, []byte(task.Payload))
	cancel()
	<-done
	return err
}

func runSafely(ctx context.Context, h Handler, payload []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanent{fmt.Errorf("task panicked: %v", p)}
		}
	}()
	return h.Run(ctx, payload)
}

// backoff is the wait before retry n+1: 5s, 20s, 80s, … capped at 10 minutes.
func backoff(attempt int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < attempt && d < 10*time.Minute; i++ {
		d *= 4
	}
	return min(d, 10*time.Minute)
}
