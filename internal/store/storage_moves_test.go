package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// Write leases: taken only while the container is writable, counted until
// they expire or are released, renewed only while they exist; a container
// made read-only refuses new ones but keeps those taken before.
func TestWriteLeases(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		g := storetest.NewGroup(t, db, owner)
		now := db.Now()
		acquire := func(kind model.ContainerKind, id int64, until time.Time) (int64, string, error) {
			var lease int64
			var storage string
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				lease, storage, err = tx.AcquireWriteLease(ctx, kind, id, "test", until)
				return err
			})
			return lease, storage, err
		}
		live := func(kind model.ContainerKind, id int64, at time.Time) int {
			t.Helper()
			var n int
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				n, err = tx.LiveWriteLeases(ctx, kind, id, at)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		setReadOnly := func(kind model.ContainerKind, id int64, ro bool) bool {
			t.Helper()
			var changed bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				changed, err = tx.SetContainerReadOnly(ctx, kind, id, ro)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return changed
		}

		l1, storage, err := acquire(model.ContainerProject, p.ID, now.Add(time.Minute))
		if err != nil || storage != "default" {
			t.Fatalf("acquire: %v, storage %q", err, storage)
		}
		if _, _, err := acquire(model.ContainerProject, p.ID, now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if n := live(model.ContainerProject, p.ID, now); n != 1 {
			t.Errorf("live leases %d; want 1 (the expired one is not)", n)
		}
		if !setReadOnly(model.ContainerProject, p.ID, true) {
			t.Fatal("not made read-only")
		}
		if setReadOnly(model.ContainerProject, p.ID, true) {
			t.Error("made read-only twice")
		}
		if _, _, err := acquire(model.ContainerProject, p.ID, now.Add(time.Minute)); !errors.Is(err, model.ErrRepositoryReadOnly) {
			t.Errorf("lease on a read-only project: %v", err)
		}
		if n := live(model.ContainerProject, p.ID, now); n != 1 {
			t.Errorf("the lease taken before is not counted: %d", n)
		}
		var renewed bool
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if renewed, err = tx.RenewWriteLease(ctx, l1, now.Add(2*time.Minute)); err != nil {
				return err
			}
			return tx.ReleaseWriteLease(ctx, l1)
		}); err != nil || !renewed {
			t.Fatalf("renew and release: %v %v", renewed, err)
		}
		if n := live(model.ContainerProject, p.ID, now); n != 0 {
			t.Errorf("live leases after release %d", n)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			renewed, err = tx.RenewWriteLease(ctx, l1, now.Add(2*time.Minute))
			return err
		}); err != nil || renewed {
			t.Errorf("a released lease renewed: %v %v", renewed, err)
		}
		// Groups have the same; another container is unaffected.
		if _, storage, err := acquire(model.ContainerGroup, g.ID, now.Add(time.Minute)); err != nil || storage != "default" {
			t.Errorf("group lease: %v %q", err, storage)
		}
		if _, _, err := acquire(model.ContainerGroup, owner.NamespaceID, now.Add(time.Minute)); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("a user namespace is no group: %v", err)
		}
		if _, _, err := acquire(model.ContainerSnippet, 1, now.Add(time.Minute)); err == nil {
			t.Error("a kind without a table took a lease")
		}

		// The switch: only from the storage it is on, only while
		// read-only; it makes the container writable.
		var switched bool
		sw := func(from, to string) bool {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				switched, err = tx.SwitchContainerStorage(ctx, model.ContainerProject, p.ID, from, to)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return switched
		}
		if sw("elsewhere", "second") {
			t.Error("switched from a storage it is not on")
		}
		if !sw("default", "second") {
			t.Fatal("not switched")
		}
		got, err := db.ProjectByID(ctx, p.ID)
		if err != nil || got.RepositoryStorage != "second" || got.RepositoryReadOnly {
			t.Fatalf("after the switch: %q read-only %v (%v)", got.RepositoryStorage, got.RepositoryReadOnly, err)
		}
		if sw("second", "default") {
			t.Error("switched a writable project")
		}
		// An edit made from a project read before the switch keeps the
		// new storage.
		p.Description = "edited"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProject(ctx, &p) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.ProjectByID(ctx, p.ID); got.RepositoryStorage != "second" || got.Description != "edited" {
			t.Errorf("after an edit: %q %q", got.RepositoryStorage, got.Description)
		}
		ids, err := db.ContainersOnStorage(ctx, model.ContainerProject, "second", 0, 10)
		if err != nil || len(ids) != 1 || ids[0] != p.ID {
			t.Errorf("projects on second: %v %v", ids, err)
		}
		ids, err = db.ContainersOnStorage(ctx, model.ContainerGroup, "default", 0, 10)
		if err != nil || len(ids) != 1 || ids[0] != g.ID {
			t.Errorf("groups on default: %v %v (user namespaces are no groups)", ids, err)
		}
	})
}

// Leases and the read-only switch race: every lease either exists before
// the container is read-only (and is then counted) or is refused.
func TestWriteLeases_raceWithReadOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		until := db.Now().Add(time.Hour)
		var mu sync.Mutex
		granted := 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for j := 0; j < 10; j++ {
					err := db.InTx(ctx, func(tx *store.Tx) error {
						_, _, err := tx.AcquireWriteLease(ctx, model.ContainerProject, p.ID, "racer", until)
						return err
					})
					if err == nil {
						mu.Lock()
						granted++
						mu.Unlock()
					} else if !errors.Is(err, model.ErrRepositoryReadOnly) {
						t.Error(err)
					}
				}
			}()
		}
		close(start)
		time.Sleep(5 * time.Millisecond)
		var live int
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.SetContainerReadOnly(ctx, model.ContainerProject, p.ID, true); err != nil {
				return err
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// What the move sees once read-only is set: every lease granted.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			live, err = tx.LiveWriteLeases(ctx, model.ContainerProject, p.ID, db.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if live != granted {
			t.Errorf("leases seen after read-only %d; granted %d", live, granted)
		}
	})
}

// Moves: created, moved only along the table and only from the state the
// writer read, listed newest first by kind and container.
func TestStorageMoves_compareAndSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		q := storetest.NewProject(t, db, owner)
		g := storetest.NewGroup(t, db, owner)
		in := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		mk := func(kind model.ContainerKind, id int64) model.RepositoryStorageMove {
			m := model.RepositoryStorageMove{Kind: kind, ContainerID: id, State: model.MoveScheduled, SourceStorageName: "default",
				DestinationStorageName: "second"}
			in(func(tx *store.Tx) error { return tx.CreateStorageMove(ctx, &m) })
			return m
		}
		m1, m2, m3, gm := mk(model.ContainerProject, p.ID), mk(model.ContainerProject, q.ID), mk(model.ContainerProject, p.ID),
			mk(model.ContainerGroup, g.ID)
		stale := m1
		var moved bool
		in(func(tx *store.Tx) (err error) { moved, err = tx.MoveStorageMove(ctx, &m1, model.MoveStart, ""); return })
		if !moved || m1.State != model.MoveStarted {
			t.Fatalf("start: %v %s", moved, m1.State)
		}
		in(func(tx *store.Tx) (err error) {
			moved, err = tx.MoveStorageMove(ctx, &stale, model.MoveFail, "late")
			return
		})
		if moved || stale.State != model.MoveScheduled {
			t.Error("a writer that read an older state moved the move")
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.MoveStorageMove(ctx, &m1, model.MoveFinishCleanup, "")
			return err
		})
		if !errors.Is(err, model.ErrTransition) {
			t.Errorf("a move the table refuses: %v", err)
		}
		long := strings.Repeat("x", 300)
		in(func(tx *store.Tx) (err error) {
			moved, err = tx.MoveStorageMove(ctx, &m1, model.MoveFail, long)
			return
		})
		got, err := db.StorageMove(ctx, m1.ID)
		if err != nil || !moved || got.State != model.MoveFailed || len(got.ErrorMessage) != model.MoveErrorLimit {
			t.Errorf("failed: %v %s %d (%v)", moved, got.State, len(got.ErrorMessage), err)
		}
		list, info, err := db.ListStorageMoves(ctx, model.ContainerProject, 0, model.Page{Number: 1, PerPage: 2})
		if err != nil || len(list) != 2 || list[0].ID != m3.ID || list[1].ID != m2.ID || !info.HasMore || info.Total != 3 {
			t.Errorf("project moves page 1: %v %+v %v", list, info, err)
		}
		list, _, err = db.ListStorageMoves(ctx, model.ContainerProject, p.ID, model.Page{Number: 1, PerPage: 20})
		if err != nil || len(list) != 2 || list[0].ID != m3.ID || list[1].ID != m1.ID {
			t.Errorf("moves of p: %v %v", list, err)
		}
		list, _, err = db.ListStorageMoves(ctx, model.ContainerGroup, 0, model.Page{Number: 1, PerPage: 20})
		if err != nil || len(list) != 1 || list[0].ID != gm.ID || list[0].Kind != model.ContainerGroup {
			t.Errorf("group moves: %v %v", list, err)
		}
		if n, err := db.CountHoldingStorageMoves(ctx, model.ContainerProject); err != nil || n != 2 {
			t.Errorf("holding project moves %d %v; want 2", n, err)
		}
		if m, ok, err := db.UnfinishedStorageMove(ctx, model.ContainerProject, p.ID); err != nil || !ok || m.ID != m3.ID {
			t.Errorf("unfinished move of p: %v %v %v", m.ID, ok, err)
		}
		// Removing the project removes its moves.
		in(func(tx *store.Tx) error { return tx.DeleteProject(ctx, &p) })
		if _, err := db.StorageMove(ctx, m3.ID); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("a removed project's move: %v", err)
		}
	})
}

// Two processes never run one move twice: of many writers starting the
// same scheduled move at once, exactly one moves it.
func TestStorageMoves_oneStarter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		m := model.RepositoryStorageMove{Kind: model.ContainerProject, ContainerID: p.ID, State: model.MoveScheduled,
			SourceStorageName: "default", DestinationStorageName: "second"}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateStorageMove(ctx, &m) }); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		won := 0
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := m
				err := db.InTx(ctx, func(tx *store.Tx) error {
					moved, err := tx.MoveStorageMove(ctx, &mine, model.MoveStart, "")
					if moved {
						mu.Lock()
						won++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Errorf("%d writers started the move; want 1", won)
		}
	})
}
