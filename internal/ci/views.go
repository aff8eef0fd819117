package ci

import (
	"context"
	"errors"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
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
	// Runner ran the job (nil: none, or since deleted).
	Runner *model.Runner
}

// PipelineView is a pipeline with the user who ran it.
type PipelineView struct {
	model.Pipeline
	User        *model.User
	ProjectPath string
}

// usersOf loads in one query the users items name (by id; 0 is none)
// and returns the lookup of an item's user (nil for none).
func usersOf[T any](ctx context.Context, db *store.DB, items []T, id func(T) int64) (func(T) *model.User, error) {
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		if n := id(it); n != 0 {
			ids = append(ids, n)
		}
	}
	users, err := db.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	return func(it T) *model.User {
		if u, ok := users[id(it)]; ok {
			return &u
		}
		return nil
	}, nil
}

// jobViews loads, in a few batched reads, what the jobs' JSON shows.
func (s *Service) jobViews(ctx context.Context, p model.Project, jobs []model.Job) ([]JobView, error) {
	out := make([]JobView, len(jobs))
	if len(jobs) == 0 {
		return out, nil
	}
	pipelineIDs, jobIDs := make([]int64, 0, len(jobs)), make([]int64, len(jobs))
	for i, j := range jobs {
		pipelineIDs, jobIDs[i] = append(pipelineIDs, j.PipelineID), j.ID
	}
	pipelines, err := s.db.PipelinesByIDs(ctx, pipelineIDs)
	if err != nil {
		return nil, err
	}
	userOf, err := usersOf(ctx, s.db, jobs, func(j model.Job) int64 { return j.UserID })
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
	runnerIDs := make([]int64, 0, len(jobs))
	for _, j := range jobs {
		if j.RunnerID != 0 {
			runnerIDs = append(runnerIDs, j.RunnerID)
		}
	}
	runners, err := s.db.RunnersByIDs(ctx, runnerIDs)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		v := JobView{Job: j, Pipeline: pipelines[j.PipelineID], User: userOf(j), Artifacts: byJob[j.ID], ProjectPath: p.FullPath()}
		if r, ok := runners[j.RunnerID]; ok {
			v.Runner = &r
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
	userOf, err := usersOf(ctx, s.db, pls, func(pl model.Pipeline) int64 { return pl.UserID })
	if err != nil {
		return nil, err
	}
	out := make([]PipelineView, len(pls))
	for i, pl := range pls {
		out[i] = PipelineView{Pipeline: pl, User: userOf(pl), ProjectPath: p.FullPath()}
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
