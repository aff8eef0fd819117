package store

import (
	"context"
	"strings"

	"quarry/internal/model"
)

// CreateJobsAsRows is CreateJobs through multi-row INSERTs (SQLite's
// way) on either engine: the encoding CreateJobs used before jobs went
// to PostgreSQL as JSON.
func (tx *Tx) CreateJobsAsRows(ctx context.Context, jobs []*model.Job) error {
	sealed, err := tx.prepareJobs(jobs)
	if err != nil || len(jobs) == 0 {
		return err
	}
	return tx.createJobsRows(ctx, jobs, sealed, micros(jobs[0].CreatedAt))
}

// JobInsertedColumns reads back a job's columns that CreateJobs writes,
// as the driver returns them.
func (db *DB) JobInsertedColumns(ctx context.Context, id int64) ([]any, error) {
	var out []any
	err := db.InTx(ctx, func(tx *Tx) error {
		row := make([]any, strings.Count(jobInsertColumns, ",")+1)
		dest := make([]any, len(row))
		for i := range row {
			dest[i] = &row[i]
		}
		out = row
		return tx.row(ctx, dest, "SELECT "+jobInsertColumns+" FROM ci_jobs WHERE id = ?", id)
	})
	return out, err
}
