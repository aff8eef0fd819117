package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// The reads the runners API needs beside the runner rows themselves: the
// runners a user owns, batched lookups for pages, and a runner's jobs as
// a user may see them.

// RunnersByIDs loads several runners (without ProjectIDs), by id; ids
// that name no runner are left out.
func (tx *Tx) RunnersByIDs(ctx context.Context, ids []int64) (map[int64]model.Runner, error) {
	out := map[int64]model.Runner{}
	if len(ids) == 0 {
		return out, nil
	}
	ids = dedupe(ids)
	err := tx.each(ctx, "SELECT "+runnerColumns+" FROM ci_runners WHERE id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			var x model.Runner
			if err := r.Scan(runnerDest(&x)...); err != nil {
				return err
			}
			out[x.ID] = x
			return nil
		})
	return out, err
}

// dedupe drops repeated ids, keeping the first of each.
func dedupe(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// runnerProjectIDsOf lists the projects of several runners, each runner's
// owner first, in one query.
func (tx *Tx) runnerProjectIDsOf(ctx context.Context, runnerIDs []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(runnerIDs) == 0 {
		return out, nil
	}
	ids := dedupe(runnerIDs)
	err := tx.each(ctx, "SELECT runner_id, project_id FROM ci_runner_projects WHERE runner_id IN ("+placeholders(len(ids))+") ORDER BY id",
		int64Args(ids), func(r *sql.Rows) error {
			var rid, pid int64
			if err := r.Scan(&rid, &pid); err != nil {
				return err
			}
			out[rid] = append(out[rid], pid)
			return nil
		})
	return out, err
}

// OwnedRunnerIDs lists the runners a user owns, as GitLab's GET /runners
// shows them: the project runners serving a project where the user is at
// least Maintainer, and the group runners of groups (or their ancestors)
// the user owns. Access expired before today does not count.
func (tx *Tx) OwnedRunnerIDs(ctx context.Context, userID int64, today string) ([]int64, error) {
	out := []int64{}
	err := tx.each(ctx, `SELECT rp.runner_id FROM ci_runner_projects rp
		JOIN project_authorizations a ON a.project_id = rp.project_id
		WHERE a.user_id = ? AND a.access_level >= ? AND (a.expires_at IS NULL OR a.expires_at > ?)
		UNION SELECT r.id FROM ci_runners r
		JOIN namespace_authorizations a ON a.namespace_id = r.group_id
		WHERE a.user_id = ? AND a.access_level >= ? AND (a.expires_at IS NULL OR a.expires_at > ?)`,
		[]any{userID, int(model.Maintainer), today, userID, int(model.Owner), today}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// HasProjectAccessInTree reports whether the user has at least min on any
// project inside the namespace tree whose traversal is given ("1/5/").
func (tx *Tx) HasProjectAccessInTree(ctx context.Context, userID int64, traversal string, min model.AccessLevel, today string) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, `SELECT COUNT(*) FROM (SELECT 1 FROM project_authorizations a
		JOIN projects p ON p.id = a.project_id JOIN namespaces n ON n.id = p.namespace_id
		WHERE a.user_id = ? AND a.access_level >= ? AND (a.expires_at IS NULL OR a.expires_at > ?) AND n.traversal LIKE ? ESCAPE '\'
		LIMIT 1) AS found`, userID, int(min), today, escapeLike(traversal)+"%")
	return n > 0, err
}

// RunnerJobFilter selects a runner's jobs for GET /runners/:id/jobs.
type RunnerJobFilter struct {
	RunnerID int64
	Statuses []model.CIStatus
	// Desc sorts newest first; the default is oldest first.
	Desc bool
	// ViewerID, when not 0, limits the jobs to projects where this user
	// is at least Reporter (at Today).
	ViewerID int64
	Today    string
}

// RunnerJobsFor lists one page of a runner's jobs.
func (tx *Tx) RunnerJobsFor(ctx context.Context, f RunnerJobFilter, page model.Page) ([]model.Job, model.PageInfo, error) {
	var w where
	w.add("runner_id = ?", f.RunnerID)
	if len(f.Statuses) > 0 {
		w.add("status IN ("+placeholders(len(f.Statuses))+")", anys(f.Statuses)...)
	}
	if f.ViewerID != 0 {
		w.add(`project_id IN (SELECT a.project_id FROM project_authorizations a WHERE a.user_id = ? AND a.access_level >= ?
			AND (a.expires_at IS NULL OR a.expires_at > ?))`, f.ViewerID, int(model.Reporter), f.Today)
	}
	return list(ctx, tx, listSpec[model.Job]{
		columns: jobColumns, from: "ci_jobs", idCol: "id", where: w, order: order{desc: f.Desc},
		scan: func(r *sql.Rows) (model.Job, error) {
			var j model.Job
			return j, r.Scan(tx.jobDest(&j)...)
		},
		keyOf: func(j model.Job) (any, int64) { return j.ID, j.ID },
	}, page)
}
