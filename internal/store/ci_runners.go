package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"quarry/internal/model"
)

// Runners, the projects a project runner serves, runner managers, and the
// instance's application settings.

const runnerColumns = `id, runner_type, group_id, token_digest, token_expires_at, registration_type, creator_id, description,
	maintenance_note, paused, locked, run_untagged, tag_list, access_level, maximum_timeout, contacted_at, name, runner_version,
	revision, platform, architecture, executor, ip_address, created_at, updated_at, version`

func runnerDest(r *model.Runner) []any {
	return []any{&r.ID, &r.Type, nullInt64{&r.GroupID}, &r.TokenDigest, nullTSScan{&r.TokenExpiresAt}, &r.RegistrationType,
		nullInt64{&r.CreatorID}, &r.Description, &r.MaintenanceNote, &r.Paused, &r.Locked, &r.RunUntagged, jsonText{&r.TagList},
		&r.AccessLevel, nullIntZero{&r.MaximumTimeout}, nullTSScan{&r.ContactedAt}, &r.Info.Name, &r.Info.Version, &r.Info.Revision,
		&r.Info.Platform, &r.Info.Architecture, &r.Info.Executor, &r.Info.IPAddress, tsScan{&r.CreatedAt}, tsScan{&r.UpdatedAt},
		&r.Version}
}

// nullIntZero scans a nullable integer column, NULL as 0.
type nullIntZero struct{ p *int }

func (n nullIntZero) Scan(v any) error {
	var p *int
	if err := (nullInt{&p}).Scan(v); err != nil {
		return err
	}
	*n.p = 0
	if p != nil {
		*n.p = *p
	}
	return nil
}

// CreateRunner stores r (and, for a project runner, its projects in
// order) and sets its ID and times.
func (tx *Tx) CreateRunner(ctx context.Context, r *model.Runner) error {
	now := tx.Now()
	r.CreatedAt, r.UpdatedAt = now, now
	var err error
	r.ID, err = tx.insert(ctx, `INSERT INTO ci_runners (runner_type, group_id, token_digest, token_expires_at, registration_type,
		creator_id, description, maintenance_note, paused, locked, run_untagged, tag_list, access_level, maximum_timeout,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Type, zeroNull(r.GroupID), r.TokenDigest, nullMicros(r.TokenExpiresAt), r.RegistrationType, zeroNull(r.CreatorID),
		r.Description, r.MaintenanceNote, r.Paused, r.Locked, r.RunUntagged, jsonValue(r.TagList), r.AccessLevel,
		zeroNull(int64(r.MaximumTimeout)), micros(now), micros(now))
	if err != nil {
		return err
	}
	for _, p := range r.ProjectIDs {
		if _, err := tx.AddRunnerProject(ctx, r.ID, p); err != nil {
			return err
		}
	}
	return nil
}

// Runner returns one runner with its projects.
func (tx *Tx) Runner(ctx context.Context, id int64) (model.Runner, error) {
	return tx.runnerWhere(ctx, "id = ?", id)
}

// RunnerByTokenDigest returns the runner whose token has this digest.
func (tx *Tx) RunnerByTokenDigest(ctx context.Context, digest string) (model.Runner, error) {
	return tx.runnerWhere(ctx, "token_digest = ?", digest)
}

func (tx *Tx) runnerWhere(ctx context.Context, cond string, arg any) (model.Runner, error) {
	var r model.Runner
	if err := tx.row(ctx, runnerDest(&r), "SELECT "+runnerColumns+" FROM ci_runners WHERE "+cond, arg); err != nil {
		return r, err
	}
	if r.Type == model.RunnerProject {
		ids, err := tx.RunnerProjectIDs(ctx, r.ID)
		if err != nil {
			return r, err
		}
		r.ProjectIDs = ids
	}
	return r, nil
}

// RunnerProjectIDs lists the projects a runner serves, its owner first.
func (tx *Tx) RunnerProjectIDs(ctx context.Context, runnerID int64) ([]int64, error) {
	return scanInts(tx.query(ctx, "SELECT project_id FROM ci_runner_projects WHERE runner_id = ? ORDER BY id", runnerID))
}

// scanInts reads a one-column integer result.
func scanInts(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// AddRunnerProject lets a project runner serve a project; false when it
// already does (ON CONFLICT, not a failed insert, which on PostgreSQL
// would abort the whole transaction).
func (tx *Tx) AddRunnerProject(ctx context.Context, runnerID, projectID int64) (bool, error) {
	n, err := tx.execN(ctx, `INSERT INTO ci_runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (runner_id, project_id) DO NOTHING`, runnerID, projectID, micros(tx.Now()))
	return n == 1, err
}

// RemoveRunnerProject stops a runner serving a project; false when it did
// not.
func (tx *Tx) RemoveRunnerProject(ctx context.Context, runnerID, projectID int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM ci_runner_projects WHERE runner_id = ? AND project_id = ?", runnerID, projectID)
	return n == 1, err
}

// UpdateRunner writes r's settings if it still has the version read; false
// when another writer changed it first.
func (tx *Tx) UpdateRunner(ctx context.Context, r *model.Runner) (bool, error) {
	r.UpdatedAt = tx.Now()
	n, err := tx.execN(ctx, `UPDATE ci_runners SET description = ?, maintenance_note = ?, paused = ?, locked = ?, run_untagged = ?,
		tag_list = ?, access_level = ?, maximum_timeout = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
		r.Description, r.MaintenanceNote, r.Paused, r.Locked, r.RunUntagged, jsonValue(r.TagList), r.AccessLevel,
		zeroNull(int64(r.MaximumTimeout)), micros(r.UpdatedAt), r.ID, r.Version)
	if n == 1 {
		r.Version++
	}
	return n == 1, err
}

// SetRunnerToken replaces a runner's token digest (a reset).
func (tx *Tx) SetRunnerToken(ctx context.Context, id int64, digest string, expires *time.Time) error {
	_, err := tx.exec(ctx, "UPDATE ci_runners SET token_digest = ?, token_expires_at = ?, updated_at = ?, version = version + 1 WHERE id = ?",
		digest, nullMicros(expires), micros(tx.Now()), id)
	return err
}

// TouchRunner records a runner's contact and what it said of itself.
func (tx *Tx) TouchRunner(ctx context.Context, id int64, at time.Time, info model.RunnerInfo) error {
	_, err := tx.exec(ctx, `UPDATE ci_runners SET contacted_at = ?, name = ?, runner_version = ?, revision = ?, platform = ?,
		architecture = ?, executor = ?, ip_address = ? WHERE id = ?`,
		micros(at), info.Name, info.Version, info.Revision, info.Platform, info.Architecture, info.Executor, info.IPAddress, id)
	return err
}

// DeleteRunner removes a runner; false when there was none.
func (tx *Tx) DeleteRunner(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM ci_runners WHERE id = ?", id)
	return n == 1, err
}

// TouchRunnerManager records a contact of one machine of a runner,
// creating its record on the first.
func (tx *Tx) TouchRunnerManager(ctx context.Context, runnerID int64, systemID string, at time.Time, info model.RunnerInfo) error {
	n, err := tx.execN(ctx, `UPDATE ci_runner_managers SET contacted_at = ?, runner_version = ?, revision = ?, platform = ?,
		architecture = ?, executor = ?, ip_address = ? WHERE runner_id = ? AND system_id = ?`,
		micros(at), info.Version, info.Revision, info.Platform, info.Architecture, info.Executor, info.IPAddress, runnerID, systemID)
	if err != nil || n == 1 {
		return err
	}
	// Another call of the same machine may have created it meanwhile:
	// ON CONFLICT, not a failed insert, which on PostgreSQL would abort
	// the transaction.
	_, err = tx.exec(ctx, `INSERT INTO ci_runner_managers (runner_id, system_id, contacted_at, runner_version, revision, platform,
		architecture, executor, ip_address, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (runner_id, system_id) DO NOTHING`,
		runnerID, systemID, micros(at), info.Version, info.Revision, info.Platform, info.Architecture, info.Executor, info.IPAddress,
		micros(tx.Now()))
	return err
}

// DeleteRunnerManager removes one machine of a runner; false when there
// was none.
func (tx *Tx) DeleteRunnerManager(ctx context.Context, runnerID int64, systemID string) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM ci_runner_managers WHERE runner_id = ? AND system_id = ?", runnerID, systemID)
	return n == 1, err
}

// RunnerManagers lists a runner's machines, oldest first.
func (tx *Tx) RunnerManagers(ctx context.Context, runnerID int64) ([]model.RunnerManager, error) {
	rows, err := tx.query(ctx, `SELECT id, runner_id, system_id, contacted_at, runner_version, revision, platform, architecture,
		executor, ip_address, created_at FROM ci_runner_managers WHERE runner_id = ? ORDER BY id`, runnerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []model.RunnerManager
	for rows.Next() {
		var m model.RunnerManager
		if err := rows.Scan(&m.ID, &m.RunnerID, &m.SystemID, nullTSScan{&m.ContactedAt}, &m.Info.Version, &m.Info.Revision,
			&m.Info.Platform, &m.Info.Architecture, &m.Info.Executor, &m.Info.IPAddress, tsScan{&m.CreatedAt}); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// RunnerFilter selects runners for a list.
type RunnerFilter struct {
	Types []string
	// IDs, when not nil, limits the list to these runners.
	IDs []int64
	// ProjectID lists the project runners serving it; GroupIDs the group
	// runners of these groups. Set together with IncludeShared they are
	// OR-ed: a project's runners are its own, its groups' and the
	// instance's.
	ProjectID     int64
	GroupIDs      []int64
	IncludeShared bool
	Paused        *bool
	// Status is online, offline, stale or never_contacted at Now.
	Status string
	Now    time.Time
	Tags   []string
}

// Runners lists runners by id, oldest first.
func (tx *Tx) Runners(ctx context.Context, f RunnerFilter, page model.Page) ([]model.Runner, model.PageInfo, error) {
	var w where
	if len(f.Types) > 0 {
		w.add("runner_type IN ("+placeholders(len(f.Types))+")", anys(f.Types)...)
	}
	if f.IDs != nil {
		if len(f.IDs) == 0 {
			w.add("1 = 0")
		} else {
			w.add("id IN ("+placeholders(len(f.IDs))+")", anys(f.IDs)...)
		}
	}
	var scope []string
	var scopeArgs []any
	if f.ProjectID != 0 {
		scope = append(scope, "id IN (SELECT runner_id FROM ci_runner_projects WHERE project_id = ?)")
		scopeArgs = append(scopeArgs, f.ProjectID)
	}
	if len(f.GroupIDs) > 0 {
		scope = append(scope, "group_id IN ("+placeholders(len(f.GroupIDs))+")")
		scopeArgs = append(scopeArgs, anys(f.GroupIDs)...)
	}
	if f.IncludeShared {
		scope = append(scope, "runner_type = ?")
		scopeArgs = append(scopeArgs, model.RunnerInstance)
	}
	if len(scope) > 0 {
		cond := "(" + scope[0]
		for _, s := range scope[1:] {
			cond += " OR " + s
		}
		w.add(cond+")", scopeArgs...)
	}
	if f.Paused != nil {
		w.add("paused = ?", *f.Paused)
	}
	online, stale := micros(f.Now.Add(-model.RunnerOnlineWindow)), micros(f.Now.Add(-model.RunnerStaleAfter))
	switch f.Status {
	case model.RunnerOnline:
		w.add("contacted_at > ?", online)
	case model.RunnerOffline:
		w.add("contacted_at <= ? AND contacted_at > ?", online, stale)
	case model.RunnerStale:
		w.add("(contacted_at <= ? OR (contacted_at IS NULL AND created_at <= ?))", stale, stale)
	case model.RunnerNeverContacted:
		w.add("contacted_at IS NULL AND created_at > ?", stale)
	}
	for _, t := range f.Tags {
		b, _ := json.Marshal(t)
		w.add(`tag_list LIKE ? ESCAPE '\'`, likePattern(string(b)))
	}
	runners, info, err := list(ctx, tx, listSpec[model.Runner]{
		columns: runnerColumns, from: "ci_runners", idCol: "id", where: w, order: order{},
		scan: func(r *sql.Rows) (model.Runner, error) {
			var x model.Runner
			return x, r.Scan(runnerDest(&x)...)
		},
		keyOf: func(r model.Runner) (any, int64) { return r.ID, r.ID },
	}, page)
	if err != nil {
		return nil, info, err
	}
	// The projects of the page's project runners, in one query.
	var projectRunners []int64
	for _, r := range runners {
		if r.Type == model.RunnerProject {
			projectRunners = append(projectRunners, r.ID)
		}
	}
	byRunner, err := tx.runnerProjectIDsOf(ctx, projectRunners)
	if err != nil {
		return nil, info, err
	}
	for i := range runners {
		runners[i].ProjectIDs = byRunner[runners[i].ID]
	}
	return runners, info, nil
}
