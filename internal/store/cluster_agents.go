package store

import (
	"context"
	"database/sql"
	"time"

	"quarry/internal/model"
)

// ClusterAgent is an agent for Kubernetes registered in a project, its
// configuration project.
type ClusterAgent struct {
	ID              int64
	ProjectID       int64
	Name            string
	CreatedByUserID int64 // 0 once the user is gone
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ConfiguredAgent is an agent with its configuration project.
type ConfiguredAgent struct {
	ClusterAgent
	Project model.Project
}

// UniqueClusterAgentName allows one agent of a name per project.
const UniqueClusterAgentName = "cluster_agents_project_name_key"

// IsClusterAgentNameTaken reports whether err is a second agent of the
// same name in a project (SQLite names an index on plain columns by its
// columns).
func IsClusterAgentNameTaken(err error) bool {
	return IsUnique(err, UniqueClusterAgentName) || IsUnique(err, "cluster_agents.project_id, cluster_agents.name")
}

const clusterAgentColumns = "a.id, a.project_id, a.name, a.created_by_user_id, a.created_at, a.updated_at"

func clusterAgentDest(a *ClusterAgent) []any {
	return []any{&a.ID, &a.ProjectID, &a.Name, nullInt64{&a.CreatedByUserID}, tsScan{&a.CreatedAt}, tsScan{&a.UpdatedAt}}
}

// CreateClusterAgent stores an agent and sets its id and times.
func (tx *Tx) CreateClusterAgent(ctx context.Context, a *ClusterAgent) error {
	now := tx.Now()
	id, err := tx.insert(ctx, `INSERT INTO cluster_agents (project_id, name, created_by_user_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)`, a.ProjectID, a.Name, zeroNull(a.CreatedByUserID), micros(now), micros(now))
	if err != nil {
		return err
	}
	a.ID, a.CreatedAt, a.UpdatedAt = id, fromMicros(micros(now)), fromMicros(micros(now))
	return nil
}

// ClusterAgent returns a project's agent by id; model.ErrNotFound when the
// project has none of that id.
func (tx *Tx) ClusterAgent(ctx context.Context, projectID, id int64) (ClusterAgent, error) {
	var a ClusterAgent
	err := tx.row(ctx, clusterAgentDest(&a), "SELECT "+clusterAgentColumns+" FROM cluster_agents a WHERE a.project_id = ? AND a.id = ?",
		projectID, id)
	return a, err
}

// ClusterAgentNamed reports whether a project has an agent of a name.
func (tx *Tx) ClusterAgentNamed(ctx context.Context, projectID int64, name string) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM cluster_agents WHERE project_id = ? AND name = ?", projectID, name)
	return n > 0, err
}

// ClusterAgents lists a project's agents by id.
func (tx *Tx) ClusterAgents(ctx context.Context, projectID int64, page model.Page) ([]ClusterAgent, model.PageInfo, error) {
	var w where
	w.add("a.project_id = ?", projectID)
	return list(ctx, tx, listSpec[ClusterAgent]{
		columns: clusterAgentColumns, from: "cluster_agents a", idCol: "a.id", where: w,
		scan: func(r *sql.Rows) (ClusterAgent, error) {
			var a ClusterAgent
			return a, r.Scan(clusterAgentDest(&a)...)
		},
		keyOf: func(a ClusterAgent) (any, int64) { return a.ID, a.ID },
	}, page)
}

// DeleteClusterAgent removes an agent; model.ErrNotFound when there was
// none.
func (tx *Tx) DeleteClusterAgent(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM cluster_agents WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// ClusterAgentsUnder lists, by id, the agents whose configuration project
// lies in the namespace tree of traversal (a namespace's traversal, e.g.
// "7/"), with those projects; projects being deleted are left out. These
// are the agents that may authorize a project of that tree.
func (tx *Tx) ClusterAgentsUnder(ctx context.Context, traversal string) ([]ConfiguredAgent, error) {
	var out []ConfiguredAgent
	err := tx.each(ctx, "SELECT "+clusterAgentColumns+", "+projectColumns+` FROM cluster_agents a
		JOIN projects p ON p.id = a.project_id JOIN namespaces n ON n.id = p.namespace_id
		WHERE n.traversal LIKE ? ESCAPE '\' AND p.pending_delete = FALSE ORDER BY a.id`, []any{escapeLike(traversal) + "%"},
		func(r *sql.Rows) error {
			var a ConfiguredAgent
			err := r.Scan(append(clusterAgentDest(&a.ClusterAgent), tx.projectDest(&a.Project)...)...)
			out = append(out, a)
			return err
		})
	return out, err
}
