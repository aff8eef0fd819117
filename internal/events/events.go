// Package events delivers what happened to the parts that follow it up,
// through the durable queue: an event is stored as one task per
// subscriber in the transaction that emits it, so each subscriber runs,
// retries and fails on its own, in whichever Quarry process takes the
// task, after a restart too.
//
// Today's event is refs changed (model.RefsChanged): emitted by every
// write that moves a ref (a push, an API commit, a branch or tag made or
// removed, a merge); the repository's facts and housekeeping follow it,
// pipelines and merge request heads will.
package events

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// delivery is one event on its way to one subscriber.
type delivery struct {
	Subscriber string            `json:"subscriber"`
	Event      model.RefsChanged `json:"event"`
}

var refsChanged = tasks.Define("refs_changed", tasks.KindOptions[delivery]{MaxAttempts: 8})

// Bus emits events and runs their subscribers.
type Bus struct {
	db  *store.DB
	log *slog.Logger
	mu  sync.RWMutex
	// subs are the refs-changed subscribers by name. Every process of a
	// deployment registers the same ones at start: a task names its
	// subscriber, and any process may run it.
	subs map[string]func(ctx context.Context, e model.RefsChanged) error
}

// New returns a bus whose deliveries run on queue's workers.
func New(db *store.DB, queue *tasks.Queue, log *slog.Logger) *Bus {
	b := &Bus{db: db, log: log, subs: map[string]func(context.Context, model.RefsChanged) error{}}
	tasks.Handle(queue, refsChanged, b.deliver, b.failed)
	return b
}

// OnRefsChanged registers a subscriber under a stable name. Events emitted
// from then on reach it; it must tolerate seeing an event again (a retry
// after a crash).
func (b *Bus) OnRefsChanged(name string, run func(ctx context.Context, e model.RefsChanged) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.subs[name]; dup {
		panic(fmt.Sprintf("events: two refs-changed subscribers named %q", name))
	}
	b.subs[name] = run
}

// RefsChanged emits e in its own transaction: one delivery per subscriber.
// An event without updates is no event.
func (b *Bus) RefsChanged(ctx context.Context, e model.RefsChanged) error {
	if len(e.Updates) == 0 {
		return nil
	}
	return b.db.InTx(ctx, func(tx *store.Tx) error { return b.EmitRefsChanged(ctx, tx, e) })
}

// EmitRefsChanged stores e's deliveries inside tx: they exist, and wake
// the workers, only if tx commits.
func (b *Bus) EmitRefsChanged(ctx context.Context, tx *store.Tx, e model.RefsChanged) error {
	if len(e.Updates) == 0 {
		return nil
	}
	if e.At.IsZero() {
		e.At = tx.Now()
	}
	e.At = e.At.UTC()
	for _, name := range b.names() {
		if _, err := refsChanged.Enqueue(ctx, tx, delivery{Subscriber: name, Event: e}); err != nil {
			return fmt.Errorf("emit refs changed to %s: %w", name, err)
		}
	}
	return nil
}

func (b *Bus) names() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]string, 0, len(b.subs))
	for n := range b.subs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (b *Bus) deliver(ctx context.Context, d delivery) error {
	b.mu.RLock()
	run, ok := b.subs[d.Subscriber]
	b.mu.RUnlock()
	if !ok {
		return tasks.Permanent{Err: fmt.Errorf("no refs-changed subscriber %q in this process", d.Subscriber)}
	}
	return run(ctx, d.Event)
}

func (b *Bus) failed(_ context.Context, d delivery, err error) {
	b.log.Error("refs changed: delivery failed for good", "subscriber", d.Subscriber, "project_id", d.Event.ProjectID,
		"source", d.Event.Source, "err", err)
}
