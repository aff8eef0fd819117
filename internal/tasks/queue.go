// Package tasks runs durable background work: tasks are rows in the
// database, claimed with a lease by a bounded pool of workers, retried with
// backoff, and picked up again after a crash when their lease runs out. On
// PostgreSQL several Quarry processes share one queue without running a
// task twice.
//
// Work is declared as a typed Kind (Define), enqueued inside the caller's
// transaction (Kind.Enqueue) and run by a handler registered on a Queue
// (Handle). Enqueueing notifies the queue's store channel; once the
// transaction commits, idle workers of every process wake up. Besides,
// idle workers sleep only until the next task falls due, and look again at
// the (long) poll interval in case a notification was lost.
package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// channel is the store notification channel on which Enqueue announces a
// new task; the payload is the task's kind.
const channel = "tasks"

// Permanent marks an error that retrying cannot fix: the task fails at
// once.
type Permanent struct{ Err error }

func (p Permanent) Error() string { return p.Err.Error() }
func (p Permanent) Unwrap() error { return p.Err }

// handler runs one kind's tasks on their stored payload.
type handler struct {
	run     func(ctx context.Context, payload string) error
	failed  func(ctx context.Context, payload string, err error) // nil: none
	backoff func(attempt int) time.Duration
}

// Queue is the task queue and its worker pool.
type Queue struct {
	db        *store.DB
	log       *slog.Logger
	handlers  map[string]*handler
	kinds     []string // the kinds with a handler, fixed by Start
	started   bool
	worker    string
	workers   int
	lease     time.Duration
	poll      time.Duration
	now       func() time.Time
	wake      chan struct{}
	listening chan struct{}
	wg        sync.WaitGroup
}

// Options tune a queue; zero values take the defaults.
type Options struct {
	Workers int           // concurrent tasks (0: Start runs nothing)
	Lease   time.Duration // how long a claim lasts without renewal (default 1m)
	// Poll is the longest an idle worker sleeps before it looks for due
	// tasks (default 10s). It is a safety net: notifications wake workers
	// for new tasks, and workers wake by themselves when a known task
	// falls due.
	Poll time.Duration
	// Now is the queue's clock (default time.Now): claims, leases, retry
	// times and finish times are taken from it.
	Now func() time.Time
}

// New returns a queue; register handlers with Handle, then Start it.
func New(db *store.DB, log *slog.Logger, o Options) *Queue {
	if o.Workers < 0 {
		o.Workers = 0
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Queue{db: db, log: log, handlers: map[string]*handler{}, workers: o.Workers, lease: o.Lease, poll: o.Poll,
		now: o.Now, worker: host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:]),
		wake: make(chan struct{}, 1), listening: make(chan struct{})}
}

// register sets the handler of a kind; see Handle.
func (q *Queue) register(kind string, h *handler) {
	if q.started {
		panic(fmt.Sprintf("tasks: handler for %q registered after Start", kind))
	}
	if q.handlers[kind] != nil {
		panic(fmt.Sprintf("tasks: two handlers for %q", kind))
	}
	q.handlers[kind] = h
}

// wakeOne tells one idle worker to look for due tasks now.
func (q *Queue) wakeOne() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake makes an idle worker look for due tasks now (tests that move the
// clock use it instead of waiting for the poll).
func (q *Queue) Wake() { q.wakeOne() }

// Listening is closed once notifications of new tasks — from this process
// and from others sharing the database — wake this queue's workers. Until
// then (and whenever the notification connection is down) the workers
// find new tasks by polling.
func (q *Queue) Listening() <-chan struct{} { return q.listening }

// Start runs the workers until ctx is cancelled; Wait waits for them. The
// queue claims only the kinds it has handlers for (with none, it runs no
// workers). Call it once.
func (q *Queue) Start(ctx context.Context) {
	if q.started {
		panic("tasks: queue started twice")
	}
	q.started = true
	for kind := range q.handlers {
		q.kinds = append(q.kinds, kind)
	}
	slices.Sort(q.kinds)
	if q.workers == 0 || len(q.kinds) == 0 {
		return
	}
	if sub, err := q.db.Subscribe(channel); err != nil {
		q.log.Error("subscribe to task notifications; polling only", "err", err)
	} else {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.listen(ctx, sub)
		}()
	}
	for i := 0; i < q.workers; i++ {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.loop(ctx)
		}()
	}
}

// Wait blocks until every worker (and the notification listener) has
// stopped.
func (q *Queue) Wait() { q.wg.Wait() }

// listenWarnAfter is how long the queue waits for its subscription before
// it warns that only polling finds new tasks.
const listenWarnAfter = 10 * time.Second

// listen turns notifications of new tasks into wake-ups until ctx ends.
func (q *Queue) listen(ctx context.Context, sub *store.Subscription) {
	defer sub.Close()
	ready := sub.Ready()
	warn := time.NewTimer(listenWarnAfter)
	defer warn.Stop()
	warnC := warn.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-ready:
			ready, warnC = nil, nil
			close(q.listening)
			// A task enqueued while the subscription was being set up
			// was not announced to us: look now.
			q.wakeOne()
		case <-warnC:
			warnC = nil
			q.log.Warn("no task notifications yet; new tasks are found by polling", "poll", q.poll, "err", q.db.ListenError())
		case kind, ok := <-sub.C:
			if !ok {
				return // the database closed
			}
			// "" means notifications may have been lost.
			if kind == "" || q.handlers[kind] != nil {
				q.wakeOne()
			}
		}
	}
}

// minIdle bounds how fast an idle worker looks again when a task is due
// but could not be claimed (another process is claiming it right now).
const minIdle = 5 * time.Millisecond

func (q *Queue) loop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// Woken by the clock, not by a notification: claim (a write
			// transaction) only when a task is due, which a read tells,
			// so an idle server does not write on every poll.
			if d, ok := q.untilDue(ctx); ok && d > 0 {
				t.Reset(d)
				continue
			}
		case <-q.wake:
		}
		for ctx.Err() == nil && q.runOne(ctx) {
		}
		if ctx.Err() != nil {
			return
		}
		t.Reset(q.idle(ctx))
	}
}

// idle is how long a worker that found nothing to claim sleeps: until the
// next task falls due, at most the poll interval.
func (q *Queue) idle(ctx context.Context) time.Duration {
	d, _ := q.untilDue(ctx)
	return max(d, minIdle)
}

// untilDue is how long until the next task falls due (≤ 0: one is due
// now), at most the poll interval; ok is false when the database could
// not tell.
func (q *Queue) untilDue(ctx context.Context) (time.Duration, bool) {
	at, ok, err := q.db.NextTaskDue(ctx, q.kinds...)
	if err != nil {
		if ctx.Err() == nil {
			q.log.Error("next task due", "err", err)
		}
		return q.poll, false
	}
	if !ok {
		return q.poll, true
	}
	return min(at.Sub(q.now()), q.poll), true
}

// runOne claims and runs one due task; it reports whether there was one.
func (q *Queue) runOne(ctx context.Context) bool {
	now := q.now()
	task, ok, err := q.db.ClaimTask(ctx, q.worker, now, now.Add(q.lease), q.kinds...)
	if err != nil {
		if ctx.Err() == nil {
			q.log.Error("claim task", "err", err)
		}
		return false
	}
	if !ok {
		return false
	}
	// More may be due: let another idle worker look too.
	q.wakeOne()
	q.execute(ctx, task)
	return true
}

// execute runs one claimed task and records the outcome, unless the task
// was taken over meanwhile.
func (q *Queue) execute(ctx context.Context, task model.Task) {
	log := q.log.With("task_id", task.ID, "kind", task.Kind, "attempt", task.Attempts)
	h := q.handlers[task.Kind] // claimed by kind: always there
	runErr := q.runWithLease(ctx, task, h)
	if ctx.Err() != nil {
		// Shutting down: leave the task running; its lease runs out and
		// a worker (here after restart, or elsewhere) takes it again.
		return
	}
	now := q.now()
	next, runAt, msg := model.TaskDone, now, ""
	if runErr != nil {
		msg = runErr.Error()
		var perm Permanent
		if task.Attempts >= task.MaxAttempts || errors.As(runErr, &perm) {
			next = model.TaskFailed
		} else {
			next, runAt = model.TaskPending, now.Add(h.backoff(task.Attempts))
		}
	}
	var moved bool
	err := q.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		moved, err = tx.FinishTask(ctx, task.ID, q.worker, next, runAt, msg, now)
		return err
	})
	switch {
	case err != nil:
		log.Error("finish task", "state", next, "err", err)
		return
	case !moved:
		// Our lease ran out and another worker took the task over: its
		// outcome counts, not ours.
		log.Warn("task taken over by another worker; outcome dropped", "state", next, "err", runErr)
		return
	}
	switch next {
	case model.TaskFailed:
		log.Error("task failed", "err", runErr)
		if h.failed != nil {
			h.failed(ctx, task.Payload, runErr)
		}
	case model.TaskPending:
		log.Warn("task will be retried", "err", runErr, "at", runAt)
	}
}

// runWithLease runs the handler while renewing the lease; losing the lease
// cancels the handler's context.
func (q *Queue) runWithLease(ctx context.Context, task model.Task, h *handler) error {
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
	err := runSafely(rctx, h, task.Payload)
	cancel()
	<-done
	return err
}

func runSafely(ctx context.Context, h *handler, payload string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanent{fmt.Errorf("task panicked: %v", p)}
		}
	}()
	return h.run(ctx, payload)
}
