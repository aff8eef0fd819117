package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// JobsCacheIndex is a project's runner cache index: nil until its caches
// are first cleared (GitLab's projects.jobs_cache_index).
func (tx *Tx) JobsCacheIndex(ctx context.Context, projectID int64) (*int64, error) {
	var idx sql.NullInt64
	err := tx.row(ctx, []any{&idx}, "SELECT jobs_cache_index FROM projects WHERE id = ?", projectID)
	if err != nil || !idx.Valid {
		return nil, model.NotFoundAs(err, "Project")
	}
	return &idx.Int64, nil
}

// BumpJobsCacheIndex adds one to a project's runner cache index (a NULL
// one becomes 1) in one statement, so racing clears each count, and
// returns the new index.
func (tx *Tx) BumpJobsCacheIndex(ctx context.Context, projectID int64) (int64, error) {
	var idx int64
	err := tx.row(ctx, []any{&idx}, `UPDATE projects SET jobs_cache_index = COALESCE(jobs_cache_index, 0) + 1 WHERE id = ?
		RETURNING jobs_cache_index`, projectID)
	return idx, model.NotFoundAs(err, "Project")
}
