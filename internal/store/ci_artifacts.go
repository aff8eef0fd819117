package store

import (
	"context"
	"database/sql"
	"time"

	"quarry/internal/model"
)

// Job artifacts: the records of the files jobs left; the bytes lie in
// the artifacts folder.

// UniqueArtifact allows one artifact of each type per job.
const UniqueArtifact = "ci_artifacts_job_type_key"

func init() {
	sqliteColumnUniques["ci_artifacts.job_id, ci_artifacts.file_type"] = UniqueArtifact
}

const artifactColumns = "id, job_id, project_id, file_type, file_format, file_name, size, path, expire_at, created_at"

func artifactDest(a *model.Artifact) []any {
	return []any{&a.ID, &a.JobID, &a.ProjectID, &a.FileType, &a.Format, &a.FileName, &a.Size, &a.Path, nullTSScan{&a.ExpireAt},
		tsScan{&a.CreatedAt}}
}

// CreateArtifact stores an artifact's record (a job's second of one type
// is UniqueArtifact).
func (tx *Tx) CreateArtifact(ctx context.Context, a *model.Artifact) error {
	a.CreatedAt = tx.Now()
	var err error
	a.ID, err = tx.insert(ctx, `INSERT INTO ci_artifacts (job_id, project_id, file_type, file_format, file_name, size, path, expire_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.JobID, a.ProjectID, a.FileType, a.Format, a.FileName, a.Size, a.Path,
		nullMicros(a.ExpireAt), micros(a.CreatedAt))
	return err
}

func (tx *Tx) artifacts(ctx context.Context, q string, args ...any) ([]model.Artifact, error) {
	var out []model.Artifact
	err := tx.each(ctx, "SELECT "+artifactColumns+" FROM ci_artifacts WHERE "+q, args, func(r *sql.Rows) error {
		var a model.Artifact
		err := r.Scan(artifactDest(&a)...)
		out = append(out, a)
		return err
	})
	return out, err
}

// JobArtifacts lists the artifacts of jobs, by job and id.
func (tx *Tx) JobArtifacts(ctx context.Context, jobIDs ...int64) ([]model.Artifact, error) {
	if len(jobIDs) == 0 {
		return nil, nil
	}
	return tx.artifacts(ctx, "job_id IN ("+placeholders(len(jobIDs))+") ORDER BY job_id, id", anys(jobIDs)...)
}

// PipelineArtifacts lists the artifacts of one type left by a pipeline's
// latest jobs, by job id.
func (tx *Tx) PipelineArtifacts(ctx context.Context, pipelineID int64, fileType string) ([]model.Artifact, error) {
	return tx.artifacts(ctx, `file_type = ? AND job_id IN (SELECT id FROM ci_jobs WHERE pipeline_id = ? AND retried = FALSE)
		ORDER BY job_id, id`, fileType, pipelineID)
}

// DeleteJobArtifacts removes the records of a job's artifacts and returns
// them (their files are the caller's to remove).
func (tx *Tx) DeleteJobArtifacts(ctx context.Context, jobID int64) ([]model.Artifact, error) {
	list, err := tx.JobArtifacts(ctx, jobID)
	if err != nil || len(list) == 0 {
		return list, err
	}
	_, err = tx.exec(ctx, "DELETE FROM ci_artifacts WHERE job_id = ?", jobID)
	return list, err
}

// SetJobArchiveExpiry records on the job when the archive it stored
// expires (nil: never). The record outlives the archive's: ArchiveStates
// reads it after the expiry sweep removed the archive.
func (tx *Tx) SetJobArchiveExpiry(ctx context.Context, jobID int64, at *time.Time) error {
	_, err := tx.exec(ctx, "UPDATE ci_jobs SET artifacts_expire_at = ? WHERE id = ?", nullMicros(at), jobID)
	return err
}

// ArchiveState is what decides whether the jobs after a job can still
// have its archive.
type ArchiveState struct {
	JobID    int64
	ErasedAt *time.Time
	// ExpireAt is when the archive the job stored expires (nil: it never
	// does, or the job stored none), kept after the archive is gone.
	ExpireAt *time.Time
}

// ArchiveStates reads the archive states of jobs, by id.
func (tx *Tx) ArchiveStates(ctx context.Context, jobIDs ...int64) ([]ArchiveState, error) {
	if len(jobIDs) == 0 {
		return nil, nil
	}
	var out []ArchiveState
	err := tx.each(ctx, "SELECT id, erased_at, artifacts_expire_at FROM ci_jobs WHERE id IN ("+placeholders(len(jobIDs))+") ORDER BY id",
		anys(jobIDs), func(r *sql.Rows) error {
			var st ArchiveState
			err := r.Scan(&st.JobID, nullTSScan{&st.ErasedAt}, nullTSScan{&st.ExpireAt})
			out = append(out, st)
			return err
		})
	return out, err
}
