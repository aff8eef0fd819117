package ci

import (
	"context"
	"errors"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// JobView is a job with what its JSON shows: its pipeline, the user who
// ran it, its commit, its artifacts, the pipeline a bridge started.
type JobView struct {
	model.Job
	Pipeline    model.Pipeline
	User        *model.User
	Commit      *gitrepo.Commit
	Artifacts   []model.Artifact
	Downstream  *model.Pipeline
	ProjectPath string
}

// PipelineView is a pipeline with the user who ran it.
type PipelineView struct {
	model.Pipeline
	User        *model.User
	ProjectPath string
}

// jobViews loads, in a few batched reads, what the jobs' JSON shows.
func (s *Service) jobViews(ctx context.Context, p model.Project, jobs []model.Job) ([]JobView, error) {
	out := make([]JobView, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	pipelineIDs, userIDs, jobIDs := make([]int64, 0, len(jobs)), make([]int64, 0, len(jobs)), make([]int64, len(jobs))
	for i, j := range jobs {
		pipelineIDs, jobIDs[i] = append(pipelineIDs, j.PipelineID), j.ID
		if j.UserID != 0 {
			userIDs = append(userIDs, j.UserID)
		}
	}
	pipelines, err := s.db.PipelinesByIDs(ctx, pipelineIDs)
	if err != nil {
		return nil, err
	}
	users, err := s.db.UsersByIDs(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	arts, err := s.db.JobArtifacts(ctx, jobIDs...)
	if err != nil {
		return nil, err
	}
	byJob := map[int64][]model.Artifact{}
	for _, a := range arts {
		byJob[a.JobID] = append(byJob[a.JobID], a)
	}
	commits, err := s.commits(ctx, p, jobs)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		v := JobView{Job: j, Pipeline: pipelines[j.PipelineID], Artifacts: byJob[j.ID], ProjectPath: p.FullPath()}
		if u, ok := users[j.UserID]; ok {
			v.User = &u
		}
		if c, ok := commits[j.SHA]; ok {
			v.Commit = &c
		}
		if j.DownstreamID != 0 {
			if d, err := s.db.Pipeline(ctx, j.DownstreamID); err == nil {
				v.Downstream = &d
			} else if !errors.Is(err, model.ErrNotFound) {
				return nil, err
			}
		}
		out[i] = v
	}
	return out, nil
}

// jobView is jobViews for one job.
func (s *Service) jobView(ctx context.Context, p model.Project, j model.Job) (JobView, error) {
	v, err := s.jobViews(ctx, p, []model.Job{j})
	if err != nil {
		return JobView{}, err
	}
	return v[0], nil
}

// commits reads the commits of the jobs (one read per distinct commit).
func (s *Service) commits(ctx context.Context, p model.Project, jobs []model.Job) (map[string]gitrepo.Commit, error) {
	out := map[string]gitrepo.Commit{}
	repo, err := s.repo(p)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if _, ok := out[j.SHA]; ok || j.SHA == "" {
			continue
		}
		c, err := repo.ReadCommit(ctx, j.SHA)
		if err != nil {
			// A commit gone from the repository (a force push and
			// housekeeping): the job is shown without it.
			s.log.Debug("ci: job commit", "sha", j.SHA, "err", err)
			continue
		}
		out[j.SHA] = c
	}
	return out, nil
}

// pipelineViews loads the users of pipelines.
func (s *Service) pipelineViews(ctx context.Context, p model.Project, pls []model.Pipeline) ([]PipelineView, error) {
	ids := make([]int64, 0, len(pls))
	for _, pl := range pls {
		if pl.UserID != 0 {
			ids = append(ids, pl.UserID)
		}
	}
	users, err := s.db.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]PipelineView, len(pls))
	for i, pl := range pls {
		out[i] = PipelineView{Pipeline: pl, ProjectPath: p.FullPath()}
		if u, ok := users[pl.UserID]; ok {
			out[i].User = &u
		}
	}
	return out, nil
}

func (s *Service) pipelineView(ctx context.Context, p model.Project, pl model.Pipeline) (PipelineView, error) {
	v, err := s.pipelineViews(ctx, p, []model.Pipeline{pl})
	if err != nil {
		return PipelineView{}, err
	}
	return v[0], nil
}
