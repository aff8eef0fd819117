package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
	"quarry/internal/tasks"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// logger shows the queue's log when QUARRY_TEST_LOG is set.
func logger() *slog.Logger {
	if os.Getenv("QUARRY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quiet
}

// Kinds are defined once per process, like the services' kinds.
type echoPayload struct {
	N    int      `json:"n"`
	Tags []string `json:"tags"`
}

var (
	echoTask   = tasks.Define("test_echo", tasks.KindOptions[echoPayload]{})
	keyedTask  = tasks.Define("test_keyed", tasks.KindOptions[echoPayload]{Dedupe: func(p echoPayload) string { return fmt.Sprint(p.N) }})
	flakyTask  = tasks.Define("test_flaky", tasks.KindOptions[echoPayload]{MaxAttempts: 3, Backoff: func(n int) time.Duration { return time.Duration(n) * 100 * time.Millisecond }})
	fatalTask  = tasks.Define("test_fatal", tasks.KindOptions[echoPayload]{MaxAttempts: 5})
	crashTask  = tasks.Define("test_crash", tasks.KindOptions[echoPayload]{MaxAttempts: 3, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	countTask  = tasks.Define("test_count", tasks.KindOptions[echoPayload]{})
	laterTask  = tasks.Define("test_later", tasks.KindOptions[echoPayload]{Delay: time.Hour})
	otherTask  = tasks.Define("test_other", tasks.KindOptions[echoPayload]{})
	clockTask  = tasks.Define("test_clock", tasks.KindOptions[echoPayload]{})
	stolenTask = tasks.Define("test_stolen", tasks.KindOptions[echoPayload]{})
	poisonTask = tasks.Define("test_poison", tasks.KindOptions[echoPayload]{MaxAttempts: 3})
)

// slowPoll makes sure that only notifications and due times wake workers.
const slowPoll = time.Hour

func enqueue[P any](t *testing.T, db *store.DB, k *tasks.Kind[P], p P, opts ...tasks.EnqueueOption) model.Task {
	t.Helper()
	var task model.Task
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		task, err = k.Enqueue(context.Background(), tx, p, opts...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// waitFor polls the task until ok says yes, for at most 20 seconds.
func waitFor(t *testing.T, db *store.DB, id int64, what string, ok func(model.Task) bool) model.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		task, err := db.TaskByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d never %s: %+v", id, what, task)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitState(t *testing.T, db *store.DB, id int64, want model.TaskState) model.Task {
	t.Helper()
	return waitFor(t, db, id, string(want), func(task model.Task) bool { return task.State == want })
}

// receive waits, bounded, for a value on c.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s after 20s", what)
	}
	var zero T
	return zero
}

// start runs q until the test ends, and waits for its notification
// subscription.
func start(t *testing.T, q *tasks.Queue) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	q.Start(ctx)
	t.Cleanup(func() { cancel(); q.Wait() })
	receive(t, q.Listening(), "subscription")
}

// A typed payload goes in with Enqueue and comes out in the handler; the
// worker is woken by the commit, not by polling.
func TestKind_enqueueAndHandle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		q := tasks.New(db, logger(), tasks.Options{Workers: 2, Poll: slowPoll})
		got := make(chan echoPayload, 1)
		tasks.Handle(q, echoTask, func(ctx context.Context, p echoPayload) error { got <- p; return nil }, nil)
		start(t, q)

		want := echoPayload{N: 42, Tags: []string{"a", "b"}}
		task := enqueue(t, db, echoTask, want)
		if task.ID == 0 || task.Kind != "test_echo" || task.State != model.TaskPending || task.MaxAttempts != 3 {
			t.Errorf("enqueued %+v", task)
		}
		p := receive(t, got, "payload")
		if p.N != 42 || len(p.Tags) != 2 || p.Tags[1] != "b" {
			t.Errorf("handler got %+v; want %+v", p, want)
		}
		if done := waitState(t, db, task.ID, model.TaskDone); done.Attempts != 1 || done.LockedBy != "" || done.LeaseUntil != nil {
			t.Errorf("done task: %+v", done)
		}
	})
}

// Nothing is enqueued when the transaction rolls back.
func TestKind_enqueueRollsBack(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		var id int64
		boom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			task, err := echoTask.Enqueue(ctx, tx, echoPayload{N: 1})
			if err != nil {
				return err
			}
			id = task.ID
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := db.TaskByID(ctx, id); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("rolled-back task: %v", err)
		}
	})
}

// A kind with a dedupe key keeps one pending task per key; once that task
// runs, a new request is stored again.
func TestKind_dedupe(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		first := enqueue(t, db, keyedTask, echoPayload{N: 7}, tasks.After(time.Hour))
		if first.ID == 0 || first.RunAt.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("first: %+v", first)
		}
		if again := enqueue(t, db, keyedTask, echoPayload{N: 7}); again.ID != 0 {
			t.Errorf("second task for key 7 stored: %+v", again)
		}
		// The first one runs (claimed): a new request needs a new task.
		claimed, ok, err := db.ClaimTask(ctx, "w", time.Now().Add(2*time.Hour), time.Now().Add(3*time.Hour), keyedTask.Name())
		if err != nil || !ok || claimed.ID != first.ID {
			t.Fatalf("claim: %+v %v %v", claimed, ok, err)
		}
		if next := enqueue(t, db, keyedTask, echoPayload{N: 7}); next.ID == 0 {
			t.Error("request while the task runs was dropped")
		}
		if other := enqueue(t, db, keyedTask, echoPayload{N: 8}); other.ID == 0 {
			t.Error("task for key 8 folded into key 7")
		}
		if again := enqueue(t, db, keyedTask, echoPayload{N: 8}); again.ID != 0 {
			t.Errorf("second task for key 8 stored: %+v", again)
		}
	})
}

// A failing task is retried after the kind's backoff until its attempts run
// out; then the failure hook runs once, with the last error.
func TestKind_retriesWithBackoffThenFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		q := tasks.New(db, logger(), tasks.Options{Workers: 2, Poll: slowPoll})
		var mu sync.Mutex
		var runs []time.Time
		tasks.Handle(q, flakyTask, func(ctx context.Context, p echoPayload) error {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, time.Now())
			return fmt.Errorf("boom %d", len(runs))
		}, nil)
		type failure struct {
			p   echoPayload
			err error
		}
		failed := make(chan failure, 10)
		tasks.Handle(q, fatalTask, func(ctx context.Context, p echoPayload) error {
			return tasks.Permanent{Err: errors.New("no use retrying")}
		}, func(ctx context.Context, p echoPayload, err error) { failed <- failure{p, err} })
		start(t, q)

		task := enqueue(t, db, flakyTask, echoPayload{N: 1})
		got := waitState(t, db, task.ID, model.TaskFailed)
		if got.Attempts != 3 || got.LastError != "boom 3" {
			t.Errorf("failed task: %+v", got)
		}
		mu.Lock()
		if len(runs) != 3 {
			t.Fatalf("%d runs; want 3", len(runs))
		}
		for i := 1; i < len(runs); i++ {
			// Backoff after attempt i is i × 100ms (times are stored
			// with microsecond precision).
			if gap, min := runs[i].Sub(runs[i-1]), time.Duration(i)*100*time.Millisecond-time.Millisecond; gap < min {
				t.Errorf("attempt %d came %v after the previous; want ≥ %v", i+1, gap, min)
			}
		}
		mu.Unlock()

		// A permanent error fails at once; the hook gets the payload.
		fatal := enqueue(t, db, fatalTask, echoPayload{N: 9})
		f := receive(t, failed, "failure hook")
		if f.p.N != 9 || f.err == nil || f.err.Error() != "no use retrying" {
			t.Errorf("hook got %+v", f)
		}
		if got := waitState(t, db, fatal.ID, model.TaskFailed); got.Attempts != 1 || got.LastError != "no use retrying" {
			t.Errorf("permanent failure: %+v", got)
		}
		select {
		case f := <-failed:
			t.Errorf("failure hook ran twice: %+v", f)
		case <-time.After(50 * time.Millisecond):
		}
	})
}

// A payload that does not decode fails the task at once, without calling
// the handler or the failure hook.
func TestKind_undecodablePayloadFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		q := tasks.New(db, logger(), tasks.Options{Workers: 1, Poll: slowPoll})
		var calls atomic.Int32
		tasks.Handle(q, echoTask, func(ctx context.Context, p echoPayload) error { calls.Add(1); return nil },
			func(ctx context.Context, p echoPayload, err error) { calls.Add(1) })
		bad := model.Task{Kind: echoTask.Name(), Payload: `{"n": "not a number"}`, MaxAttempts: 3}
		if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.EnqueueTask(ctx, &bad, time.Now()); return err }); err != nil {
			t.Fatal(err)
		}
		start(t, q)
		got := waitState(t, db, bad.ID, model.TaskFailed)
		if got.Attempts != 1 || got.LastError == "" {
			t.Errorf("task: %+v", got)
		}
		if calls.Load() != 0 {
			t.Errorf("handler or hook called %d times", calls.Load())
		}
	})
}

// A worker that died mid-task leaves a running task with a lease; once the
// lease runs out another worker takes it over. The dead worker cannot
// record an outcome afterwards: its compare-and-set finds the task moved.
func TestQueue_takesOverAfterCrash(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		task := enqueue(t, db, crashTask, echoPayload{N: 1})
		// The crashed process claimed it, and its lease is already over.
		if _, ok, err := db.ClaimTask(ctx, "dead-worker", time.Now(), time.Now().Add(-time.Second)); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		q := tasks.New(db, logger(), tasks.Options{Workers: 1, Poll: slowPoll})
		tasks.Handle(q, crashTask, func(ctx context.Context, p echoPayload) error { return nil }, nil)
		start(t, q)
		got := waitState(t, db, task.ID, model.TaskDone)
		if got.Attempts != 1 || got.Takeovers != 1 {
			t.Errorf("attempts %d, takeovers %d; want 1 and 1 (the takeover goes on with the attempt the crash cut short)",
				got.Attempts, got.Takeovers)
		}
		// The dead worker comes back and tries to record a failure.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			moved, err := tx.FinishTask(ctx, task.ID, "dead-worker", model.TaskFailed, time.Now(), "late", time.Now())
			if moved {
				t.Error("a worker that lost its task moved it")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := db.TaskByID(ctx, task.ID); got.State != model.TaskDone || got.LastError != "" {
			t.Errorf("task after the late finish: %+v", got)
		}
	})
}

// A task caught in several crashes keeps its attempts for its own
// failures: after three takeovers, one transient error is retried, not
// final. Takeovers past model.MaxTakeovers count as attempts, so a task
// that brings its process down every time ends.
func TestQueue_takeoversAreNotAttempts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		task := enqueue(t, db, crashTask, echoPayload{N: 1})
		for i := range 4 {
			// A worker claims it and dies; its lease is already over.
			got, ok, err := db.ClaimTask(ctx, fmt.Sprintf("dead-%d", i), time.Now(), time.Now().Add(-time.Second), crashTask.Name())
			if err != nil || !ok {
				t.Fatalf("claim %d: %v %v", i, ok, err)
			}
			if got.Attempts != 1 || got.Takeovers != i {
				t.Fatalf("claim %d: attempts %d, takeovers %d; want 1 and %d", i, got.Attempts, got.Takeovers, i)
			}
		}
		// Past the bound, every takeover is an attempt too (before any
		// worker runs).
		poison := enqueue(t, db, poisonTask, echoPayload{N: 2})
		var last model.Task
		for i := range model.MaxTakeovers + 2 {
			var ok bool
			var err error
			last, ok, err = db.ClaimTask(ctx, fmt.Sprintf("dead-%d", i), time.Now(), time.Now().Add(-time.Second), poisonTask.Name())
			if err != nil || !ok || last.ID != poison.ID {
				t.Fatalf("claim %d: %+v %v %v", i, last, ok, err)
			}
		}
		if last.Attempts != 2 || last.Takeovers != model.MaxTakeovers+1 {
			t.Errorf("after %d takeovers: attempts %d, takeovers %d; want 2 and %d", model.MaxTakeovers+1, last.Attempts,
				last.Takeovers, model.MaxTakeovers+1)
		}
		q := tasks.New(db, logger(), tasks.Options{Workers: 1, Poll: slowPoll})
		var runs atomic.Int32
		tasks.Handle(q, crashTask, func(ctx context.Context, p echoPayload) error {
			if runs.Add(1) == 1 {
				return errors.New("transient")
			}
			return nil
		}, nil)
		start(t, q)
		got := waitState(t, db, task.ID, model.TaskDone)
		if got.Attempts != 2 || got.Takeovers != 4 || runs.Load() != 2 {
			t.Errorf("attempts %d, takeovers %d, runs %d; want 2, 4 and 2", got.Attempts, got.Takeovers, runs.Load())
		}
	})
}

// Done completes a pending task its enqueuer did itself; a task a worker
// claimed already is left to run.
func TestKind_done(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		done := func(id int64) bool {
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = laterTask.Done(ctx, tx, id)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok
		}
		task := enqueue(t, db, laterTask, echoPayload{N: 1})
		if !done(task.ID) {
			t.Fatal("a pending task was not completed")
		}
		if got, _ := db.TaskByID(ctx, task.ID); got.State != model.TaskDone || got.Attempts != 0 {
			t.Errorf("completed task: %+v", got)
		}
		if done(task.ID) {
			t.Error("a done task was completed again")
		}
		claimed := enqueue(t, db, laterTask, echoPayload{N: 2}, tasks.After(0))
		if _, ok, err := db.ClaimTask(ctx, "w", time.Now(), time.Now().Add(time.Minute), laterTask.Name()); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if done(claimed.ID) {
			t.Error("a running task was completed by its enqueuer")
		}
	})
}

// When another worker takes a task over while its first worker still runs
// it, the first worker's outcome is dropped, not written over the new one.
func TestQueue_lostTaskIsNotOverwritten(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		logged := make(chan string, 10)
		q := tasks.New(db, slog.New(messages{logged}), tasks.Options{Workers: 1, Poll: slowPoll, Lease: time.Minute})
		running, release := make(chan struct{}), make(chan struct{})
		tasks.Handle(q, stolenTask, func(ctx context.Context, p echoPayload) error {
			close(running)
			<-release
			return errors.New("too late")
		}, nil)
		start(t, q)
		task := enqueue(t, db, stolenTask, echoPayload{N: 1})
		receive(t, running, "run")
		// Two minutes on, the lease is over: a thief takes the task.
		later := time.Now().Add(2 * time.Minute)
		stolen, ok, err := db.ClaimTask(ctx, "thief", later, later.Add(time.Minute), stolenTask.Name())
		if err != nil || !ok || stolen.ID != task.ID || stolen.LockedBy != "thief" || stolen.Attempts != 1 || stolen.Takeovers != 1 {
			t.Fatalf("takeover: %+v %v %v", stolen, ok, err)
		}
		close(release)
		// The first worker's finish finds the task held by the thief, and
		// says so.
		for msg := ""; !strings.Contains(msg, "taken over"); {
			msg = receive(t, logged, "log of the lost task")
		}
		got, err := db.TaskByID(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != model.TaskRunning || got.LockedBy != "thief" || got.LastError != "" {
			t.Fatalf("task overwritten by the worker that lost it: %+v", got)
		}
	})
}

// messages is a slog handler that sends each record's message to a
// channel (dropping it when the channel is full).
type messages struct{ c chan<- string }

func (m messages) Enabled(context.Context, slog.Level) bool { return true }
func (m messages) WithAttrs([]slog.Attr) slog.Handler       { return m }
func (m messages) WithGroup(string) slog.Handler            { return m }
func (m messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case m.c <- r.Message:
	default:
	}
	return nil
}

// The store refuses, before any SQL, a move the transition table does not
// allow.
func TestStore_refusesIllegalTaskMove(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		task := enqueue(t, db, echoTask, echoPayload{N: 1})
		claimed, ok, err := db.ClaimTask(ctx, "w", time.Now(), time.Now().Add(time.Minute), echoTask.Name())
		if err != nil || !ok || claimed.ID != task.ID {
			t.Fatalf("claim: %v %v", ok, err)
		}
		for _, next := range []model.TaskState{model.TaskRunning, "bogus"} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.FinishTask(ctx, task.ID, "w", next, time.Now(), "", time.Now())
				return err
			})
			if !errors.Is(err, model.ErrTransition) {
				t.Errorf("finish as %q: %v; want ErrTransition", next, err)
			}
		}
		// A legal move by the holder works once; the second finds the task
		// moved.
		for i, want := range []bool{true, false} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				moved, err := tx.FinishTask(ctx, task.ID, "w", model.TaskDone, time.Now(), "", time.Now())
				if moved != want {
					t.Errorf("finish %d: moved %v; want %v", i+1, moved, want)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A queue claims only the kinds it handles, and a delayed task runs when it
// falls due, without polling.
func TestQueue_claimsOwnKindsAtTheirTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		q := tasks.New(db, logger(), tasks.Options{Workers: 1, Poll: slowPoll})
		ran := make(chan time.Time, 1)
		tasks.Handle(q, echoTask, func(ctx context.Context, p echoPayload) error { ran <- time.Now(); return nil }, nil)
		start(t, q)
		other := enqueue(t, db, otherTask, echoPayload{})
		later := enqueue(t, db, laterTask, echoPayload{})
		if d := time.Until(later.RunAt); d < 59*time.Minute {
			t.Errorf("kind delay: due in %v; want 1h", d)
		}
		before := time.Now()
		delayed := enqueue(t, db, echoTask, echoPayload{}, tasks.After(300*time.Millisecond))
		at := receive(t, ran, "delayed run")
		if at.Sub(before) < 299*time.Millisecond {
			t.Errorf("delayed task ran after %v; want ≥ 300ms", at.Sub(before))
		}
		waitState(t, db, delayed.ID, model.TaskDone)
		for _, id := range []int64{other.ID, later.ID} {
			if got, _ := db.TaskByID(context.Background(), id); got.State != model.TaskPending || got.Attempts != 0 {
				t.Errorf("task of a kind without handler was touched: %+v", got)
			}
		}
	})
}

// The queue takes its time from its clock: due-ness and the times it
// stores.
func TestQueue_usesItsClock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		future := time.Now().Add(24 * time.Hour).Truncate(time.Microsecond).UTC()
		q := tasks.New(db, logger(), tasks.Options{Workers: 1, Poll: slowPoll, Now: func() time.Time { return future }})
		tasks.Handle(q, clockTask, func(ctx context.Context, p echoPayload) error { return nil }, nil)
		// Due in 12 hours of wall time: already due by the queue's clock.
		task := enqueue(t, db, clockTask, echoPayload{}, tasks.After(12*time.Hour))
		start(t, q)
		got := waitState(t, db, task.ID, model.TaskDone)
		if !got.UpdatedAt.Equal(future) {
			t.Errorf("finished at %v; want the queue's %v", got.UpdatedAt, future)
		}
	})
}

// Two queues (two processes) on one database run each task exactly once.
func TestQueue_twoProcessesShareWork(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db1 := storetest.Open(t, target, "")
		// On PostgreSQL the second "process" has its own connection pool;
		// SQLite's single writer makes one file one process.
		db2 := db1
		if target.DatabaseURL != "" {
			var err error
			if db2, err = store.Open(context.Background(), target.DatabaseURL, ""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db2.Close() })
		}
		var mu sync.Mutex
		runs := map[int]int{}
		handler := func(ctx context.Context, p echoPayload) error {
			time.Sleep(time.Millisecond)
			mu.Lock()
			runs[p.N]++
			mu.Unlock()
			return nil
		}
		for _, db := range []*store.DB{db1, db2} {
			q := tasks.New(db, logger(), tasks.Options{Workers: 3, Poll: slowPoll})
			tasks.Handle(q, countTask, handler, nil)
			start(t, q)
		}
		const n = 60
		var ids []int64
		for i := 0; i < n; i++ {
			ids = append(ids, enqueue(t, db1, countTask, echoPayload{N: i}).ID)
		}
		for _, id := range ids {
			waitState(t, db1, id, model.TaskDone)
		}
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < n; i++ {
			if runs[i] != 1 {
				t.Errorf("task %d ran %d times", i, runs[i])
			}
		}
	})
}

func TestDefine_refusesBadAndDuplicateNames(t *testing.T) {
	for _, name := range []string{"", "Fork", "fork-project", "test_echo"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Define(%q) did not panic", name)
				}
			}()
			tasks.Define(name, tasks.KindOptions[echoPayload]{})
		}()
	}
}

func TestHandle_refusesLateAndDuplicateHandlers(t *testing.T) {
	db := storetest.Open(t, storetest.Target{Name: "sqlite"}, "")
	q := tasks.New(db, quiet, tasks.Options{Workers: 1, Poll: slowPoll})
	run := func(ctx context.Context, p echoPayload) error { return nil }
	tasks.Handle(q, echoTask, run, nil)
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		f()
	}
	mustPanic("second handler", func() { tasks.Handle(q, echoTask, run, nil) })
	start(t, q)
	mustPanic("handler after Start", func() { tasks.Handle(q, otherTask, run, nil) })
}

func TestDefaultBackoff(t *testing.T) {
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 5 * time.Second},
		{2, 20 * time.Second},
		{3, 80 * time.Second},
		{4, 320 * time.Second},
		{5, 10 * time.Minute},
		{50, 10 * time.Minute},
	} {
		if got := tasks.DefaultBackoff(c.attempt); got != c.want {
			t.Errorf("DefaultBackoff(%d) = %v; want %v", c.attempt, got, c.want)
		}
	}
}

// An idle queue reads when the next task is due at every poll and claims
// nothing: no write transaction (on SQLite the writer connection may then
// close when the server is idle). A task enqueued meanwhile still runs at
// once (the notification wakes a worker, which claims it).
func TestQueue_idlePollsOnlyRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		q := tasks.New(db, logger(), tasks.Options{Workers: 2, Poll: 10 * time.Millisecond})
		ran := make(chan struct{}, 1)
		tasks.Handle(q, echoTask, func(ctx context.Context, p echoPayload) error { ran <- struct{}{}; return nil }, nil)
		ctx, rec := store.RecordQueries(context.Background())
		ctx, cancel := context.WithCancel(ctx)
		q.Start(ctx)
		t.Cleanup(func() { cancel(); q.Wait() })
		receive(t, q.Listening(), "subscription")
		// The first look after the subscription claims (a lost
		// notification is looked for once); count from the polls after it.
		polls := func() (reads, claims int) {
			for _, s := range rec.Queries() {
				switch {
				case strings.Contains(s.SQL, "SELECT MIN(CASE WHEN state = 'pending'"):
					reads++
				case strings.Contains(s.SQL, "FROM tasks WHERE") && strings.Contains(s.SQL, "ORDER BY run_at, id LIMIT 1"):
					claims++
				}
			}
			return reads, claims
		}
		deadline := time.Now().Add(20 * time.Second)
		reads0, claims0 := polls()
		for {
			reads, _ := polls()
			if reads >= reads0+20 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d reads of the next task due in 20s; want 20 polls", reads-reads0)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, claims := polls(); claims > claims0+2 {
			t.Errorf("an idle queue claimed %d times over 20 polls; want none but the wake-up's", claims-claims0)
		}
		enqueue(t, db, echoTask, echoPayload{})
		receive(t, ran, "task run after the idle polls")
	})
}
