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

// ciRows makes a project with one pipeline and one created job.
func ciRows(t *testing.T, db *store.DB) (model.Project, model.Pipeline, model.Job) {
	t.Helper()
	ctx := context.Background()
	owner := storetest.NewUser(t, db)
	p := storetest.NewProject(t, db, owner)
	pl := model.Pipeline{ProjectID: p.ID, Ref: "main", SHA: "abc", BeforeSHA: model.ZeroRef, Source: model.SourceAPI, Status: model.StatusCreated}
	j := model.Job{ProjectID: p.ID, Kind: model.JobBuild, Name: "build", Stage: "build", Status: model.StatusCreated,
		When: model.WhenOnSuccess, Ref: "main", SHA: "abc"}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreatePipeline(ctx, &pl); err != nil {
			return err
		}
		j.PipelineID = pl.ID
		return tx.CreateJob(ctx, &j)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, pl, j
}

// TestMoveJob_compareAndSet: a move the table refuses never reaches the
// database; of two writers moving a job from the same status, one wins
// and the other is told so; the row keeps the winner's move.
func TestMoveJob_compareAndSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		_, _, j := ciRows(t, db)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.MoveJob(ctx, j.ID, model.StatusCreated, model.StatusRunning, store.JobChange{}, nil)
			return err
		})
		if !errors.Is(err, model.ErrTransition) {
			t.Fatalf("created → running: %v; want ErrTransition", err)
		}
		var wg sync.WaitGroup
		wins := make(chan model.CIStatus, 2)
		for _, to := range []model.CIStatus{model.StatusPending, model.StatusCanceled} {
			wg.Add(1)
			go func(to model.CIStatus) {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					moved, err := tx.MoveJob(ctx, j.ID, model.StatusCreated, to, store.JobChange{}, nil)
					if moved {
						wins <- to
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}(to)
		}
		wg.Wait()
		close(wins)
		var won []model.CIStatus
		for w := range wins {
			won = append(won, w)
		}
		got, err := db.Job(ctx, j.ID)
		if err != nil || len(won) != 1 || got.Status != won[0] || got.Version != 1 {
			t.Fatalf("winners %v, row %s v%d, %v; want one winner kept", won, got.Status, got.Version, err)
		}
	})
}

// TestResourceHolder_swap: the slot changes hands only from the holder
// named.
func TestResourceHolder_swap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		p, _, j := ciRows(t, db)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			g, err := tx.EnsureResourceGroup(ctx, p.ID, "prod")
			if err != nil {
				return err
			}
			again, err := tx.EnsureResourceGroup(ctx, p.ID, "prod")
			if err != nil || again.ID != g.ID || g.ProcessMode != model.ProcessUnordered {
				t.Fatalf("ensure twice: %+v %+v %v", g, again, err)
			}
			steps := []struct {
				old, new int64
				want     bool
			}{{0, j.ID, true}, {0, j.ID + 1, false}, {j.ID + 1, 0, false}, {j.ID, 0, true}}
			for _, s := range steps {
				if ok, err := tx.SwapResourceHolder(ctx, g.ID, s.old, s.new); err != nil || ok != s.want {
					t.Fatalf("swap %d → %d: %v %v; want %v", s.old, s.new, ok, err, s.want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestNextIID_perProject: pipeline iids count per project, from one.
func TestNextIID_perProject(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		a, _, _ := ciRows(t, db)
		b, _, _ := ciRows(t, db)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, c := range []struct {
				project int64
				want    int64
			}{{a.ID, 2}, {a.ID, 3}, {b.ID, 2}} {
				if n, err := tx.NextIID(ctx, c.project, store.IIDPipelines); err != nil || n != c.want {
					t.Fatalf("project %d: iid %d, %v; want %d", c.project, n, err, c.want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
