package ci

import (
	"context"
	"errors"
	"io"
	"time"

	"quarry/internal/auth"
	"quarry/internal/jobfiles"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/testreport"
)

// ArtifactInput describes an artifact a job hands in.
type ArtifactInput struct {
	FileType string // archive, junit, …
	Format   string // zip, gzip, raw
	FileName string
	ExpireAt *time.Time
	// Limit is the most the file may hold (more is 413).
	Limit int64
	// Variables are those of a dotenv report, stored with it.
	Variables []model.Variable
}

// StoreArtifact streams a job's artifact to the artifacts folder and
// records it; a job has at most one artifact of each type (a second is a
// 400).
func (s *Service) StoreArtifact(ctx context.Context, jobID int64, in ArtifactInput, r io.Reader) (model.Artifact, error) {
	j, err := s.db.Job(ctx, jobID)
	if err != nil {
		return model.Artifact{}, model.NotFoundAs(err, "Job")
	}
	name := in.FileType + "." + in.Format
	rel, size, err := s.files.PutArtifact(j.ProjectID, j.ID, name, r, in.Limit)
	if errors.Is(err, jobfiles.ErrTooLarge) {
		return model.Artifact{}, model.TooLarge()
	}
	if err != nil {
		return model.Artifact{}, err
	}
	a := model.Artifact{JobID: j.ID, ProjectID: j.ProjectID, FileType: in.FileType, Format: in.Format, FileName: in.FileName,
		Size: size, Path: rel, ExpireAt: in.ExpireAt}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateArtifact(ctx, &a); err != nil {
			return err
		}
		if len(in.Variables) > 0 {
			if err := tx.CreateJobVariables(ctx, j.ID, store.JobVariableDotenv, in.Variables); err != nil {
				return err
			}
		}
		if a.FileType == "archive" {
			// Kept on the job after the archive goes: a later job
			// depending on it then fails (missing_dependency_failure).
			return tx.SetJobArchiveExpiry(ctx, j.ID, a.ExpireAt)
		}
		return nil
	})
	if store.IsUnique(err, store.UniqueArtifact) {
		return a, model.BadRequestRaw("400 Bad request - " + in.FileType + " artifact already uploaded")
	}
	if err != nil {
		_ = s.files.RemoveArtifact(rel)
	}
	return a, err
}

// JobArtifacts returns the artifacts of jobs, by job id.
func (s *Service) JobArtifacts(ctx context.Context, jobs []model.Job) (map[int64][]model.Artifact, error) {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	list, err := s.db.JobArtifacts(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := map[int64][]model.Artifact{}
	for _, a := range list {
		out[a.JobID] = append(out[a.JobID], a)
	}
	return out, nil
}

// testReport builds a pipeline's test report from the JUnit artifacts of
// its latest jobs (who may read jobs and pipelines).
func (s *Service) testReport(ctx context.Context, a auth.Actor, projectRef string, pipelineID int64) (testreport.Report, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return testreport.Report{}, err
	}
	if !auth.Can(a, auth.ReadJob, auth.Resource{Project: &p, Access: acc}) {
		return testreport.Report{}, model.Forbidden("")
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, pipelineID)
	if err != nil {
		return testreport.Report{}, err
	}
	arts, err := s.db.PipelineArtifacts(ctx, pl.ID, "junit")
	if err != nil || len(arts) == 0 {
		return testreport.Report{Suites: []testreport.Suite{}}, err
	}
	jobs, err := s.db.PipelineJobs(ctx, pl.ID, false)
	if err != nil {
		return testreport.Report{}, err
	}
	byID := map[int64]*model.Job{}
	for i := range jobs {
		byID[jobs[i].ID] = &jobs[i]
	}
	blobs := make([]testreport.Blob, 0, len(arts))
	for _, art := range arts {
		j, ok := byID[art.JobID]
		if !ok {
			continue
		}
		matrix := false
		if opts, err := planned(j); err == nil {
			matrix = opts.Matrix != nil
		}
		rel := art.Path
		blobs = append(blobs, testreport.Blob{JobID: j.ID, JobName: j.Name, Matrix: matrix,
			Open: func() (io.ReadCloser, error) { return s.files.OpenArtifact(rel) }})
	}
	return testreport.Build(blobs, testreport.Limits{})
}

// TestReport is a pipeline's test report.
func (s *Service) TestReport(ctx context.Context, a auth.Actor, projectRef string, pipelineID int64) (testreport.Report, error) {
	return s.testReport(ctx, a, projectRef, pipelineID)
}

// TestReportSummary is a pipeline's test report without its cases.
func (s *Service) TestReportSummary(ctx context.Context, a auth.Actor, projectRef string, pipelineID int64) (testreport.Summary, error) {
	r, err := s.testReport(ctx, a, projectRef, pipelineID)
	if err != nil {
		return testreport.Summary{}, err
	}
	return r.Summary(), nil
}
