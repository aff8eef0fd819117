package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"quarry/internal/model"
)

// The runner queue: pending builds no runner holds, oldest first, and the
// checks that find stuck and timed-out jobs.

// QueuedJob is a pending build as matching sees it.
type QueuedJob struct {
	ID        int64
	ProjectID int64
	TagList   []string
	Protected bool // its pipeline's ref is protected
}

// QueueScope is the part of the queue a runner serves.
type QueueScope struct {
	// RunnerID: a project runner's projects.
	RunnerID int64
	// GroupTraversal: a group runner's group and its descendants (the
	// group's traversal, "1/5/").
	GroupTraversal string
	// Neither: an instance runner, every project (the caller checks each
	// project's shared runners setting).
}

// QueuedJobs lists up to limit pending builds of the scope that no runner
// holds, oldest first, from id after on.
func (tx *Tx) QueuedJobs(ctx context.Context, scope QueueScope, after int64, limit int) ([]QueuedJob, error) {
	q := `SELECT j.id, j.project_id, j.tag_list, pl.protected FROM ci_jobs j JOIN ci_pipelines pl ON pl.id = j.pipeline_id
		WHERE j.status = ? AND j.kind = ? AND j.runner_id IS NULL AND j.id > ?`
	args := []any{model.StatusPending, model.JobBuild, after}
	switch {
	case scope.RunnerID != 0:
		q += " AND j.project_id IN (SELECT project_id FROM ci_runner_projects WHERE runner_id = ?)"
		args = append(args, scope.RunnerID)
	case scope.GroupTraversal != "":
		q += ` AND j.project_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE ? ESCAPE '\')`
		args = append(args, escapeLike(scope.GroupTraversal)+"%")
	}
	q += fmt.Sprintf(" ORDER BY j.id LIMIT %d", limit)
	var out []QueuedJob
	err := tx.each(ctx, q, args, func(r *sql.Rows) error {
		var j QueuedJob
		if err := r.Scan(&j.ID, &j.ProjectID, jsonText{&j.TagList}, &j.Protected); err != nil {
			return err
		}
		out = append(out, j)
		return nil
	})
	return out, err
}

// QueueState sums up the pending builds: it changes whenever a build
// becomes pending or stops being pending (the runner protocol's queue
// version, with the runner's own version).
func (tx *Tx) QueueState(ctx context.Context) (count, sum int64, err error) {
	err = tx.row(ctx, []any{&count, &sum}, "SELECT COUNT(*), COALESCE(SUM(id), 0) FROM ci_jobs WHERE status = ? AND kind = ?",
		model.StatusPending, model.JobBuild)
	return count, sum, err
}

// JobByTokenDigest returns the job whose token has this digest.
func (tx *Tx) JobByTokenDigest(ctx context.Context, digest string) (model.Job, error) {
	var j model.Job
	err := tx.row(ctx, tx.jobDest(&j), "SELECT "+jobColumns+" FROM ci_jobs WHERE token_digest = ?", digest)
	return j, err
}

// TouchJob records that a job's runner is still at work.
func (tx *Tx) TouchJob(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE ci_jobs SET updated_at = ? WHERE id = ?", micros(tx.Now()), id)
	return err
}

// JobsInStatus lists up to limit builds in a status, by id, from id after
// on, with when each last changed (the stuck-jobs check).
func (tx *Tx) JobsInStatus(ctx context.Context, status model.CIStatus, after int64, limit int) ([]model.Job, error) {
	var out []model.Job
	err := tx.each(ctx, "SELECT "+jobColumns+" FROM ci_jobs WHERE status = ? AND kind = ? AND id > ? ORDER BY id LIMIT "+fmt.Sprint(limit),
		[]any{status, model.JobBuild, after}, func(r *sql.Rows) error {
			var j model.Job
			if err := r.Scan(tx.jobDest(&j)...); err != nil {
				return err
			}
			out = append(out, j)
			return nil
		})
	return out, err
}

// RunnerJobs lists the jobs a runner ran, newest first, optionally in
// some statuses.
func (tx *Tx) RunnerJobs(ctx context.Context, runnerID int64, statuses []model.CIStatus, desc bool, page model.Page) ([]model.Job, model.PageInfo, error) {
	var w where
	w.add("runner_id = ?", runnerID)
	if len(statuses) > 0 {
		w.add("status IN ("+placeholders(len(statuses))+")", anys(statuses)...)
	}
	return list(ctx, tx, listSpec[model.Job]{
		columns: jobColumns, from: "ci_jobs", idCol: "id", where: w, order: order{desc: desc},
		scan: func(r *sql.Rows) (model.Job, error) {
			var j model.Job
			return j, r.Scan(tx.jobDest(&j)...)
		},
		keyOf: func(j model.Job) (any, int64) { return j.ID, j.ID },
	}, page)
}

// ExpiredArtifacts lists up to limit artifacts whose expiry passed before
// now, oldest expiry first.
func (tx *Tx) ExpiredArtifacts(ctx context.Context, now time.Time, limit int) ([]model.Artifact, error) {
	return tx.artifacts(ctx, "expire_at IS NOT NULL AND expire_at < ? ORDER BY expire_at LIMIT "+fmt.Sprint(limit), micros(now))
}

// DeleteArtifact removes one artifact's record; false when it was gone.
func (tx *Tx) DeleteArtifact(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM ci_artifacts WHERE id = ?", id)
	return n == 1, err
}

// SetArtifactsExpiry sets (nil: clears) the expiry of a job's artifacts.
func (tx *Tx) SetArtifactsExpiry(ctx context.Context, jobID int64, at *time.Time) error {
	_, err := tx.exec(ctx, "UPDATE ci_artifacts SET expire_at = ? WHERE job_id = ?", nullMicros(at), jobID)
	return err
}

// LatestSuccessfulPipeline is the newest successful pipeline of a ref
// (child pipelines left out).
func (tx *Tx) LatestSuccessfulPipeline(ctx context.Context, projectID int64, ref string) (model.Pipeline, error) {
	var p model.Pipeline
	err := tx.row(ctx, pipelineDest(&p), "SELECT "+pipelineColumns+` FROM ci_pipelines WHERE project_id = ? AND ref = ? AND status = ?
		AND source <> ? ORDER BY id DESC LIMIT 1`, projectID, ref, model.StatusSuccess, model.SourceParentPipeline)
	return p, err
}

// ProjectArtifacts lists up to limit of a project's artifacts by id, from
// id after on.
func (tx *Tx) ProjectArtifacts(ctx context.Context, projectID, after int64, limit int) ([]model.Artifact, error) {
	return tx.artifacts(ctx, "project_id = ? AND id > ? ORDER BY id LIMIT "+fmt.Sprint(limit), projectID, after)
}

// PostponeArtifacts moves the expiry of artifacts to at.
func (tx *Tx) PostponeArtifacts(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.exec(ctx, "UPDATE ci_artifacts SET expire_at = ? WHERE id IN ("+placeholders(len(ids))+")",
		append([]any{micros(at)}, anys(ids)...)...)
	return err
}

// JobsBeforeStage lists a pipeline's latest builds of the stages before
// stageIdx (a job's default dependencies).
func (tx *Tx) JobsBeforeStage(ctx context.Context, pipelineID int64, stageIdx int) ([]model.Job, error) {
	var out []model.Job
	err := tx.each(ctx, "SELECT "+jobColumns+" FROM ci_jobs WHERE pipeline_id = ? AND retried = FALSE AND stage_idx < ? AND kind = ? ORDER BY id",
		[]any{pipelineID, stageIdx, model.JobBuild}, func(r *sql.Rows) error {
			var j model.Job
			if err := r.Scan(tx.jobDest(&j)...); err != nil {
				return err
			}
			out = append(out, j)
			return nil
		})
	return out, err
}
