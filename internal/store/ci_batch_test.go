package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestCreateJobs_idsMatchRows: a pipeline's jobs inserted at once (more
// than one multi-row statement's worth) each get the id of their own row,
// and concurrent inserts into another pipeline do not mix them up.
func TestCreateJobs_idsMatchRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		p, pl, _ := ciRows(t, db)
		_, other, _ := ciRows(t, db)
		const n = 150 // three statements: 64, 64, 22 rows
		newJobs := func(pipeline int64, prefix string) []*model.Job {
			jobs := make([]*model.Job, n)
			for i := range jobs {
				jobs[i] = &model.Job{ProjectID: p.ID, PipelineID: pipeline, Kind: model.JobBuild, Name: fmt.Sprintf("%s %d", prefix, i),
					Stage: "test", StageIdx: i % 3, Status: model.StatusCreated, When: model.WhenOnSuccess, Ref: "main", SHA: "abc",
					Needs: []string{fmt.Sprintf("need %d", i)}}
			}
			return jobs
		}
		a, b := newJobs(pl.ID, "a"), newJobs(other.ID, "b")
		errs := make(chan error, 2)
		for _, jobs := range [][]*model.Job{a, b} {
			go func() {
				errs <- db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateJobs(ctx, jobs) })
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		seen := map[int64]bool{}
		for _, jobs := range [][]*model.Job{a, b} {
			for i, j := range jobs {
				if j.ID == 0 || seen[j.ID] {
					t.Fatalf("job %d (%s) has id %d (zero or given twice)", i, j.Name, j.ID)
				}
				seen[j.ID] = true
				got, err := db.Job(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Name != j.Name || got.PipelineID != j.PipelineID || got.StageIdx != j.StageIdx || len(got.Needs) != 1 ||
					got.Needs[0] != j.Needs[0] {
					t.Fatalf("job id %d holds %s (pipeline %d, stage %d, needs %v); want %s (pipeline %d, stage %d, needs %v)",
						j.ID, got.Name, got.PipelineID, got.StageIdx, got.Needs, j.Name, j.PipelineID, j.StageIdx, j.Needs)
				}
			}
		}
		all, err := db.PipelineJobs(ctx, pl.ID, false)
		if err != nil || len(all) != n+1 { // and ciRows' job
			t.Fatalf("pipeline has %d jobs, %v; want %d", len(all), err, n+1)
		}
	})
}

// TestCreateDeployments_consecutiveIIDs: deployments made at once take
// consecutive iids after those handed out before, each its own row's.
func TestCreateDeployments_consecutiveIIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		p, _, j := ciRows(t, db)
		var ds []*model.Deployment
		err := db.InTx(ctx, func(tx *store.Tx) error {
			env, _, err := tx.EnsureEnvironment(ctx, model.Environment{ProjectID: p.ID, Name: "production", Slug: "production",
				Tier: "production"})
			if err != nil {
				return err
			}
			first := model.Deployment{ProjectID: p.ID, EnvironmentID: env.ID, Ref: "main", SHA: "abc", JobID: j.ID, Status: model.DeployCreated}
			if err := tx.CreateDeployment(ctx, &first); err != nil || first.IID != 1 {
				return fmt.Errorf("first deployment iid %d, %v; want 1", first.IID, err)
			}
			for i := range 3 {
				ds = append(ds, &model.Deployment{ProjectID: p.ID, EnvironmentID: env.ID, Ref: fmt.Sprintf("ref-%d", i), SHA: "abc",
					JobID: j.ID, Status: model.DeployCreated})
			}
			return tx.CreateDeployments(ctx, ds)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			got, err := db.Deployment(ctx, d.ID)
			if err != nil || got.IID != int64(i+2) || d.IID != got.IID || got.Ref != d.Ref {
				t.Fatalf("deployment %d: iid %d ref %s, %v; want iid %d ref %s", d.ID, got.IID, got.Ref, err, i+2, d.Ref)
			}
		}
	})
}

// TestStatements_preparedOncePerConnection: a statement run again and
// again on one connection is prepared there once (pgx's statement cache
// on PostgreSQL, the writer's statements on SQLite), not per run.
func TestStatements_preparedOncePerConnection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		_, pl, _ := ciRows(t, db)
		suffix := "FROM ci_pipelines WHERE id = ?"
		if db.Dialect == store.Postgres {
			suffix = "FROM ci_pipelines WHERE id = $1"
		}
		// Twice: on SQLite a transaction's statements not prepared yet
		// are prepared on the writer once it ends, for the next ones.
		for round := range 2 {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for range 5 {
					if _, err := tx.Pipeline(ctx, pl.ID); err != nil {
						return err
					}
				}
				if round == 0 {
					return nil
				}
				prepared, err := tx.PreparedStatements(ctx)
				if err != nil {
					return err
				}
				n := 0
				for q, c := range prepared {
					if strings.HasSuffix(q, suffix) && strings.HasPrefix(q, "SELECT id, project_id, iid") {
						n += c
					}
				}
				if n != 1 {
					t.Errorf("the pipeline's query is prepared %d times on the connection; want 1 (%d statements prepared)", n, len(prepared))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}
