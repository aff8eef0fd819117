package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// Environments made by racing creators are one row; deployments and
// environments move only by compare-and-set against their tables: a
// writer that read an old status loses, and a move the table refuses is
// ErrTransition before any write.
func TestEnvironments_compareAndSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		env := model.Environment{ProjectID: p.ID, Name: "review/x", Slug: model.EnvironmentSlug("review/x"), Tier: model.TierDevelopment}
		ids := make(chan int64, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var got model.Environment
				err := db.InTx(ctx, func(tx *store.Tx) error {
					var err error
					got, _, err = tx.EnsureEnvironment(ctx, env)
					return err
				})
				if err != nil {
					t.Error(err)
				}
				ids <- got.ID
			}()
		}
		wg.Wait()
		close(ids)
		var first int64
		for id := range ids {
			if first == 0 {
				first = id
			}
			if id == 0 || id != first {
				t.Errorf("racing creators got environments %d and %d", first, id)
			}
		}
		// A different name with a taken slug is a conflict.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := tx.EnsureEnvironment(ctx, model.Environment{ProjectID: p.ID, Name: "other", Slug: env.Slug, Tier: model.TierOther})
			return err
		})
		if !errors.Is(err, model.ErrConflict) {
			t.Errorf("taken slug: %v", err)
		}

		var d model.Deployment
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			d = model.Deployment{ProjectID: p.ID, EnvironmentID: first, Ref: "main", SHA: "abc", Status: model.DeployCreated}
			return tx.CreateDeployment(ctx, &d)
		}); err != nil {
			t.Fatal(err)
		}
		if d.IID != 1 || d.FinishedAt != nil {
			t.Errorf("deployment %+v", d)
		}
		move := func(d *model.Deployment, to model.DeploymentStatus) (bool, error) {
			var moved bool
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				moved, err = tx.MoveDeployment(ctx, d, to)
				return err
			})
			return moved, err
		}
		stale := d
		if moved, err := move(&d, model.DeployRunning); !moved || err != nil || d.Status != model.DeployRunning {
			t.Fatalf("created → running: %v, %v", moved, err)
		}
		// The writer that read "created" loses, and changes nothing.
		if moved, err := move(&stale, model.DeploySkipped); moved || err != nil {
			t.Errorf("a stale move: %v, %v", moved, err)
		}
		if moved, err := move(&d, model.DeploySuccess); !moved || err != nil || d.FinishedAt == nil {
			t.Errorf("running → success: %v, %v, %v", moved, err, d.FinishedAt)
		}
		if _, err := move(&d, model.DeployFailed); !errors.Is(err, model.ErrTransition) {
			t.Errorf("success → failed: %v", err)
		}
		got, err := db.Deployment(ctx, d.ID)
		if err != nil || got.Status != model.DeploySuccess || got.FinishedAt == nil {
			t.Errorf("stored %+v, %v", got, err)
		}
		last, err := db.LastDeployment(ctx, first, model.DeploySuccess)
		if err != nil || last.ID != d.ID {
			t.Errorf("last successful %+v, %v", last, err)
		}

		moveEnv := func(from, to model.EnvironmentState) (bool, error) {
			var moved bool
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				moved, err = tx.MoveEnvironment(ctx, first, from, to)
				return err
			})
			return moved, err
		}
		if moved, err := moveEnv(model.EnvAvailable, model.EnvStopping); !moved || err != nil {
			t.Errorf("available → stopping: %v, %v", moved, err)
		}
		if moved, err := moveEnv(model.EnvAvailable, model.EnvStopped); moved || err != nil {
			t.Errorf("a stale stop: %v, %v", moved, err)
		}
		if _, err := moveEnv(model.EnvStopped, model.EnvStopping); !errors.Is(err, model.ErrTransition) {
			t.Errorf("stopped → stopping: %v", err)
		}
		var deleted bool
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			deleted, err = tx.DeleteStoppedEnvironment(ctx, first)
			return err
		}); err != nil || deleted {
			t.Errorf("deleted a stopping environment: %v, %v", deleted, err)
		}
	})
}
