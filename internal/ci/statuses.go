package ci

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// StatusInput is a commit status an external CI reports.
type StatusInput struct {
	State string // pending, running, success, failed, canceled, skipped
	// Ref: "" is the ref of the commit's newest pipeline, else the first
	// branch holding the commit.
	Ref  string
	Name string // "": default
	// TargetURL and Description: nil leaves an existing status's value.
	TargetURL   *string
	Description *string
	Coverage    *float64
	// PipelineID: 0 is the commit's newest pipeline for the ref (an
	// external one is made when there is none).
	PipelineID int64
}

// statusEvents are GitLab's events for each reported state, and the path
// from created to the state (running is enqueued first).
var statusEvents = map[string]struct {
	event string
	path  []model.CIStatus
}{
	"pending":  {"enqueue", []model.CIStatus{model.StatusPending}},
	"running":  {"run", []model.CIStatus{model.StatusPending, model.StatusRunning}},
	"success":  {"success", []model.CIStatus{model.StatusSuccess}},
	"failed":   {"drop", []model.CIStatus{model.StatusFailed}},
	"canceled": {"cancel", []model.CIStatus{model.StatusCanceled}},
	"skipped":  {"skip", []model.CIStatus{model.StatusSkipped}},
}

// StatusStates are the states a commit status may report.
var StatusStates = []string{"pending", "running", "success", "failed", "canceled", "skipped"}

// SetCommitStatus records a status an external CI reports for a commit
// (POST /projects/:id/statuses/:sha): the commit's external pipeline for
// the ref (made on first use, or the given pipeline) gets a job of that
// name, moved to the state like GitLab moves it; a move the state machine
// does not allow is a 400 naming it.
func (s *Service) SetCommitStatus(ctx context.Context, a auth.Actor, projectRef, sha string, in StatusInput) (JobView, error) {
	j, p, err := s.setCommitStatus(ctx, a, projectRef, sha, in)
	if err != nil {
		return JobView{}, err
	}
	return s.jobView(ctx, p, j)
}

func (s *Service) setCommitStatus(ctx context.Context, a auth.Actor, projectRef, sha string, in StatusInput) (model.Job, model.Project, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.CreateCommitStatus)
	if err != nil {
		return model.Job{}, p, err
	}
	ev, ok := statusEvents[in.State]
	if !ok {
		return model.Job{}, p, model.Param("state does not have a valid value")
	}
	if in.Name == "" {
		in.Name = "default"
	}
	repo, err := s.repo(p)
	if err != nil {
		return model.Job{}, p, err
	}
	commit, err := repo.CommitID(ctx, sha)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return model.Job{}, p, model.NotFound("Commit")
	}
	if err != nil {
		return model.Job{}, p, err
	}
	if in.Ref == "" {
		if in.Ref, err = s.statusRef(ctx, repo, p, commit); err != nil {
			return model.Job{}, p, err
		}
	}
	// Reporting changes the pipeline of the ref: who may not run it there
	// (a protected branch) may not.
	_, berr := repo.CommitID(ctx, "refs/heads/"+in.Ref)
	ok, err = s.mayRunOn(ctx, a, &p, acc, in.Ref, berr != nil)
	if err != nil {
		return model.Job{}, p, err
	}
	if !ok {
		return model.Job{}, p, model.ForbiddenRaw("403 Forbidden")
	}
	pl, err := s.statusPipeline(ctx, a, p, string(commit), in)
	if err != nil {
		return model.Job{}, p, err
	}
	var out model.Job
	err = s.inPipeline(ctx, pl.ID, func(tx *store.Tx, pp *model.Pipeline, fx *effects) error {
		jobs, err := tx.PipelineJobs(ctx, pp.ID, false)
		if err != nil {
			return err
		}
		var j *model.Job
		for i := range jobs {
			if jobs[i].Name == in.Name {
				j = &jobs[i]
			}
		}
		if j == nil || j.Status.Completed() {
			nj := model.Job{ProjectID: p.ID, PipelineID: pp.ID, Kind: model.JobGeneric, Name: in.Name, Stage: "external",
				StageIdx: 1000000, Status: model.StatusCreated, When: model.WhenOnSuccess, UserID: a.UserID(), Ref: pp.Ref,
				Tag: pp.Tag, SHA: pp.SHA, Coverage: in.Coverage}
			if in.TargetURL != nil {
				nj.TargetURL = *in.TargetURL
			}
			if in.Description != nil {
				nj.Description = *in.Description
			}
			if j != nil {
				if ok, err := tx.MarkJobRetried(ctx, j.ID); err != nil || !ok {
					return errors.Join(err, errLostRace)
				}
				nj.RetryCount = j.RetryCount + 1
			}
			if err := tx.CreateJob(ctx, &nj); err != nil {
				return err
			}
			j = &nj
		} else if err := tx.UpdateStatusDetails(ctx, j.ID, in.Description, in.TargetURL, in.Coverage); err != nil {
			return err
		}
		if in.Coverage != nil {
			fx.coverage = true
		}
		path := ev.path
		if j.Status != model.StatusCreated && in.State == "running" {
			path = path[1:]
		}
		for _, to := range path {
			if !j.Status.CanMoveTo(to) {
				return model.BadRequestRaw(fmt.Sprintf("Cannot transition status via :%s from :%s (Reason(s): Status cannot transition via \"%s\")",
					ev.event, j.Status, ev.event))
			}
			var ch store.JobChange
			if to == model.StatusFailed {
				reason := model.FailureAPI
				ch.FailureReason = &reason
			}
			if err := s.moveJob(ctx, tx, j, to, ch, fx); err != nil {
				return err
			}
		}
		out = *j
		return nil
	})
	return out, p, err
}

// statusRef is the ref a status without one belongs to: that of the
// commit's newest pipeline, else the first branch holding the commit.
func (s *Service) statusRef(ctx context.Context, repo *gitrepo.Repo, p model.Project, commit git.ObjectID) (string, error) {
	pl, err := s.db.CommitPipeline(ctx, p.ID, string(commit), "")
	if err == nil {
		return pl.Ref, nil
	}
	if !errors.Is(err, model.ErrNotFound) {
		return "", err
	}
	refs, err := repo.RefsContaining(ctx, commit, "refs/heads/")
	if err != nil {
		return "", err
	}
	if len(refs) == 0 {
		return "", model.NotFound("References for commit")
	}
	return strings.TrimPrefix(refs[0], "refs/heads/"), nil
}

// statusPipeline finds the pipeline a status joins: the one named (of
// this commit and ref), else the commit's newest pipeline of the ref,
// whatever its source, else a new external one.
func (s *Service) statusPipeline(ctx context.Context, a auth.Actor, p model.Project, sha string, in StatusInput) (model.Pipeline, error) {
	if in.PipelineID != 0 {
		pl, err := s.db.Pipeline(ctx, in.PipelineID)
		if errors.Is(err, model.ErrNotFound) || (err == nil && (pl.ProjectID != p.ID || pl.SHA != sha || pl.Ref != in.Ref)) {
			return pl, model.NotFound("Pipeline for pipeline_id, sha and ref")
		}
		return pl, err
	}
	var pl model.Pipeline
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		pl, err = tx.CommitPipeline(ctx, p.ID, sha, in.Ref)
		if !errors.Is(err, model.ErrNotFound) {
			return err
		}
		protected, err := s.protectedRef(ctx, p.ID, resolvedRef{name: in.Ref})
		if err != nil {
			return err
		}
		pl = model.Pipeline{ProjectID: p.ID, Ref: in.Ref, SHA: sha, BeforeSHA: model.ZeroRef, Source: model.SourceExternal,
			Status: model.StatusCreated, UserID: a.UserID(), Protected: protected}
		return tx.CreatePipeline(ctx, &pl)
	})
	return pl, err
}

// CommitStatusesInput filters the statuses of a commit.
type CommitStatusesInput struct {
	Ref, Stage, Name string
	PipelineID       int64
	All              bool // retried ones too
}

// CommitStatuses lists the jobs and statuses of a commit's pipelines.
func (s *Service) CommitStatuses(ctx context.Context, a auth.Actor, projectRef, sha string, in CommitStatusesInput, page model.Page) ([]JobView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	repo, err := s.repo(p)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	commit, err := repo.CommitID(ctx, sha)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return nil, model.PageInfo{}, model.NotFound("Commit")
	}
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	jobs, info, err := s.db.CommitStatuses(ctx, store.StatusFilter{ProjectID: p.ID, SHA: string(commit), Ref: in.Ref, Stage: in.Stage,
		Name: in.Name, PipelineID: in.PipelineID, All: in.All}, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.jobViews(ctx, p, jobs)
	return views, info, err
}
