package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quarry/internal/model"
)

// Pipelines. A pipeline's status is written only by the engine's
// processing, which holds the pipeline's lock (LockPipeline) and moves it
// with a compare-and-set on the status it read.

const pipelineColumns = `id, project_id, iid, ref, tag, sha, before_sha, source, status, failure_reason, yaml_errors, user_id,
	parent_id, parent_job_id, name, event_key, protected, coverage, created_at, updated_at, started_at, finished_at, committed_at, duration, version,
	merge_request_id`

func pipelineDest(p *model.Pipeline) []any {
	return []any{&p.ID, &p.ProjectID, &p.IID, &p.Ref, &p.Tag, &p.SHA, &p.BeforeSHA, &p.Source, &p.Status,
		nullString{(*string)(&p.FailureReason)}, nullString{&p.YAMLErrors}, nullInt64{&p.UserID}, nullInt64{&p.ParentID},
		nullInt64{&p.ParentJobID}, nullString{&p.Name}, nullString{&p.EventKey}, &p.Protected, nullFloat{&p.Coverage}, tsScan{&p.CreatedAt},
		tsScan{&p.UpdatedAt}, nullTSScan{&p.StartedAt}, nullTSScan{&p.FinishedAt}, nullTSScan{&p.CommittedAt},
		nullInt64Ptr{&p.Duration}, &p.Version, nullInt64{&p.MergeRequestID}}
}

// UniquePipelineEvent allows one pipeline per project and refs-changed
// event key.
const UniquePipelineEvent = "ci_pipelines_event_key"

func init() {
	sqliteColumnUniques["ci_pipelines.project_id, ci_pipelines.event_key"] = UniquePipelineEvent
}

// Internal id usages.
const IIDPipelines = "ci_pipelines"

// NextIID hands out the next per-project number of a kind (1, 2, …),
// never the same twice.
func (tx *Tx) NextIID(ctx context.Context, projectID int64, usage string) (int64, error) {
	return tx.NextIIDs(ctx, projectID, usage, 1)
}

// NextIIDs hands out n consecutive per-project numbers of a kind in one
// statement and returns the first.
func (tx *Tx) NextIIDs(ctx context.Context, projectID int64, usage string, n int) (int64, error) {
	var last int64
	err := tx.row(ctx, []any{&last}, `INSERT INTO internal_ids (project_id, usage, last_value) VALUES (?, ?, ?)
		ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + ? RETURNING last_value`, projectID, usage, n, n)
	return last - int64(n) + 1, err
}

// CreatePipeline stores p with the project's next iid and sets its ID,
// IID and times.
func (tx *Tx) CreatePipeline(ctx context.Context, p *model.Pipeline) error {
	iid, err := tx.NextIID(ctx, p.ProjectID, IIDPipelines)
	if err != nil {
		return err
	}
	now := tx.Now()
	p.IID, p.CreatedAt, p.UpdatedAt = iid, now, now
	p.ID, err = tx.insert(ctx, `INSERT INTO ci_pipelines (project_id, iid, ref, tag, sha, before_sha, source, status, failure_reason,
		yaml_errors, user_id, parent_id, parent_job_id, name, event_key, protected, created_at, updated_at, started_at, finished_at,
		committed_at, merge_request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ProjectID, p.IID, p.Ref, p.Tag, p.SHA, p.BeforeSHA, p.Source, p.Status, emptyNull(string(p.FailureReason)),
		emptyNull(p.YAMLErrors), zeroNull(p.UserID), zeroNull(p.ParentID), zeroNull(p.ParentJobID), emptyNull(p.Name),
		emptyNull(p.EventKey), p.Protected,
		micros(now), micros(now), nullMicros(p.StartedAt), nullMicros(p.FinishedAt), nullMicros(p.CommittedAt), zeroNull(p.MergeRequestID))
	return err
}

// CreatePipelineNumberLast stores p as CreatePipeline does but, on
// PostgreSQL, without its iid: the row takes a provisional one (the
// negative of its id, which no other row has) until NumberPipeline gives
// it the project's next, just before the transaction commits. Taking the
// number locks the project's counter until the commit; taken last, the
// lock is held for one statement and the commit instead of the whole
// creation (the jobs' insert, the persistent ref), so pipelines of one
// project are created side by side. On SQLite, whose one writer
// serializes transactions anyway, it is CreatePipeline.
func (tx *Tx) CreatePipelineNumberLast(ctx context.Context, p *model.Pipeline) error {
	if tx.dialect != Postgres {
		return tx.CreatePipeline(ctx, p)
	}
	now := tx.Now()
	p.IID, p.CreatedAt, p.UpdatedAt = 0, now, now
	err := tx.row(ctx, []any{&p.ID}, `WITH n AS (SELECT nextval(pg_get_serial_sequence('ci_pipelines', 'id')) AS id)
		INSERT INTO ci_pipelines (id, iid, project_id, ref, tag, sha, before_sha, source, status, failure_reason,
		yaml_errors, user_id, parent_id, parent_job_id, name, event_key, protected, created_at, updated_at, started_at, finished_at,
		committed_at, merge_request_id) VALUES ((SELECT id FROM n), -(SELECT id FROM n), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
		p.ProjectID, p.Ref, p.Tag, p.SHA, p.BeforeSHA, p.Source, p.Status, emptyNull(string(p.FailureReason)),
		emptyNull(p.YAMLErrors), zeroNull(p.UserID), zeroNull(p.ParentID), zeroNull(p.ParentJobID), emptyNull(p.Name),
		emptyNull(p.EventKey), p.Protected,
		micros(now), micros(now), nullMicros(p.StartedAt), nullMicros(p.FinishedAt), nullMicros(p.CommittedAt), zeroNull(p.MergeRequestID))
	return err
}

// NumberPipeline gives a pipeline stored by CreatePipelineNumberLast the
// project's next iid, in one statement sent with the transaction's
// COMMIT (after every other statement of the transaction), and sets
// p.IID once committed; a pipeline that has its iid already (SQLite)
// keeps it.
func (tx *Tx) NumberPipeline(ctx context.Context, p *model.Pipeline) error {
	if p.IID != 0 {
		return nil
	}
	return tx.withCommit(ctx, `WITH n AS (INSERT INTO internal_ids (project_id, usage, last_value) VALUES (?, ?, 1)
		ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1 RETURNING last_value)
		UPDATE ci_pipelines SET iid = (SELECT last_value FROM n) WHERE id = ? AND iid < 0 RETURNING iid`, []any{p.ProjectID, IIDPipelines, p.ID},
		func(br pgx.BatchResults) error { return br.QueryRow().Scan(&p.IID) })
}

// Pipeline returns one pipeline.
func (tx *Tx) Pipeline(ctx context.Context, id int64) (model.Pipeline, error) {
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+" FROM ci_pipelines WHERE id = ?", id)
	return p, err
}

// LockPipeline reads a pipeline and, on PostgreSQL, locks its row until
// the transaction ends (SELECT … FOR UPDATE), so one pipeline is processed
// by one transaction at a time across processes. On SQLite the
// transaction holds the only writer, which serializes it already.
func (tx *Tx) LockPipeline(ctx context.Context, id int64) (model.Pipeline, error) {
	q := "SELECT " + pipelineColumns + " FROM ci_pipelines WHERE id = ?"
	if tx.dialect == Postgres {
		q += " FOR UPDATE"
	}
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), q, id)
	return p, err
}

var jobPipelineQuery = "SELECT " + prefixed("p.", pipelineColumns) + ", " + prefixed("j.", jobColumns) +
	" FROM ci_jobs j JOIN ci_pipelines p ON p.id = j.pipeline_id WHERE j.id = ?"

// LockJobPipeline reads job jobID into j with its pipeline, locked as
// LockPipeline locks it, in one statement; model.ErrNotFound when there
// is no such job. On PostgreSQL the job's row may be as it was before the
// lock was waited for (only the pipeline's row is read again once
// locked): a job moved meanwhile fails its move's compare-and-set.
func (tx *Tx) LockJobPipeline(ctx context.Context, jobID int64, j *model.Job) (model.Pipeline, error) {
	q := jobPipelineQuery
	if tx.dialect == Postgres {
		q += " FOR UPDATE OF p"
	}
	var p model.Pipeline
	err := tx.row(ctx, append(pipelineDest(&p), tx.jobDest(j)...), q, jobID)
	return p, err
}

// SavePipelineState writes the status and what goes with it (failure
// reason, start, finish, duration, coverage) if the pipeline still has
// status from and version; moved is false when another writer changed it
// meanwhile. The version moves with every write.
func (tx *Tx) SavePipelineState(ctx context.Context, p *model.Pipeline, from model.CIStatus) (moved bool, err error) {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE ci_pipelines SET status = ?, failure_reason = ?, started_at = ?, finished_at = ?, duration = ?,
		coverage = ?, updated_at = ?, version = version + 1 WHERE id = ? AND status = ? AND version = ?`,
		p.Status, emptyNull(string(p.FailureReason)), nullMicros(p.StartedAt), nullMicros(p.FinishedAt), nullInt64Value(p.Duration),
		nullFloatValue(p.Coverage), micros(now), p.ID, from, p.Version)
	if err == nil && n == 1 {
		p.UpdatedAt = now
		p.Version++
	}
	return n == 1, err
}

// DeletePipeline removes a pipeline with its jobs, variables and
// artifact records.
func (tx *Tx) DeletePipeline(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM ci_pipelines WHERE id = ?", id)
	return err
}

// ChildPipelines lists the pipelines a pipeline's bridges made, oldest
// first.
func (tx *Tx) ChildPipelines(ctx context.Context, parentID int64) ([]model.Pipeline, error) {
	var out []model.Pipeline
	err := tx.each(ctx, "SELECT "+pipelineColumns+" FROM ci_pipelines WHERE parent_id = ? ORDER BY id", []any{parentID}, func(r *sql.Rows) error {
		var p model.Pipeline
		err := r.Scan(pipelineDest(&p)...)
		out = append(out, p)
		return err
	})
	return out, err
}

// PipelineFilter selects a project's pipelines (GET /projects/:id/pipelines).
type PipelineFilter struct {
	ProjectID int64
	// Scope: running, pending, finished, branches, tags ("" any).
	Scope string
	// Refs are the branches (or tags) that exist, for scope branches
	// (tags): deleted refs have no latest pipeline.
	Refs          []string
	Status        model.CIStatus
	Source        string
	Ref, SHA      string
	YAMLErrors    *bool
	UserID        *int64
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
	// OrderBy: id (default), status, ref, updated_at, user_id.
	OrderBy string
	Asc     bool
}

var pipelineOrders = map[string]string{"id": "id", "status": "status", "ref": "ref", "updated_at": "updated_at", "user_id": "user_id"}

// Pipelines lists a project's pipelines, children left out.
func (tx *Tx) Pipelines(ctx context.Context, f PipelineFilter, page model.Page) ([]model.Pipeline, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	w.add("source <> ?", model.SourceParentPipeline)
	switch f.Scope {
	case "running":
		w.add("status = ?", model.StatusRunning)
	case "pending":
		w.add("status = ?", model.StatusPending)
	case "finished":
		w.add("status IN (?, ?, ?)", model.StatusSuccess, model.StatusFailed, model.StatusCanceled)
	case "branches", "tags":
		if len(f.Refs) == 0 {
			w.add("1 = 0")
			break
		}
		w.add(`id IN (SELECT MAX(id) FROM ci_pipelines WHERE project_id = ? AND tag = ? AND source <> ? AND ref IN (`+
			placeholders(len(f.Refs))+`) GROUP BY ref)`, append([]any{f.ProjectID, f.Scope == "tags", model.SourceParentPipeline},
			anys(f.Refs)...)...)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	if f.Source != "" {
		w.add("source = ?", f.Source)
	}
	if f.Ref != "" {
		w.add("ref = ?", f.Ref)
	}
	if f.SHA != "" {
		w.add("sha = ?", f.SHA)
	}
	if f.YAMLErrors != nil {
		if *f.YAMLErrors {
			w.add("yaml_errors IS NOT NULL")
		} else {
			w.add("yaml_errors IS NULL")
		}
	}
	if f.UserID != nil {
		w.add("user_id = ?", *f.UserID)
	}
	if f.UpdatedAfter != nil {
		w.add("updated_at > ?", micros(*f.UpdatedAfter))
	}
	if f.UpdatedBefore != nil {
		w.add("updated_at < ?", micros(*f.UpdatedBefore))
	}
	col := pipelineOrders[f.OrderBy]
	if col == "" {
		col = "id"
	}
	return list(ctx, tx, listSpec[model.Pipeline]{
		columns: pipelineColumns, from: "ci_pipelines", idCol: "id", where: w,
		order: order{column: col, desc: !f.Asc}, keyNotNull: col != "user_id",
		scan: func(r *sql.Rows) (model.Pipeline, error) {
			var p model.Pipeline
			return p, r.Scan(pipelineDest(&p)...)
		},
		keyOf: func(p model.Pipeline) (any, int64) {
			switch col {
			case "status":
				return string(p.Status), p.ID
			case "ref":
				return p.Ref, p.ID
			case "updated_at":
				return micros(p.UpdatedAt), p.ID
			case "user_id":
				return p.UserID, p.ID
			}
			return p.ID, p.ID
		},
	}, page)
}

// LatestPipeline is the newest pipeline of a ref at a commit (children
// left out).
func (tx *Tx) LatestPipeline(ctx context.Context, projectID int64, ref, sha string) (model.Pipeline, error) {
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+` FROM ci_pipelines WHERE project_id = ? AND ref = ? AND sha = ?
		AND source <> ? ORDER BY id DESC LIMIT 1`, projectID, ref, sha, model.SourceParentPipeline)
	return p, err
}

// CommitPipeline is the newest pipeline of a commit, of one ref when ref
// is not empty (any source: the pipeline a commit status joins).
func (tx *Tx) CommitPipeline(ctx context.Context, projectID int64, sha, ref string) (model.Pipeline, error) {
	var w where
	w.add("project_id = ?", projectID)
	w.add("sha = ?", sha)
	if ref != "" {
		w.add("ref = ?", ref)
	}
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+" FROM ci_pipelines"+w.sql()+" ORDER BY id DESC LIMIT 1", w.args...)
	return p, err
}

// AddPipelineVariables stores the variables a pipeline was made with, in
// their order, their values sealed.
func (tx *Tx) AddPipelineVariables(ctx context.Context, pipelineID int64, vars []model.Variable) error {
	rows := make([][]any, len(vars))
	for i, v := range vars {
		value, err := tx.sealValue(v.Value, sealPipelineVar)
		if err != nil {
			return err
		}
		rows[i] = []any{pipelineID, v.Key, value, v.VariableType, v.Raw, i}
	}
	if err := tx.execRows(ctx, "ci_pipeline_variables", "pipeline_id, key, value, variable_type, raw, position", rows); err != nil {
		return fmt.Errorf("pipeline variables: %w", err)
	}
	return nil
}

// PipelineVariables returns a pipeline's variables in the order given.
func (tx *Tx) PipelineVariables(ctx context.Context, pipelineID int64) ([]model.Variable, error) {
	out := []model.Variable{}
	err := tx.each(ctx, "SELECT key, value, variable_type, raw FROM ci_pipeline_variables WHERE pipeline_id = ? ORDER BY position",
		[]any{pipelineID}, func(r *sql.Rows) error {
			var v model.Variable
			err := r.Scan(&v.Key, sealedText{tx, &v.Value, sealPipelineVar}, &v.VariableType, &v.Raw)
			out = append(out, v)
			return err
		})
	return out, err
}

// nullFloat scans a nullable number into a *float64.
type nullFloat struct{ p **float64 }

func (n nullFloat) Scan(v any) error {
	var f sql.NullFloat64
	if err := f.Scan(v); err != nil {
		return err
	}
	if !f.Valid {
		*n.p = nil
		return nil
	}
	x := f.Float64
	*n.p = &x
	return nil
}

func nullFloatValue(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func nullInt64Value(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// PipelineByParentJob returns the pipeline a bridge made.
func (tx *Tx) PipelineByParentJob(ctx context.Context, jobID int64) (model.Pipeline, error) {
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+" FROM ci_pipelines WHERE parent_job_id = ? ORDER BY id LIMIT 1", jobID)
	return p, err
}

// PipelinesByIDs returns pipelines by id.
func (tx *Tx) PipelinesByIDs(ctx context.Context, ids []int64) (map[int64]model.Pipeline, error) {
	out := make(map[int64]model.Pipeline, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+pipelineColumns+" FROM ci_pipelines WHERE id IN ("+placeholders(len(ids))+")", anys(ids),
		func(r *sql.Rows) error {
			var p model.Pipeline
			err := r.Scan(pipelineDest(&p)...)
			out[p.ID] = p
			return err
		})
	return out, err
}

// HeadPipeline is the newest pipeline of a project's ref at a commit (a
// merge request's head pipeline: branch or merge request pipelines).
func (tx *Tx) HeadPipeline(ctx context.Context, projectID int64, ref, sha string) (model.Pipeline, error) {
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+` FROM ci_pipelines WHERE project_id = ? AND ref = ? AND sha = ?
		AND parent_id IS NULL ORDER BY id DESC LIMIT 1`, projectID, ref, sha)
	return p, err
}

// prefixed qualifies each of a comma-separated column list with prefix
// ("p." turns "id, name" into "p.id, p.name").
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
