package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// Kind is one kind of background work with a payload of type P. Define it
// once, as a package-level variable; enqueue it with Enqueue inside the
// transaction that makes the work necessary, and run it with Handle. The
// payload travels as JSON: encoded by Enqueue, decoded before the handler
// runs (a payload that does not decode fails the task at once).
type Kind[P any] struct {
	name        string
	maxAttempts int
	backoff     func(attempt int) time.Duration
	dedupe      func(P) string
	delay       time.Duration
}

// KindOptions are a kind's settings; zero values take the defaults.
type KindOptions[P any] struct {
	// MaxAttempts is how many attempts a task gets before it fails
	// (default 3).
	MaxAttempts int
	// Backoff is the wait after failed attempt n (counted from 1) before
	// the next one (default DefaultBackoff).
	Backoff func(attempt int) time.Duration
	// Dedupe, if set, keys a task by its payload: while a task of this
	// kind with the same non-empty key is pending, Enqueue stores nothing
	// more (the waiting task does the work).
	Dedupe func(p P) string
	// Delay is how long after Enqueue a task first becomes due, unless
	// the call passes At or After (default 0: at once).
	Delay time.Duration
}

var (
	validKind = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	definedMu sync.Mutex
	defined   = map[string]bool{}
)

// Define declares the kind name with payload type P. The name is stored in
// every task row, so it must never change while tasks of it may be
// waiting. Define panics on a name that is not a lower-case identifier or
// that is already defined: both are programming errors.
func Define[P any](name string, o KindOptions[P]) *Kind[P] {
	if !validKind.MatchString(name) {
		panic(fmt.Sprintf("tasks: kind name %q is not a lower-case identifier", name))
	}
	definedMu.Lock()
	defer definedMu.Unlock()
	if defined[name] {
		panic(fmt.Sprintf("tasks: kind %q defined twice", name))
	}
	defined[name] = true
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	return &Kind[P]{name: name, maxAttempts: o.MaxAttempts, backoff: o.Backoff, dedupe: o.Dedupe, delay: max(o.Delay, 0)}
}

// Name is the kind's stored name.
func (k *Kind[P]) Name() string { return k.name }

// EnqueueOption adjusts one Enqueue call.
type EnqueueOption func(*enqueueSettings)

type enqueueSettings struct {
	at    time.Time
	after *time.Duration
}

// At makes the task due at t instead of after the kind's Delay.
func At(t time.Time) EnqueueOption { return func(s *enqueueSettings) { s.at = t } }

// After makes the task due d after Enqueue instead of after the kind's
// Delay.
func After(d time.Duration) EnqueueOption { return func(s *enqueueSettings) { s.after = &d } }

// Enqueue stores a task of this kind with payload p inside tx, to run once
// tx commits; workers of every process sharing the database are woken then
// (nothing happens if tx rolls back). It returns the stored task; when the
// kind dedupes and a task with the same key is already pending, nothing is
// stored and the returned task has ID 0.
func (k *Kind[P]) Enqueue(ctx context.Context, tx *store.Tx, p P, opts ...EnqueueOption) (model.Task, error) {
	var s enqueueSettings
	for _, o := range opts {
		o(&s)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return model.Task{}, fmt.Errorf("encode %s task: %w", k.name, err)
	}
	// The database's clock, which the queue claims by too (its
	// Options.Now), so a delay is a delay whatever the process's time.
	now := tx.Now()
	t := model.Task{Kind: k.name, Payload: string(b), MaxAttempts: k.maxAttempts, RunAt: now.Add(k.delay)}
	switch {
	case !s.at.IsZero():
		t.RunAt = s.at
	case s.after != nil:
		t.RunAt = now.Add(*s.after)
	}
	if k.dedupe != nil {
		t.DedupeKey = k.dedupe(p)
	}
	inserted, err := tx.EnqueueTask(ctx, &t, now)
	if err != nil {
		return t, fmt.Errorf("enqueue %s task: %w", k.name, err)
	}
	if inserted {
		// Sleeping workers learn of the task (and of its run-at, which may
		// be earlier than what they wait for).
		if err := tx.Notify(ctx, channel, k.name); err != nil {
			return t, err
		}
	}
	return t, nil
}

// Done marks a pending task of this kind done without running it, inside
// tx: its enqueuer did the work itself, the task having been its safety net
// against a crash before it could. false when the task is no longer
// pending: a worker claimed it, and must find the work done.
func (k *Kind[P]) Done(ctx context.Context, tx *store.Tx, id int64) (bool, error) {
	ok, err := tx.CompletePendingTask(ctx, id, tx.Now())
	if err != nil {
		return false, fmt.Errorf("complete %s task %d: %w", k.name, id, err)
	}
	return ok, nil
}

// decode turns a stored payload back into P.
func (k *Kind[P]) decode(payload string) (P, error) {
	var p P
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return p, fmt.Errorf("decode %s payload: %w", k.name, err)
	}
	return p, nil
}

// Handle makes q run tasks of kind k with run, called once per attempt; an
// error fails the attempt (retried after the kind's backoff unless it was
// the last attempt or the error is Permanent). failed, if not nil, is
// called once when the task has finally failed, after that is recorded,
// with the last error (to show the failure where users see it, e.g. a
// fork's import_status); it is not called for a payload that does not
// decode. Call Handle before q.Start; it panics when called after, or twice
// for one kind on one queue.
func Handle[P any](q *Queue, k *Kind[P], run func(ctx context.Context, p P) error, failed func(ctx context.Context, p P, err error)) {
	h := &handler{backoff: k.backoff}
	h.run = func(ctx context.Context, payload string) error {
		p, err := k.decode(payload)
		if err != nil {
			return Permanent{err}
		}
		return run(ctx, p)
	}
	if failed != nil {
		h.failed = func(ctx context.Context, payload string, cause error) {
			if p, err := k.decode(payload); err == nil {
				failed(ctx, p, cause)
			}
		}
	}
	q.register(k.name, h)
}

// DefaultBackoff waits 5s after the first failed attempt, then four times
// longer after each further one (20s, 80s, …), at most 10 minutes.
func DefaultBackoff(attempt int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < attempt && d < 10*time.Minute; i++ {
		d *= 4
	}
	return min(d, 10*time.Minute)
}
