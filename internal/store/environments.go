package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"quarry/internal/model"
)

// Environments and deployments. An environment's state and a
// deployment's status move only by compare-and-set against model's
// transition tables (MoveEnvironment, MoveDeployment).

// The unique indexes of environments.
const (
	UniqueEnvironmentName = "environments_project_name_key"
	UniqueEnvironmentSlug = "environments_project_slug_key"
	// IIDDeployments is the internal id sequence of deployments.
	IIDDeployments = "deployments"
)

const environmentColumns = `id, project_id, name, slug, description, external_url, tier, state, auto_stop_at, created_at, updated_at`

func environmentDest(e *model.Environment) []any {
	return []any{&e.ID, &e.ProjectID, &e.Name, &e.Slug, &e.Description, nullString{&e.ExternalURL}, &e.Tier, &e.State,
		nullTSScan{&e.AutoStopAt}, tsScan{&e.CreatedAt}, tsScan{&e.UpdatedAt}}
}

// CreateEnvironment stores e (available) and sets its id and times; a
// name or slug taken is a *UniqueError.
func (tx *Tx) CreateEnvironment(ctx context.Context, e *model.Environment) error {
	now := tx.Now()
	e.CreatedAt, e.UpdatedAt = now, now
	if e.State == "" {
		e.State = model.EnvAvailable
	}
	var err error
	e.ID, err = tx.insert(ctx, `INSERT INTO environments (project_id, name, slug, description, external_url, tier, state, auto_stop_at,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.Name, e.Slug, e.Description, emptyNull(e.ExternalURL), e.Tier, e.State, nullMicros(e.AutoStopAt),
		micros(now), micros(now))
	return err
}

// EnsureEnvironment returns the project's environment named e.Name,
// storing e when there is none (two racing creators store one: the
// loser reads the winner's row). created reports whether e was stored.
func (tx *Tx) EnsureEnvironment(ctx context.Context, e model.Environment) (model.Environment, bool, error) {
	got, err := tx.EnvironmentByName(ctx, e.ProjectID, e.Name)
	if err == nil || !errors.Is(err, model.ErrNotFound) {
		return got, false, err
	}
	now := tx.Now()
	e.CreatedAt, e.UpdatedAt, e.State = now, now, model.EnvAvailable
	n, err := tx.execN(ctx, `INSERT INTO environments (project_id, name, slug, description, external_url, tier, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.ProjectID, e.Name, e.Slug, e.Description, emptyNull(e.ExternalURL), e.Tier, e.State, micros(now), micros(now))
	if err != nil {
		return e, false, err
	}
	got, err = tx.EnvironmentByName(ctx, e.ProjectID, e.Name)
	if errors.Is(err, model.ErrNotFound) {
		// The insert met another environment's slug.
		return e, false, fmt.Errorf("environment %q: slug %q: %w", e.Name, e.Slug, model.ErrConflict)
	}
	return got, n == 1, err
}

// Environment returns one environment.
func (tx *Tx) Environment(ctx context.Context, id int64) (model.Environment, error) {
	var e model.Environment
	err := tx.row(ctx, environmentDest(&e), "SELECT "+environmentColumns+" FROM environments WHERE id = ?", id)
	return e, err
}

// EnvironmentByName returns a project's environment by name.
func (tx *Tx) EnvironmentByName(ctx context.Context, projectID int64, name string) (model.Environment, error) {
	var e model.Environment
	err := tx.row(ctx, environmentDest(&e), "SELECT "+environmentColumns+" FROM environments WHERE project_id = ? AND name = ?",
		projectID, name)
	return e, err
}

// EnvironmentsByName returns those of a project's environments whose
// names are listed, by name, in one query.
func (tx *Tx) EnvironmentsByName(ctx context.Context, projectID int64, names []string) (map[string]model.Environment, error) {
	out := make(map[string]model.Environment, len(names))
	if len(names) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+environmentColumns+" FROM environments WHERE project_id = ? AND name IN ("+placeholders(len(names))+")",
		append([]any{projectID}, anys(names)...), func(r *sql.Rows) error {
			var e model.Environment
			err := r.Scan(environmentDest(&e)...)
			out[e.Name] = e
			return err
		})
	return out, err
}

// EnvironmentFilter selects a project's environments.
type EnvironmentFilter struct {
	ProjectID int64
	Name      string // exact
	Search    string // lower case: the name, or its part after a folder ("review/"), starts with it
	State     model.EnvironmentState
}

// Environments lists a project's environments by id.
func (tx *Tx) Environments(ctx context.Context, f EnvironmentFilter, page model.Page) ([]model.Environment, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	if f.Name != "" {
		w.add("name = ?", f.Name)
	}
	if f.Search != "" {
		q := escapeLike(f.Search) + "%"
		w.add("(LOWER(name) LIKE ? ESCAPE '\\' OR LOWER(name) LIKE ? ESCAPE '\\')", q, "%/"+q)
	}
	if f.State != "" {
		w.add("state = ?", f.State)
	}
	return list(ctx, tx, listSpec[model.Environment]{
		columns: environmentColumns, from: "environments", idCol: "id", where: w,
		scan: func(r *sql.Rows) (model.Environment, error) {
			var e model.Environment
			return e, r.Scan(environmentDest(&e)...)
		},
		keyOf: func(e model.Environment) (any, int64) { return e.ID, e.ID },
	}, page)
}

// UpdateEnvironment writes e's name, slug, description, URL and tier.
func (tx *Tx) UpdateEnvironment(ctx context.Context, e *model.Environment) error {
	e.UpdatedAt = tx.Now()
	_, err := tx.exec(ctx, `UPDATE environments SET name = ?, slug = ?, description = ?, external_url = ?, tier = ?, updated_at = ?
		WHERE id = ?`, e.Name, e.Slug, e.Description, emptyNull(e.ExternalURL), e.Tier, micros(e.UpdatedAt), e.ID)
	return err
}

// MoveEnvironment moves environment id from state from to state to if it
// still has from; moved is false when another writer moved it first. A
// move the state machine does not allow is model.ErrTransition. Leaving
// available clears auto_stop_at.
func (tx *Tx) MoveEnvironment(ctx context.Context, id int64, from, to model.EnvironmentState) (moved bool, err error) {
	if !from.CanMoveTo(to) {
		return false, fmt.Errorf("environment %d from %s to %s: %w", id, from, to, model.ErrTransition)
	}
	n, err := tx.execN(ctx, `UPDATE environments SET state = ?, auto_stop_at = CASE WHEN ? THEN NULL ELSE auto_stop_at END,
		updated_at = ? WHERE id = ? AND state = ?`, to, to != model.EnvAvailable, micros(tx.Now()), id, from)
	return n == 1, err
}

// SetEnvironmentAutoStop sets (nil: clears) when an environment stops by
// itself.
func (tx *Tx) SetEnvironmentAutoStop(ctx context.Context, id int64, at *time.Time) error {
	_, err := tx.exec(ctx, "UPDATE environments SET auto_stop_at = ?, updated_at = ? WHERE id = ?", nullMicros(at), micros(tx.Now()), id)
	return err
}

// DeleteStoppedEnvironment removes environment id if it is stopped;
// false when it is not (or is gone).
func (tx *Tx) DeleteStoppedEnvironment(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM environments WHERE id = ? AND state = ?", id, model.EnvStopped)
	return n == 1, err
}

// StaleEnvironments lists a project's available environments last
// updated before before (at most limit).
func (tx *Tx) StaleEnvironments(ctx context.Context, projectID int64, before time.Time, limit int) ([]model.Environment, error) {
	var out []model.Environment
	err := tx.each(ctx, "SELECT "+environmentColumns+` FROM environments e WHERE project_id = ? AND state = ? AND updated_at < ?
		AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.environment_id = e.id AND d.updated_at >= ?) ORDER BY id LIMIT ?`,
		[]any{projectID, model.EnvAvailable, micros(before), micros(before), limit}, func(r *sql.Rows) error {
			var e model.Environment
			err := r.Scan(environmentDest(&e)...)
			out = append(out, e)
			return err
		})
	return out, err
}

// StoppedReviewApps lists a project's stopped environments of the review
// folder ("review/…") last updated before before, oldest first.
func (tx *Tx) StoppedReviewApps(ctx context.Context, projectID int64, before time.Time, limit int) ([]model.Environment, error) {
	var out []model.Environment
	err := tx.each(ctx, "SELECT "+environmentColumns+` FROM environments WHERE project_id = ? AND state = ? AND name LIKE 'review/%'
		AND updated_at < ? ORDER BY updated_at, id LIMIT ?`,
		[]any{projectID, model.EnvStopped, micros(before), limit}, func(r *sql.Rows) error {
			var e model.Environment
			err := r.Scan(environmentDest(&e)...)
			out = append(out, e)
			return err
		})
	return out, err
}

const deploymentColumns = `id, project_id, environment_id, iid, ref, tag, sha, user_id, job_id, status, on_stop, auto_stop_in,
	created_at, updated_at, finished_at`

func deploymentDest(d *model.Deployment) []any {
	return []any{&d.ID, &d.ProjectID, &d.EnvironmentID, &d.IID, &d.Ref, &d.Tag, &d.SHA, nullInt64{&d.UserID}, nullInt64{&d.JobID},
		&d.Status, &d.OnStop, &d.AutoStopIn, tsScan{&d.CreatedAt}, tsScan{&d.UpdatedAt}, nullTSScan{&d.FinishedAt}}
}

// CreateDeployment stores d with the project's next iid and sets its id,
// iid and times.
func (tx *Tx) CreateDeployment(ctx context.Context, d *model.Deployment) error {
	return tx.CreateDeployments(ctx, []*model.Deployment{d})
}

// CreateDeployments stores deployments of one project (a pipeline's, all
// at once: their iids in one statement, their rows in one multi-row
// insert) and sets their IDs, IIDs and times.
func (tx *Tx) CreateDeployments(ctx context.Context, ds []*model.Deployment) error {
	if len(ds) == 0 {
		return nil
	}
	iid, err := tx.NextIIDs(ctx, ds[0].ProjectID, IIDDeployments, len(ds))
	if err != nil {
		return err
	}
	now := tx.Now()
	rows := make([][]any, len(ds))
	for i, d := range ds {
		if d.ProjectID != ds[0].ProjectID {
			return fmt.Errorf("deployments of projects %d and %d in one call", ds[0].ProjectID, d.ProjectID)
		}
		d.IID, d.CreatedAt, d.UpdatedAt = iid+int64(i), now, now
		if d.Status.Finished() && d.FinishedAt == nil {
			d.FinishedAt = &now
		}
		rows[i] = []any{d.ProjectID, d.EnvironmentID, d.IID, d.Ref, d.Tag, d.SHA, zeroNull(d.UserID), zeroNull(d.JobID), d.Status, d.OnStop,
			d.AutoStopIn, micros(now), micros(now), nullMicros(d.FinishedAt)}
	}
	ids, err := tx.insertRows(ctx, "deployments", `project_id, environment_id, iid, ref, tag, sha, user_id, job_id, status, on_stop,
		auto_stop_in, created_at, updated_at, finished_at`, rows)
	for i, id := range ids {
		ds[i].ID = id
	}
	return err
}

// CreateDeploymentsAtCommit is CreateDeployments (one project's
// deployments, numbered in order) whose statements, on PostgreSQL, go
// with the transaction's COMMIT, after every other statement of it: the
// project's deployment counter, which other transactions wait for, is
// locked for the server's time and the commit only. The deployments' IDs
// and iids are set once committed. On SQLite it is CreateDeployments.
func (tx *Tx) CreateDeploymentsAtCommit(ctx context.Context, ds []*model.Deployment) error {
	if tx.pg == nil || len(ds) == 0 {
		return tx.CreateDeployments(ctx, ds)
	}
	project, n := ds[0].ProjectID, len(ds)
	err := tx.withCommit(ctx, `INSERT INTO internal_ids (project_id, usage, last_value) VALUES (?, ?, ?)
		ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + ?`, []any{project, IIDDeployments, n, n},
		func(br pgx.BatchResults) error { _, err := br.Exec(); return err })
	if err != nil {
		return err
	}
	now := tx.Now()
	// The i-th of n deployments takes the counter's value less n-1-i,
	// read in the statement after the one that moved it.
	const row = "(?, ?, (SELECT last_value - ? FROM internal_ids WHERE project_id = ? AND usage = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for start := 0; start < n; start += maxInsertRows {
		chunk := ds[start:min(n, start+maxInsertRows)]
		var b strings.Builder
		b.WriteString(`INSERT INTO deployments (project_id, environment_id, iid, ref, tag, sha, user_id, job_id, status, on_stop,
		auto_stop_in, created_at, updated_at, finished_at) VALUES `)
		args := make([]any, 0, len(chunk)*16)
		for i, d := range chunk {
			if d.ProjectID != project {
				return fmt.Errorf("deployments of projects %d and %d in one call", project, d.ProjectID)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
			d.CreatedAt, d.UpdatedAt = now, now
			if d.Status.Finished() && d.FinishedAt == nil {
				d.FinishedAt = &now
			}
			args = append(args, d.ProjectID, d.EnvironmentID, n-1-(start+i), project, IIDDeployments, d.Ref, d.Tag, d.SHA,
				zeroNull(d.UserID), zeroNull(d.JobID), d.Status, d.OnStop, d.AutoStopIn, micros(now), micros(now), nullMicros(d.FinishedAt))
		}
		b.WriteString(" RETURNING id, iid")
		err := tx.withCommit(ctx, b.String(), args, func(br pgx.BatchResults) error {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			defer rows.Close()
			var got [][2]int64
			for rows.Next() {
				var id, iid int64
				if err := rows.Scan(&id, &iid); err != nil {
					return err
				}
				got = append(got, [2]int64{id, iid})
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if len(got) != len(chunk) {
				return fmt.Errorf("insert into deployments: %d rows for %d", len(got), len(chunk))
			}
			// Their iids are in the rows' order.
			slices.SortFunc(got, func(a, b [2]int64) int { return cmp.Compare(a[1], b[1]) })
			for i, g := range got {
				chunk[i].ID, chunk[i].IID = g[0], g[1]
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Deployment returns one deployment.
func (tx *Tx) Deployment(ctx context.Context, id int64) (model.Deployment, error) {
	var d model.Deployment
	err := tx.row(ctx, deploymentDest(&d), "SELECT "+deploymentColumns+" FROM deployments WHERE id = ?", id)
	return d, err
}

// DeploymentOfJob returns the deployment job id makes.
func (tx *Tx) DeploymentOfJob(ctx context.Context, jobID int64) (model.Deployment, error) {
	var d model.Deployment
	err := tx.row(ctx, deploymentDest(&d), "SELECT "+deploymentColumns+" FROM deployments WHERE job_id = ? ORDER BY id DESC LIMIT 1", jobID)
	return d, err
}

// MoveDeployment moves deployment d from its status to to if it still has
// it, stamping finished_at when to ends it; false when another writer
// moved it first. A move the state machine refuses is
// model.ErrTransition. d is updated.
func (tx *Tx) MoveDeployment(ctx context.Context, d *model.Deployment, to model.DeploymentStatus) (bool, error) {
	if !d.Status.CanMoveTo(to) {
		return false, fmt.Errorf("deployment %d from %s to %s: %w", d.ID, d.Status, to, model.ErrTransition)
	}
	now := tx.Now()
	var fin *time.Time
	if to.Finished() {
		fin = &now
	}
	n, err := tx.execN(ctx, "UPDATE deployments SET status = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = ?",
		to, nullMicros(fin), micros(now), d.ID, d.Status)
	if err != nil || n != 1 {
		return false, err
	}
	d.Status, d.FinishedAt, d.UpdatedAt = to, fin, now
	return true, nil
}

// LastDeployment is the environment's newest deployment; with status set,
// its newest deployment in that status.
func (tx *Tx) LastDeployment(ctx context.Context, environmentID int64, status model.DeploymentStatus) (model.Deployment, error) {
	var d model.Deployment
	q := "SELECT " + deploymentColumns + " FROM deployments WHERE environment_id = ?"
	args := []any{environmentID}
	if status != "" {
		q += " AND status = ?"
		args = append(args, status)
	}
	err := tx.row(ctx, deploymentDest(&d), q+" ORDER BY id DESC LIMIT 1", args...)
	return d, err
}

// LastDeployments are the newest deployments of environments, by
// environment id.
func (tx *Tx) LastDeployments(ctx context.Context, environmentIDs []int64) (map[int64]model.Deployment, error) {
	out := map[int64]model.Deployment{}
	if len(environmentIDs) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+deploymentColumns+" FROM deployments WHERE id IN (SELECT MAX(id) FROM deployments WHERE environment_id IN ("+
		placeholders(len(environmentIDs))+") GROUP BY environment_id)", anys(environmentIDs), func(r *sql.Rows) error {
		var d model.Deployment
		err := r.Scan(deploymentDest(&d)...)
		out[d.EnvironmentID] = d
		return err
	})
	return out, err
}

// DeploymentFilter selects a project's deployments.
type DeploymentFilter struct {
	ProjectID      int64
	EnvironmentID  int64 // 0: every environment
	Status         model.DeploymentStatus
	UpdatedAfter   *time.Time
	UpdatedBefore  *time.Time
	FinishedAfter  *time.Time
	FinishedBefore *time.Time
	// OrderBy is id, iid, created_at, updated_at, finished_at or ref.
	OrderBy string
	Desc    bool
}

// Deployments lists a project's deployments.
func (tx *Tx) Deployments(ctx context.Context, f DeploymentFilter, page model.Page) ([]model.Deployment, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", f.ProjectID)
	if f.EnvironmentID != 0 {
		w.add("environment_id = ?", f.EnvironmentID)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	for _, c := range []struct {
		cond string
		at   *time.Time
	}{{"updated_at > ?", f.UpdatedAfter}, {"updated_at < ?", f.UpdatedBefore}, {"finished_at > ?", f.FinishedAfter},
		{"finished_at < ?", f.FinishedBefore}} {
		if c.at != nil {
			w.add(c.cond, micros(*c.at))
		}
	}
	col := f.OrderBy
	switch col {
	case "", "id":
		col = "id"
	case "iid", "created_at", "updated_at", "finished_at", "ref":
	default:
		return nil, model.PageInfo{}, model.Param("order_by does not have a valid value")
	}
	return list(ctx, tx, listSpec[model.Deployment]{
		columns: deploymentColumns, from: "deployments", idCol: "id", where: w, order: order{column: col, desc: f.Desc},
		scan: func(r *sql.Rows) (model.Deployment, error) {
			var d model.Deployment
			return d, r.Scan(deploymentDest(&d)...)
		},
		keyOf: func(d model.Deployment) (any, int64) {
			switch col {
			case "iid":
				return d.IID, d.ID
			case "created_at":
				return micros(d.CreatedAt), d.ID
			case "updated_at":
				return micros(d.UpdatedAt), d.ID
			case "finished_at":
				if d.FinishedAt == nil {
					return nil, d.ID
				}
				return micros(*d.FinishedAt), d.ID
			case "ref":
				return d.Ref, d.ID
			}
			return d.ID, d.ID
		},
	}, page)
}

// DeleteDeployment removes a deployment.
func (tx *Tx) DeleteDeployment(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM deployments WHERE id = ?", id)
	return err
}

// LinkDeploymentMergeRequests links to deployment d the project's merge
// requests merged into ref that no earlier deployment to d's environment
// shipped (GitLab's Deployments::LinkMergeRequestsService for a branch:
// the merged merge requests of the target branch not yet deployed to the
// environment), merged before d finished.
func (tx *Tx) LinkDeploymentMergeRequests(ctx context.Context, d model.Deployment) error {
	until := tx.Now()
	if d.FinishedAt != nil {
		until = *d.FinishedAt
	}
	_, err := tx.exec(ctx, `INSERT INTO deployment_merge_requests (deployment_id, merge_request_id, environment_id)
		SELECT ?, m.id, ? FROM merge_requests m WHERE m.target_project_id = ? AND m.target_branch = ? AND m.state = 'merged'
		AND m.merged_at <= ? AND NOT EXISTS (SELECT 1 FROM deployment_merge_requests x WHERE x.environment_id = ? AND x.merge_request_id = m.id)`,
		d.ID, d.EnvironmentID, d.ProjectID, d.Ref, micros(until), d.EnvironmentID)
	return err
}

// DeploymentMergeRequestIIDs lists the iids of the merge requests a
// deployment shipped.
func (tx *Tx) DeploymentMergeRequestIIDs(ctx context.Context, deploymentID int64) ([]int64, error) {
	var out []int64
	err := tx.each(ctx, `SELECT m.iid FROM deployment_merge_requests x JOIN merge_requests m ON m.id = x.merge_request_id
		WHERE x.deployment_id = ? ORDER BY m.iid`,
		[]any{deploymentID}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}
