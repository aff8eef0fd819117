package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quarry/internal/model"
)

// Jobs (builds, bridges, external statuses). A job's status moves only
// through MoveJob: a compare-and-set against the status the caller read,
// checked first against model's job transition table.

const jobColumns = `id, project_id, pipeline_id, kind, name, stage, stage_idx, status, run_when, allow_failure, failure_reason,
	exit_code, retried, enqueue_immediately, retry_count, user_id, ref, tag, sha, coverage, dag, needs, tag_list, timeout, resource_group_id, options,
	manual_variables, downstream_id, runner_id, target_url, description, token_digest, log_size, created_at, updated_at,
	queued_at, scheduled_at, started_at, finished_at, erased_at, version, environment`

// jobDest scans a job; its manual variables are sealed (secrets.go).
func (tx *Tx) jobDest(j *model.Job) []any {
	return []any{&j.ID, &j.ProjectID, &j.PipelineID, &j.Kind, &j.Name, &j.Stage, &j.StageIdx, &j.Status, &j.When, &j.AllowFailure,
		nullString{(*string)(&j.FailureReason)}, nullInt{&j.ExitCode}, &j.Retried, &j.EnqueueImmediately, &j.RetryCount, nullInt64{&j.UserID}, &j.Ref,
		&j.Tag, &j.SHA, nullFloat{&j.Coverage}, &j.DAG, jsonText{&j.Needs}, jsonText{&j.TagList}, &j.Timeout,
		nullInt64{&j.ResourceGroup}, &j.Options, sealedJSON{tx, &j.ManualVariables, sealManualVars}, nullInt64{&j.DownstreamID},
		nullInt64{&j.RunnerID}, nullString{&j.TargetURL}, nullString{&j.Description}, nullString{&j.TokenDigest}, &j.LogSize,
		tsScan{&j.CreatedAt}, tsScan{&j.UpdatedAt}, nullTSScan{&j.QueuedAt}, nullTSScan{&j.ScheduledAt},
		nullTSScan{&j.StartedAt}, nullTSScan{&j.FinishedAt}, nullTSScan{&j.ErasedAt}, &j.Version, nullString{&j.Environment}}
}

// jsonText scans a JSON text column into the value it points to (a NULL
// leaves the zero value).
type jsonText struct{ v any }

func (j jsonText) Scan(v any) error {
	var s string
	if err := (nullString{&s}).Scan(v); err != nil {
		return err
	}
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), j.v)
}

// jsonValue is v as stored JSON text; nil and empty lists store "[]".
func jsonValue[T any](v []T) string {
	if len(v) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// jobInsertColumns are the columns a new job row is given.
const jobInsertColumns = `project_id, pipeline_id, kind, name, stage, stage_idx, status, run_when,
	allow_failure, failure_reason, exit_code, retried, enqueue_immediately, retry_count, user_id, ref, tag, sha, coverage, dag, needs, tag_list, timeout,
	resource_group_id, options, manual_variables, target_url, description, created_at, updated_at, queued_at, scheduled_at,
	started_at, finished_at, environment`

// CreateJob stores j and sets its ID and times.
func (tx *Tx) CreateJob(ctx context.Context, j *model.Job) error {
	return tx.CreateJobs(ctx, []*model.Job{j})
}

// CreateJobs stores jobs (a pipeline's, all at once) in as few statements
// as their number allows, and sets their IDs and times: on PostgreSQL
// one INSERT of the rows as one JSON parameter (createJobsJSON), on
// SQLite multi-row INSERTs (insertRows).
func (tx *Tx) CreateJobs(ctx context.Context, jobs []*model.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	sealed, err := tx.prepareJobs(jobs)
	if err != nil {
		return err
	}
	now := micros(jobs[0].CreatedAt)
	if tx.dialect == Postgres {
		return tx.createJobsJSON(ctx, jobs, sealed, now)
	}
	return tx.createJobsRows(ctx, jobs, sealed, now)
}

// prepareJobs stamps new jobs with the time, gives an empty Options
// "{}", and seals their manual variables (nil for none).
func (tx *Tx) prepareJobs(jobs []*model.Job) ([]*string, error) {
	now := tx.Now()
	sealed := make([]*string, len(jobs))
	for i, j := range jobs {
		j.CreatedAt, j.UpdatedAt = now, now
		if j.ManualVariables != nil {
			s, err := tx.sealValue(jsonValue(j.ManualVariables), sealManualVars)
			if err != nil {
				return nil, err
			}
			sealed[i] = &s
		}
		if j.Options == "" {
			j.Options = "{}"
		}
	}
	return sealed, nil
}

// createJobsRows inserts jobs with multi-row INSERTs (insertRows).
func (tx *Tx) createJobsRows(ctx context.Context, jobs []*model.Job, sealed []*string, now int64) error {
	rows := make([][]any, len(jobs))
	for i, j := range jobs {
		rows[i] = jobInsertRow(j, sealed[i], now)
	}
	ids, err := tx.insertRows(ctx, "ci_jobs", jobInsertColumns, rows)
	for i, id := range ids {
		jobs[i].ID = id
	}
	return err
}

// Job returns one job.
func (tx *Tx) Job(ctx context.Context, id int64) (model.Job, error) {
	var j model.Job
	err := tx.row(ctx, tx.jobDest(&j), "SELECT "+jobColumns+" FROM ci_jobs WHERE id = ?", id)
	return j, err
}

// JobChange is what a status move sets besides the status; nil fields
// stay as they are.
type JobChange struct {
	QueuedAt, ScheduledAt, StartedAt, FinishedAt *time.Time
	FailureReason                                *model.FailureReason
	ExitCode                                     *int
	AllowFailure                                 *bool
	TokenDigest                                  *string
	RunnerID                                     *int64
	DownstreamID                                 *int64
	Coverage                                     *float64
}

// MoveJob moves job id from status from to status to, with ch, if the job
// still has status from; moved is false when another writer moved it
// first (the row is left alone). A move the job transition table does not
// allow is refused with model.ErrTransition before any query. On success
// the moved row is read back into j when j is not nil.
func (tx *Tx) MoveJob(ctx context.Context, id int64, from, to model.CIStatus, ch JobChange, j *model.Job) (moved bool, err error) {
	q, args, err := tx.moveJobSQL(id, from, to, ch)
	if err != nil {
		return false, err
	}
	if j != nil {
		err := tx.row(ctx, tx.jobDest(j), q+" RETURNING "+jobColumns, args...)
		if errors.Is(err, model.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	n, err := tx.execN(ctx, q, args...)
	return n == 1, err
}

// MoveJobReadAhead is MoveJob of job j (read back into j) followed by
// the reads of its pipeline's processing, JobStatusCounts and
// LatestJobsIn(created): on PostgreSQL, inside a transaction, the three
// go in one round trip and the reads' results are kept for those calls
// for that pipeline if they come next, with no statement between
// (elsewhere it is MoveJob, and the reads run when asked).
func (tx *Tx) MoveJobReadAhead(ctx context.Context, from, to model.CIStatus, ch JobChange, j *model.Job) (moved bool, err error) {
	if tx.pg == nil {
		return tx.MoveJob(ctx, j.ID, from, to, ch, j)
	}
	q, args, err := tx.moveJobSQL(j.ID, from, to, ch)
	if err != nil {
		return false, err
	}
	q = tx.rebind(q + " RETURNING " + jobColumns)
	cq := tx.rebind(jobStatusCountsQuery)
	jq := tx.rebind("SELECT " + procColumns + " FROM ci_jobs WHERE " + latestJobsInWhere + " ORDER BY id")
	pipelineID := j.PipelineID
	// Counted as the statements they are.
	for _, st := range []struct {
		q    string
		args []any
	}{{q, args}, {cq, []any{pipelineID}}, {jq, []any{pipelineID, model.StatusCreated}}} {
		if _, err := tx.prepared(ctx, st.q, st.args); err != nil {
			return false, err
		}
	}
	t := tx.pg
	t.ahead = nil
	t.sent += 3
	counts := model.StageStatuses{}
	var created []model.Job
	err = t.send(ctx, func(b *pgx.Batch) {
		b.Queue(q, args...)
		b.Queue(cq, pipelineID)
		b.Queue(jq, pipelineID, model.StatusCreated)
	}, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(tx.jobDest(j)...)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			moved = true
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scanStatusCount(rows, counts); err != nil {
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if rows, err = br.Query(); err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			j, err := scanProcJob(rows)
			if err != nil {
				return err
			}
			created = append(created, j)
		}
		return rows.Err()
	})
	if err != nil {
		return false, mapErr(err)
	}
	t.ahead = &readAhead{at: t.sent, pipeline: pipelineID, counts: counts, created: created}
	return moved, nil
}

// moveJobSQL is MoveJob's statement, without RETURNING.
func (tx *Tx) moveJobSQL(id int64, from, to model.CIStatus, ch JobChange) (string, []any, error) {
	if !from.CanMoveTo(to) {
		return "", nil, fmt.Errorf("job %d from %s to %s: %w", id, from, to, model.ErrTransition)
	}
	sets := []string{"status = ?"}
	args := []any{to}
	add := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
	}
	if ch.QueuedAt != nil {
		add("queued_at", micros(*ch.QueuedAt))
	}
	if ch.ScheduledAt != nil {
		add("scheduled_at", micros(*ch.ScheduledAt))
	}
	if ch.StartedAt != nil {
		add("started_at", micros(*ch.StartedAt))
	}
	if ch.FinishedAt != nil {
		add("finished_at", micros(*ch.FinishedAt))
	}
	if ch.FailureReason != nil {
		add("failure_reason", emptyNull(string(*ch.FailureReason)))
	}
	if ch.ExitCode != nil {
		add("exit_code", *ch.ExitCode)
	}
	if ch.AllowFailure != nil {
		add("allow_failure", *ch.AllowFailure)
	}
	if ch.TokenDigest != nil {
		add("token_digest", emptyNull(*ch.TokenDigest))
	}
	if ch.RunnerID != nil {
		add("runner_id", zeroNull(*ch.RunnerID))
	}
	if ch.DownstreamID != nil {
		add("downstream_id", zeroNull(*ch.DownstreamID))
	}
	if ch.Coverage != nil {
		add("coverage", *ch.Coverage)
	}
	add("updated_at", micros(tx.Now()))
	q := "UPDATE ci_jobs SET " + strings.Join(sets, ", ") + ", version = version + 1 WHERE id = ? AND status = ?"
	args = append(args, id, from)
	return q, args, nil
}

// MarkJobRetried marks a job replaced by its retry; false when it already
// was (another retry won).
func (tx *Tx) MarkJobRetried(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE ci_jobs SET retried = TRUE, updated_at = ?, version = version + 1 WHERE id = ? AND retried = FALSE",
		micros(tx.Now()), id)
	return n == 1, err
}

// ResetJob makes a skipped or manual job created again (for reprocessing
// after a retry before it); false when it is no longer in from.
func (tx *Tx) ResetJob(ctx context.Context, id int64, from model.CIStatus) (bool, error) {
	return tx.MoveJob(ctx, id, from, model.StatusCreated, JobChange{}, nil)
}

// EraseJob records an erase (log and artifacts gone); false when the job
// was erased already.
func (tx *Tx) EraseJob(ctx context.Context, id int64) (bool, error) {
	now := micros(tx.Now())
	n, err := tx.execN(ctx, "UPDATE ci_jobs SET erased_at = ?, log_size = 0, updated_at = ?, version = version + 1 WHERE id = ? AND erased_at IS NULL",
		now, now, id)
	return n == 1, err
}

// SetJobLog records the size of a job's log and, when cov is not nil, its
// coverage.
func (tx *Tx) SetJobLog(ctx context.Context, id, size int64, cov *float64) error {
	_, err := tx.exec(ctx, "UPDATE ci_jobs SET log_size = ?, coverage = COALESCE(?, coverage), updated_at = ? WHERE id = ?",
		size, nullFloatValue(cov), micros(tx.Now()), id)
	return err
}

// SetJobManualVariables stores the variables a job was played with,
// sealed.
func (tx *Tx) SetJobManualVariables(ctx context.Context, id int64, vars []model.Variable) error {
	sealed, err := tx.sealValue(jsonValue(vars), sealManualVars)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, "UPDATE ci_jobs SET manual_variables = ?, updated_at = ? WHERE id = ?", sealed, micros(tx.Now()), id)
	return err
}

// UpdateStatusDetails sets those of an external status's description,
// target URL and coverage that are not nil.
func (tx *Tx) UpdateStatusDetails(ctx context.Context, id int64, description, targetURL *string, cov *float64) error {
	_, err := tx.exec(ctx, `UPDATE ci_jobs SET description = COALESCE(?, description), target_url = COALESCE(?, target_url),
		coverage = COALESCE(?, coverage), updated_at = ? WHERE id = ?`,
		nullStringValue(description), nullStringValue(targetURL), nullFloatValue(cov), micros(tx.Now()), id)
	return err
}

func nullStringValue(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// PipelineJobs lists a pipeline's jobs by id; retried ones only with
// retried.
func (tx *Tx) PipelineJobs(ctx context.Context, pipelineID int64, retried bool) ([]model.Job, error) {
	q := "SELECT " + jobColumns + " FROM ci_jobs WHERE pipeline_id = ?"
	if !retried {
		q += " AND retried = FALSE"
	}
	var out []model.Job
	err := tx.each(ctx, q+" ORDER BY id", []any{pipelineID}, func(r *sql.Rows) error {
		var j model.Job
		err := r.Scan(tx.jobDest(&j)...)
		out = append(out, j)
		return err
	})
	return out, err
}

// JobFilter selects jobs for a list.
type JobFilter struct {
	ProjectID   int64
	PipelineIDs []int64 // none: every pipeline of the project
	Kinds       []string
	Statuses    []model.CIStatus
	// Retried includes jobs a retry replaced.
	Retried bool
}

// Jobs lists jobs newest first.
func (tx *Tx) Jobs(ctx context.Context, f JobFilter, page model.Page) ([]model.Job, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	if len(f.PipelineIDs) > 0 {
		w.add("pipeline_id IN ("+placeholders(len(f.PipelineIDs))+")", anys(f.PipelineIDs)...)
	}
	if len(f.Kinds) > 0 {
		w.add("kind IN ("+placeholders(len(f.Kinds))+")", anys(f.Kinds)...)
	}
	if len(f.Statuses) > 0 {
		w.add("status IN ("+placeholders(len(f.Statuses))+")", anys(f.Statuses)...)
	}
	if !f.Retried {
		w.add("retried = FALSE")
	}
	return list(ctx, tx, listSpec[model.Job]{
		columns: jobColumns, from: "ci_jobs", idCol: "id", where: w, order: order{desc: true},
		scan: func(r *sql.Rows) (model.Job, error) {
			var j model.Job
			return j, r.Scan(tx.jobDest(&j)...)
		},
		keyOf: func(j model.Job) (any, int64) { return j.ID, j.ID },
	}, page)
}

// anys turns a slice into query arguments.
func anys[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// StatusFilter selects the statuses (jobs of any kind) of a commit.
type StatusFilter struct {
	ProjectID        int64
	SHA              string
	Ref, Stage, Name string
	PipelineID       int64
	All              bool // retried ones too
}

// CommitStatuses lists the jobs of a project's pipelines at a commit,
// oldest first.
func (tx *Tx) CommitStatuses(ctx context.Context, f StatusFilter, page model.Page) ([]model.Job, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	w.add("sha = ?", f.SHA)
	if !f.All {
		w.add("retried = FALSE")
	}
	for _, c := range [][2]string{{"ref", f.Ref}, {"stage", f.Stage}, {"name", f.Name}} {
		if c[1] != "" {
			w.add(c[0]+" = ?", c[1])
		}
	}
	if f.PipelineID != 0 {
		w.add("pipeline_id = ?", f.PipelineID)
	}
	return list(ctx, tx, listSpec[model.Job]{
		columns: jobColumns, from: "ci_jobs", idCol: "id", where: w,
		scan: func(r *sql.Rows) (model.Job, error) {
			var j model.Job
			return j, r.Scan(tx.jobDest(&j)...)
		},
		keyOf: func(j model.Job) (any, int64) { return j.ID, j.ID },
	}, page)
}

// JobStatusCounts counts a pipeline's latest jobs by stage position and
// status item (an index-only aggregate: what processing needs of the jobs
// it does not move).
func (tx *Tx) JobStatusCounts(ctx context.Context, pipelineID int64) (model.StageStatuses, error) {
	if counts, ok := tx.countsAhead(pipelineID); ok {
		return counts, nil
	}
	out := model.StageStatuses{}
	err := tx.each(ctx, jobStatusCountsQuery, []any{pipelineID}, func(r *sql.Rows) error { return scanStatusCount(r, out) })
	return out, err
}

const jobStatusCountsQuery = `SELECT stage_idx, status, allow_failure, COUNT(*) FROM ci_jobs WHERE pipeline_id = ? AND retried = FALSE
		GROUP BY stage_idx, status, allow_failure`

// scanStatusCount adds a row of jobStatusCountsQuery to counts.
func scanStatusCount(r interface{ Scan(...any) error }, counts model.StageStatuses) error {
	var stage, n int
	var it model.StatusItem
	if err := r.Scan(&stage, &it.Status, &it.AllowFailure, &n); err != nil {
		return err
	}
	if counts[stage] == nil {
		counts[stage] = map[model.StatusItem]int{}
	}
	counts[stage][it] = n
	return nil
}

// procColumns are what processing reads of the jobs it may move.
const procColumns = "id, kind, name, stage_idx, status, run_when, allow_failure, dag, needs, resource_group_id, enqueue_immediately, environment"

func (tx *Tx) procJobs(ctx context.Context, q string, args []any) ([]model.Job, error) {
	var out []model.Job
	err := tx.each(ctx, "SELECT "+procColumns+" FROM ci_jobs WHERE "+q+" ORDER BY id", args, func(r *sql.Rows) error {
		j, err := scanProcJob(r)
		out = append(out, j)
		return err
	})
	return out, err
}

// scanProcJob scans a row of procColumns.
func scanProcJob(r interface{ Scan(...any) error }) (model.Job, error) {
	var j model.Job
	var needs string
	err := r.Scan(&j.ID, &j.Kind, &j.Name, &j.StageIdx, &j.Status, &j.When, &j.AllowFailure, &j.DAG, &needs,
		nullInt64{&j.ResourceGroup}, &j.EnqueueImmediately, nullString{&j.Environment})
	if err == nil && j.DAG {
		err = json.Unmarshal([]byte(needs), &j.Needs)
	}
	return j, err
}

const latestJobsInWhere = "pipeline_id = ? AND retried = FALSE AND status = ?"

// LatestJobsIn lists a pipeline's latest jobs with a status (created
// ones for processing, skipped ones to reset), with what processing
// needs.
func (tx *Tx) LatestJobsIn(ctx context.Context, pipelineID int64, status model.CIStatus) ([]model.Job, error) {
	if status == model.StatusCreated {
		if created, ok := tx.createdAhead(pipelineID); ok {
			return created, nil
		}
	}
	return tx.procJobs(ctx, latestJobsInWhere, []any{pipelineID, status})
}

// JobsNamed lists a pipeline's latest jobs of the given names.
func (tx *Tx) JobsNamed(ctx context.Context, pipelineID int64, names []string) ([]model.Job, error) {
	if len(names) == 0 {
		return nil, nil
	}
	return tx.procJobs(ctx, "pipeline_id = ? AND retried = FALSE AND name IN ("+placeholders(len(names))+")",
		append([]any{pipelineID}, anys(names)...))
}

// JobRunTimes lists the start and end of a pipeline's latest jobs that
// started (end nil: still running).
func (tx *Tx) JobRunTimes(ctx context.Context, pipelineID int64) ([][2]*time.Time, error) {
	var out [][2]*time.Time
	err := tx.each(ctx, `SELECT started_at, finished_at FROM ci_jobs WHERE pipeline_id = ? AND retried = FALSE AND started_at IS NOT NULL`,
		[]any{pipelineID}, func(r *sql.Rows) error {
			var span [2]*time.Time
			err := r.Scan(nullTSScan{&span[0]}, nullTSScan{&span[1]})
			out = append(out, span)
			return err
		})
	return out, err
}

// PipelineCoverage is the mean coverage of a pipeline's latest jobs that
// report one; nil when none does.
func (tx *Tx) PipelineCoverage(ctx context.Context, pipelineID int64) (*float64, error) {
	var avg *float64
	err := tx.row(ctx, []any{nullFloat{&avg}}, `SELECT AVG(coverage) FROM ci_jobs WHERE pipeline_id = ? AND retried = FALSE
		AND coverage IS NOT NULL`, pipelineID)
	return avg, err
}
