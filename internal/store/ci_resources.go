package store

import (
	"context"
	"database/sql"
	"errors"

	"quarry/internal/model"
)

// Resource groups. The slot of a group is its holder_id, taken and
// released only by compare-and-set, so two jobs can never hold it at once.

// UniqueResourceGroup allows one group per project and key.
const UniqueResourceGroup = "ci_resource_groups_key"

func init() {
	sqliteColumnUniques["ci_resource_groups.project_id, ci_resource_groups.key"] = UniqueResourceGroup
}

const resourceGroupColumns = "id, project_id, key, process_mode, holder_id, created_at, updated_at"

func resourceGroupDest(g *model.ResourceGroup) []any {
	return []any{&g.ID, &g.ProjectID, &g.Key, &g.ProcessMode, nullInt64{&g.HolderID}, tsScan{&g.CreatedAt}, tsScan{&g.UpdatedAt}}
}

// EnsureResourceGroup returns a project's group by key, creating it
// (unordered) when it does not exist yet. The group is read first: one
// statement when it exists (each pipeline after a project's first).
func (tx *Tx) EnsureResourceGroup(ctx context.Context, projectID int64, key string) (model.ResourceGroup, error) {
	g, err := tx.ResourceGroup(ctx, projectID, key)
	if !errors.Is(err, model.ErrNotFound) {
		return g, err
	}
	now := micros(tx.Now())
	if _, err := tx.exec(ctx, `INSERT INTO ci_resource_groups (project_id, key, process_mode, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, projectID, key, model.ProcessUnordered, now, now); err != nil {
		return model.ResourceGroup{}, err
	}
	return tx.ResourceGroup(ctx, projectID, key)
}

// ResourceGroup returns a project's group by key.
func (tx *Tx) ResourceGroup(ctx context.Context, projectID int64, key string) (model.ResourceGroup, error) {
	var g model.ResourceGroup
	err := tx.row(ctx, resourceGroupDest(&g), "SELECT "+resourceGroupColumns+" FROM ci_resource_groups WHERE project_id = ? AND key = ?", projectID, key)
	return g, err
}

// LockResourceGroup reads a group by id and, on PostgreSQL, locks its row
// for the transaction: one assignment pass per group at a time.
func (tx *Tx) LockResourceGroup(ctx context.Context, id int64) (model.ResourceGroup, error) {
	q := "SELECT " + resourceGroupColumns + " FROM ci_resource_groups WHERE id = ?"
	if tx.dialect == Postgres {
		q += " FOR UPDATE"
	}
	var g model.ResourceGroup
	err := tx.row(ctx, resourceGroupDest(&g), q, id)
	return g, err
}

// ResourceGroups lists a project's groups by id.
func (tx *Tx) ResourceGroups(ctx context.Context, projectID int64, page model.Page) ([]model.ResourceGroup, model.PageInfo, error) {
	var w where
	w.add("project_id = ?", projectID)
	return list(ctx, tx, listSpec[model.ResourceGroup]{
		columns: resourceGroupColumns, from: "ci_resource_groups", idCol: "id", where: w,
		scan: func(r *sql.Rows) (model.ResourceGroup, error) {
			var g model.ResourceGroup
			return g, r.Scan(resourceGroupDest(&g)...)
		},
		keyOf: func(g model.ResourceGroup) (any, int64) { return g.ID, g.ID },
	}, page)
}

// SetProcessMode changes a group's process mode.
func (tx *Tx) SetProcessMode(ctx context.Context, id int64, mode string) error {
	_, err := tx.exec(ctx, "UPDATE ci_resource_groups SET process_mode = ?, updated_at = ? WHERE id = ?", mode, micros(tx.Now()), id)
	return err
}

// SwapResourceHolder moves a group's slot from holder old to holder new
// (0: free) if old still holds it; false when another writer got there
// first.
func (tx *Tx) SwapResourceHolder(ctx context.Context, id, old, new int64) (bool, error) {
	q := "UPDATE ci_resource_groups SET holder_id = ?, updated_at = ? WHERE id = ? AND "
	args := []any{zeroNull(new), micros(tx.Now()), id}
	if old == 0 {
		q += "holder_id IS NULL"
	} else {
		q += "holder_id = ?"
		args = append(args, old)
	}
	n, err := tx.execN(ctx, q, args...)
	return n == 1, err
}

// ResourceCandidates lists the jobs of a group that may get its slot
// next, in the order mode gives (reference §6): unordered, jobs waiting
// for the resource by id; oldest_first and newest_first, jobs created,
// scheduled or waiting by pipeline (ascending or descending), waiting ones
// first within a pipeline, then by id.
func (tx *Tx) ResourceCandidates(ctx context.Context, groupID int64, mode string, page model.Page) ([]model.Job, model.PageInfo, error) {
	var w where
	w.add("resource_group_id = ?", groupID)
	w.add("retried = FALSE")
	o := order{}
	switch mode {
	case model.ProcessOldestFirst, model.ProcessNewestFirst:
		w.add("status IN (?, ?, ?)", model.StatusCreated, model.StatusScheduled, model.StatusWaitingForResource)
		dir := " ASC"
		if mode == model.ProcessNewestFirst {
			dir = " DESC"
		}
		// An explicit order: the keyset helper does not take compound
		// keys, so these lists are offset pages only.
		o.rank = "pipeline_id" + dir + ", CASE WHEN status = ? THEN 0 ELSE 1 END"
		o.rankArgs = []any{model.StatusWaitingForResource}
		o.column = "id"
	default:
		w.add("status = ?", model.StatusWaitingForResource)
	}
	if page.Keyset && o.rank != "" {
		return nil, model.PageInfo{}, errors.New("resource candidates: no keyset order")
	}
	return list(ctx, tx, listSpec[model.Job]{
		columns: jobColumns, from: "ci_jobs", idCol: "id", where: w, order: o,
		scan: func(r *sql.Rows) (model.Job, error) {
			var j model.Job
			return j, r.Scan(tx.jobDest(&j)...)
		},
		keyOf: func(j model.Job) (any, int64) { return j.ID, j.ID },
	}, page)
}
