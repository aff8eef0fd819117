package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

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

// TestCreatePipelineNumberLast: pipelines of one project created at once,
// each numbered (with its deployments) when its transaction commits, get
// distinct iids after those handed out before; a transaction rolled back
// after asking for its number takes none; the deployments' iids follow in
// their order.
func TestCreatePipelineNumberLast(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		p, first, j := ciRows(t, db) // iid 1
		var env model.Environment
		err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			env, _, err = tx.EnsureEnvironment(ctx, model.Environment{ProjectID: p.ID, Name: "review", Slug: "review", Tier: "development"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		create := func(fail bool) (model.Pipeline, []*model.Deployment, error) {
			pl := model.Pipeline{ProjectID: p.ID, Ref: "main", SHA: "abc", BeforeSHA: model.ZeroRef, Source: model.SourceAPI,
				Status: model.StatusCreated}
			var ds []*model.Deployment
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.CreatePipelineNumberLast(ctx, &pl); err != nil {
					return err
				}
				if err := tx.NumberPipeline(ctx, &pl); err != nil {
					return err
				}
				for i := range 3 {
					ds = append(ds, &model.Deployment{ProjectID: p.ID, EnvironmentID: env.ID, Ref: fmt.Sprintf("ref-%d", i), SHA: "abc",
						JobID: j.ID, Status: model.DeployCreated})
				}
				if err := tx.CreateDeploymentsAtCommit(ctx, ds); err != nil {
					return err
				}
				if fail {
					return errors.New("rolled back")
				}
				return nil
			})
			return pl, ds, err
		}
		if _, _, err := create(true); err == nil {
			t.Fatal("a failing transaction committed")
		}
		const n = 6
		type made struct {
			pl  model.Pipeline
			ds  []*model.Deployment
			err error
		}
		out := make(chan made, n)
		for range n {
			go func() {
				pl, ds, err := create(false)
				out <- made{pl, ds, err}
			}()
		}
		iids, dIIDs := map[int64]bool{first.IID: true}, map[int64]bool{}
		for range n {
			m := <-out
			if m.err != nil {
				t.Fatal(m.err)
			}
			got, err := db.Pipeline(ctx, m.pl.ID)
			if err != nil || got.IID != m.pl.IID || m.pl.IID < 2 || m.pl.IID > n+1 || iids[m.pl.IID] {
				t.Fatalf("pipeline %d: iid %d stored %d, %v; want a new one of 2…%d", m.pl.ID, m.pl.IID, got.IID, err, n+1)
			}
			iids[m.pl.IID] = true
			for i, d := range m.ds {
				got, err := db.Deployment(ctx, d.ID)
				if err != nil || got.IID != d.IID || got.Ref != d.Ref || d.IID != m.ds[0].IID+int64(i) || dIIDs[d.IID] {
					t.Fatalf("deployment %d (%s): iid %d stored %d (%s), %v; want consecutive iids in order", d.ID, d.Ref, d.IID, got.IID, got.Ref, err)
				}
				dIIDs[d.IID] = true
			}
		}
		if len(dIIDs) != 3*n {
			t.Fatalf("%d deployment iids; want %d", len(dIIDs), 3*n)
		}
		for iid := range dIIDs {
			if iid < 1 || iid > 3*n {
				t.Fatalf("deployment iid %d; want 1…%d (the rolled back transaction took none)", iid, 3*n)
			}
		}
	})
}

// TestMoveJobReadAhead: the counts and created jobs read with a move are
// what JobStatusCounts and LatestJobsIn read after it; a statement
// between makes them read again; a lost compare-and-set is reported.
func TestMoveJobReadAhead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		_, pl, j := ciRows(t, db)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			moved, err := tx.MoveJobReadAhead(ctx, model.StatusCreated, model.StatusPending, store.JobChange{}, &j)
			if err != nil || !moved || j.Status != model.StatusPending {
				return fmt.Errorf("move: %v, %v, %s; want moved to pending", moved, err, j.Status)
			}
			counts, err := tx.JobStatusCounts(ctx, pl.ID)
			if err != nil || counts[0][model.StatusItem{Status: model.StatusPending}] != 1 || len(counts[0]) != 1 {
				return fmt.Errorf("counts after the move %v, %v; want one pending", counts, err)
			}
			if created, err := tx.LatestJobsIn(ctx, pl.ID, model.StatusCreated); err != nil || len(created) != 0 {
				return fmt.Errorf("created jobs after the move %v, %v; want none", created, err)
			}
			// A job added between the move and the counts is counted.
			extra := model.Job{ProjectID: j.ProjectID, PipelineID: pl.ID, Kind: model.JobBuild, Name: "extra", Stage: "build",
				Status: model.StatusCreated, When: model.WhenOnSuccess, Ref: "main", SHA: "abc"}
			stale := j
			if moved, err := tx.MoveJobReadAhead(ctx, model.StatusPending, model.StatusRunning, store.JobChange{}, &j); err != nil || !moved {
				return fmt.Errorf("second move: %v, %v", moved, err)
			}
			if err := tx.CreateJob(ctx, &extra); err != nil {
				return err
			}
			counts, err = tx.JobStatusCounts(ctx, pl.ID)
			if err != nil || counts[0][model.StatusItem{Status: model.StatusRunning}] != 1 || counts[0][model.StatusItem{Status: model.StatusCreated}] != 1 {
				return fmt.Errorf("counts after a job was added %v, %v; want one running, one created", counts, err)
			}
			if created, err := tx.LatestJobsIn(ctx, pl.ID, model.StatusCreated); err != nil || len(created) != 1 || created[0].ID != extra.ID {
				return fmt.Errorf("created jobs after a job was added %v, %v; want the added one", created, err)
			}
			// A move from a status the job has left is lost, not applied.
			moved, err = tx.MoveJobReadAhead(ctx, model.StatusPending, model.StatusRunning, store.JobChange{}, &stale)
			if err != nil || moved {
				return fmt.Errorf("stale move: %v, %v; want not moved", moved, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Job(ctx, j.ID)
		if err != nil || got.Status != model.StatusRunning || got.Version != 2 {
			t.Fatalf("job %s v%d, %v; want running after two moves", got.Status, got.Version, err)
		}
	})
}

// TestCreateJobs_sameRowsAsMultiRowInsert: the jobs CreateJobs stores
// (on PostgreSQL from one JSON parameter) hold, column for column, what
// the multi-row INSERT stored for the same jobs: text with quotes,
// backslashes, control characters, HTML characters and other scripts,
// every optional column set and unset, a fraction, sealed manual
// variables.
func TestCreateJobs_sameRowsAsMultiRowInsert(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		db.SetSealer(fakeSealer{keys: []string{"k"}})
		ctx := context.Background()
		p, pl, _ := ciRows(t, db)
		var group int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			g, err := tx.EnsureResourceGroup(ctx, p.ID, "prod")
			group = g.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 27, 21, 0, 0, 123456000, time.UTC)
		exit, cov, tiny := 137, 87.125, 0.1+0.2
		text := "a \"quoted\" \\path\\ \n\ttab\r \x01\x1f <b>&amp;</b> ü 日本 😀 \u2028 end"
		newJobs := func() []*model.Job {
			return []*model.Job{
				{ProjectID: p.ID, PipelineID: pl.ID, Kind: model.JobBuild, Name: "plain", Stage: "build", Status: model.StatusCreated,
					When: model.WhenOnSuccess, Ref: "main", SHA: "abc", Needs: []string{"build api", "test-1:[x]"},
					TagList: []string{"linux", "docker"}},
				{ProjectID: p.ID, PipelineID: pl.ID, Kind: model.JobBridge, Name: text, Stage: text, StageIdx: 3, Status: model.StatusFailed,
					When: model.WhenManual, AllowFailure: true, FailureReason: model.FailureEnvironmentCreation, ExitCode: &exit,
					Retried: true, EnqueueImmediately: true, RetryCount: 2, UserID: p.CreatorID, Ref: "feature/" + text, Tag: true,
					SHA: "0123456789abcdef0123456789abcdef01234567", Coverage: &cov, DAG: true, Needs: []string{"a", text, "<x>&"},
					TagList: []string{"linux", "déjà vu"}, Timeout: 3600, ResourceGroup: group,
					Options:         `{"script":["echo \"hi\" \u003e out","a\\b"],"name":"` + "ü" + `"}`,
					ManualVariables: []model.Variable{{Key: "K", Value: text}}, TargetURL: "https://example.com/?a=1&b=" + text,
					Description: text, QueuedAt: &at, ScheduledAt: &at, StartedAt: &at, FinishedAt: &at, Environment: "review/" + text},
				{ProjectID: p.ID, PipelineID: pl.ID, Kind: model.JobBuild, Name: "fraction", Stage: "test", StageIdx: 1,
					Status: model.StatusPending, When: model.WhenDelayed, Ref: "main", SHA: "abc", Coverage: &tiny, Needs: []string{},
					ManualVariables: []model.Variable{}, QueuedAt: &at},
			}
		}
		stored := func(create func(*store.Tx, []*model.Job) error) [][]any {
			jobs := newJobs()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return create(tx, jobs) }); err != nil {
				t.Fatal(err)
			}
			var rows [][]any
			for _, j := range jobs {
				if j.ID == 0 {
					t.Fatalf("job %q has no id", j.Name)
				}
				row, err := db.JobInsertedColumns(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, row)
			}
			return rows
		}
		before := stored(func(tx *store.Tx, jobs []*model.Job) error { return tx.CreateJobsAsRows(ctx, jobs) })
		after := stored(func(tx *store.Tx, jobs []*model.Job) error { return tx.CreateJobs(ctx, jobs) })
		for i := range before {
			// created_at and updated_at (columns 28 and 29, from 0) are the
			// transactions' own times.
			if len(before[i]) != 35 || len(after[i]) != 35 {
				t.Fatalf("job %d: %d and %d columns", i, len(before[i]), len(after[i]))
			}
			before[i][28], before[i][29] = nil, nil
			after[i][28], after[i][29] = nil, nil
			for c := range before[i] {
				if !reflect.DeepEqual(before[i][c], after[i][c]) {
					t.Errorf("job %d column %d: stored %#v, before %#v", i, c, after[i][c], before[i][c])
				}
			}
		}
		if before[1][25] == nil || before[1][22] == nil {
			t.Fatalf("the full job lost its manual variables or timeout: %#v", before[1])
		}
	})
}
