package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"quarry/internal/events"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
	"quarry/internal/tasks"
)

// recorder keeps what a subscriber saw.
type recorder struct {
	mu   sync.Mutex
	seen []model.RefsChanged
	got  chan struct{}
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 100)} }

func (r *recorder) run(_ context.Context, e model.RefsChanged) error {
	r.mu.Lock()
	r.seen = append(r.seen, e)
	r.mu.Unlock()
	r.got <- struct{}{}
	return nil
}

func (r *recorder) wait(t *testing.T, n int) []model.RefsChanged {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("%d of %d deliveries after 10s", i, n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.RefsChanged(nil), r.seen...)
}

func TestBus_deliversToEverySubscriber(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		db.SetClock(func() time.Time { return at })
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		q := tasks.New(db, log, tasks.Options{Workers: 2, Poll: time.Hour, Now: db.Now})
		bus := events.New(db, q, log)
		a, b := newRecorder(), newRecorder()
		failing := make(chan struct{}, 10)
		bus.OnRefsChanged("a", a.run)
		bus.OnRefsChanged("b", b.run)
		// A subscriber that fails does not hold the others back.
		bus.OnRefsChanged("broken", func(context.Context, model.RefsChanged) error {
			failing <- struct{}{}
			return tasks.Permanent{Err: errors.New("down")}
		})
		ctx, cancel := context.WithCancel(context.Background())
		q.Start(ctx)
		t.Cleanup(func() { cancel(); q.Wait() })

		push := model.RefsChanged{ProjectID: 7, ActorID: 3, Source: model.RefsSourcePush,
			Updates: []model.RefUpdate{{Ref: "refs/heads/main", Old: model.ZeroRef, New: "1111111111111111111111111111111111111111"}}}
		if err := bus.RefsChanged(ctx, push); err != nil {
			t.Fatal(err)
		}
		// Nothing moved, nothing said; a rolled-back write says nothing.
		if err := bus.RefsChanged(ctx, model.RefsChanged{ProjectID: 7, Source: model.RefsSourceAPI}); err != nil {
			t.Fatal(err)
		}
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if err := bus.EmitRefsChanged(ctx, tx, push); err != nil {
				t.Fatal(err)
			}
			return errors.New("roll back")
		})
		api := push
		api.Source, api.ActorID = model.RefsSourceAPI, 4
		if err := db.InTx(ctx, func(tx *store.Tx) error { return bus.EmitRefsChanged(ctx, tx, api) }); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*recorder{a, b} {
			got := r.wait(t, 2)
			if len(got) != 2 {
				t.Fatalf("%d events; want the push and the API write", len(got))
			}
			for _, e := range got {
				if e.ProjectID != 7 || len(e.Updates) != 1 || e.Updates[0] != push.Updates[0] || !e.At.Equal(at) {
					t.Errorf("event %+v", e)
				}
			}
			if got[0].Source == got[1].Source {
				t.Errorf("sources %s, %s", got[0].Source, got[1].Source)
			}
		}
		select {
		case <-failing:
		case <-time.After(10 * time.Second):
			t.Fatal("the failing subscriber never ran")
		}
		// Nothing else arrives: no delivery of the empty or rolled-back
		// events.
		select {
		case <-a.got:
			t.Errorf("a third delivery: %+v", a.seen)
		case <-time.After(300 * time.Millisecond):
		}
	})
}

func TestBus_duplicateSubscriber(t *testing.T) {
	db := storetest.Open(t, storetest.Target{Name: "sqlite"}, "")
	bus := events.New(db, tasks.New(db, slog.New(slog.NewTextHandler(io.Discard, nil)), tasks.Options{}), slog.Default())
	bus.OnRefsChanged("x", func(context.Context, model.RefsChanged) error { return nil })
	defer func() {
		if recover() == nil {
			t.Error("two subscribers under one name")
		}
	}()
	bus.OnRefsChanged("x", func(context.Context, model.RefsChanged) error { return nil })
}
