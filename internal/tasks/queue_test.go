package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
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

func enqueue(t *testing.T, db *store.DB, kind string, payload any) model.Task {
	t.Helper()
	var task model.Task
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		task, err = tasks.Enqueue(context.Background(), tx, kind, payload)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func waitState(t *testing.T, db *store.DB, id int64, want model.TaskState) model.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		task, err := db.TaskByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if task.State == want {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d is %s (%s); want %s", id, task.State, task.LastError, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestQueue_runsRetriesAndFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		q := tasks.New(db, quiet, tasks.Options{Workers: 2, Poll: 10 * time.Millisecond})
		var got atomic.Value
		q.Register("ok", tasks.Handler{Run: func(ctx context.Context, p []byte) error {
			var v struct{ N int }
			_ = json.Unmarshal(p, &v)
			got.Store(v.N)
			return nil
		}})
		var failedWith atomic.Value
		var runs atomic.Int32
		q.Register("flaky", tasks.Handler{
			Run:    func(ctx context.Context, p []byte) error { runs.Add(1); return errors.New("boom") },
			Failed: func(ctx context.Context, p []byte, err error) { failedWith.Store(err.Error()) },
		})
		q.Register("fatal", tasks.Handler{Run: func(ctx context.Context, p []byte) error {
			return tasks.Permanent{Err: errors.New("no use retrying")}
		}})
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); q.Wait() }()
		q.Start(ctx)

		ok := enqueue(t, db, "ok", map[string]int{"N": 42})
		q.Wake()
		waitState(t, db, ok.ID, model.TaskDone)
		if got.Load() != 42 {
			t.Errorf("payload %v", got.Load())
		}
		fatal := enqueue(t, db, "fatal", nil)
		q.Wake()
		task := waitState(t, db, fatal.ID, model.TaskFailed)
		if task.Attempts != 1 || task.LastError != "no use retrying" {
			t.Errorf("permanent failure: %+v", task)
		}
		// The flaky task fails its first attempt and is scheduled again later.
		flaky := enqueue(t, db, "flaky", nil)
		q.Wake()
		// (Pending at first too, and "running" while claimed: wait for the
		// failure to be recorded.)
		deadline := time.Now().Add(10 * time.Second)
		task, _ = db.TaskByID(context.Background(), flaky.ID)
		for task.LastError == "" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			task, _ = db.TaskByID(context.Background(), flaky.ID)
		}
		if task.State != model.TaskPending || task.Attempts != 1 || !task.RunAt.After(time.Now()) || task.LastError != "boom" {
			t.Errorf("after one failure: %+v", task)
		}
	})
}

// A worker that died mid-task leaves a running task with a lease; once the
// lease runs out another worker takes it, and after the last attempt the
// failure hook runs: nothing stays "running" for ever.
func TestQueue_recoversFromCrashedWorker(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		task := enqueue(t, db, "work", nil)
		// The crashed process claimed it, and its lease is already over.
		if _, ok, err := db.ClaimTask(ctx, "dead-worker", time.Now(), time.Now().Add(-time.Second)); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		q := tasks.New(db, quiet, tasks.Options{Workers: 1, Poll: 10 * time.Millisecond})
		done := make(chan struct{})
		q.Register("work", tasks.Handler{Run: func(ctx context.Context, p []byte) error { close(done); return nil }})
		qctx, cancel := context.WithCancel(ctx)
		defer func() { cancel(); q.Wait() }()
		q.Start(qctx)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("task not recovered")
		}
		got := waitState(t, db, task.ID, model.TaskDone)
		if got.Attempts != 2 {
			t.Errorf("attempts %d; want 2 (the crashed one and the recovery)", got.Attempts)
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
			defer db2.Close()
		}
		var mu sync.Mutex
		runs := map[int]int{}
		handler := tasks.Handler{Run: func(ctx context.Context, p []byte) error {
			var v struct{ N int }
			_ = json.Unmarshal(p, &v)
			time.Sleep(time.Millisecond)
			mu.Lock()
			runs[v.N]++
			mu.Unlock()
			return nil
		}}
		const n = 60
		var ids []int64
		for i := 0; i < n; i++ {
			ids = append(ids, enqueue(t, db1, "count", map[string]int{"N": i}).ID)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var queues []*tasks.Queue
		for _, db := range []*store.DB{db1, db2} {
			q := tasks.New(db, quiet, tasks.Options{Workers: 3, Poll: 5 * time.Millisecond})
			q.Register("count", handler)
			q.Start(ctx)
			queues = append(queues, q)
		}
		for _, id := range ids {
			waitState(t, db1, id, model.TaskDone)
		}
		cancel()
		for _, q := range queues {
			q.Wait()
		}
		for i := 0; i < n; i++ {
			if runs[i] != 1 {
				t.Errorf("task %d ran %d times", i, runs[i])
			}
		}
	})
}
