package ci

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/model"
	"quarry/internal/store"
)

// maxPipelineVariables bounds the variables one request may give.
const maxPipelineVariables = 200

// checkVariables validates pipeline variables given by a request.
func checkVariables(vars []model.Variable) error {
	if len(vars) > maxPipelineVariables {
		return chainError(fmt.Sprintf("Too many variables (maximum is %d)", maxPipelineVariables))
	}
	seen := map[string]bool{}
	for _, v := range vars {
		switch {
		case v.Key == "":
			return chainError("Variables key can't be blank")
		case !model.ValidVariableKey(v.Key):
			return chainError("Variables key can contain only letters, digits and '_'.")
		case v.VariableType != model.VarEnv && v.VariableType != model.VarFile:
			return chainError("Variables variable type is not included in the list")
		case seen[v.Key]:
			return chainError("Duplicate variable name: " + v.Key)
		}
		seen[v.Key] = true
	}
	return nil
}

// CreatePipeline runs the project's CI configuration for a ref
// (POST /projects/:id/pipeline, source api): an invalid configuration or
// a ref the caller may not run is a 400 and nothing is stored.
func (s *Service) CreatePipeline(ctx context.Context, a auth.Actor, projectRef, ref string, vars []model.Variable) (PipelineView, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return PipelineView{}, err
	}
	if !auth.Can(a, auth.RunPipeline, auth.Resource{Project: &p, Access: acc}) {
		return PipelineView{}, model.Forbidden("")
	}
	if err := checkVariables(vars); err != nil {
		return PipelineView{}, err
	}
	if len(vars) > 0 && p.Settings.RestrictUserDefinedVariables && !a.Admin() && acc < model.Maintainer {
		return PipelineView{}, chainError("Insufficient permissions to set pipeline variables")
	}
	repo, err := s.repo(p)
	if err != nil {
		return PipelineView{}, err
	}
	r, err := resolveRef(ctx, repo, ref, "")
	if err != nil {
		return PipelineView{}, err
	}
	ok, protected, err := s.mayRunOnProtected(ctx, a, &p, acc, r.name, r.tag)
	if err != nil {
		return PipelineView{}, err
	}
	if !ok {
		return PipelineView{}, chainError(msgProtectedRef)
	}
	r.protected = protected
	pl, err := s.create(ctx, request{project: p, source: model.SourceAPI, resolved: &r, user: a.User, variables: vars})
	if err != nil {
		return PipelineView{}, err
	}
	return s.pipelineView(ctx, p, pl)
}

// PipelinesInput filters a project's pipelines; Username resolves to
// the user who ran them.
type PipelinesInput struct {
	store.PipelineFilter
	Username string
}

// Pipelines lists a project's pipelines (children left out).
func (s *Service) Pipelines(ctx context.Context, a auth.Actor, projectRef string, in PipelinesInput, page model.Page) ([]PipelineView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	f := in.PipelineFilter
	f.ProjectID = p.ID
	if f.Scope == "branches" || f.Scope == "tags" {
		// Only refs that exist have a latest pipeline.
		repo, err := s.repo(p)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		prefix := map[string]string{"branches": "refs/heads/", "tags": "refs/tags/"}[f.Scope]
		refs, err := repo.Refs(ctx, prefix)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		for _, r := range refs {
			f.Refs = append(f.Refs, strings.TrimPrefix(r.Name, prefix))
		}
	}
	if in.Username != "" {
		u, err := s.db.UserByUsername(ctx, in.Username)
		if errors.Is(err, model.ErrNotFound) {
			return []PipelineView{}, model.PageInfo{TotalKnown: true}, nil
		}
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		f.UserID = &u.ID
	}
	list, info, err := s.db.Pipelines(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.pipelineViews(ctx, p, list)
	return views, info, err
}

// Pipeline returns one pipeline of a project (a child too).
func (s *Service) Pipeline(ctx context.Context, a auth.Actor, projectRef string, id int64) (PipelineView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return PipelineView{}, err
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, id)
	if err != nil {
		return PipelineView{}, err
	}
	return s.pipelineView(ctx, p, pl)
}

// LatestPipeline returns the newest pipeline of a ref (default: the
// default branch).
func (s *Service) LatestPipeline(ctx context.Context, a auth.Actor, projectRef, ref string) (PipelineView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return PipelineView{}, err
	}
	if ref == "" {
		ref = p.DefaultBranch
	}
	// The latest pipeline of a ref is that of its head commit (none when
	// the head has none yet), as GitLab's.
	repo, err := s.repo(p)
	if err != nil {
		return PipelineView{}, err
	}
	r, err := resolveRef(ctx, repo, ref, "")
	if model.KindOf(err) == model.KindInvalid {
		return PipelineView{}, model.NotFound("Pipeline")
	}
	if err != nil {
		return PipelineView{}, err
	}
	pl, err := s.db.LatestPipeline(ctx, p.ID, r.name, string(r.sha))
	if err != nil {
		return PipelineView{}, model.NotFoundAs(err, "Pipeline")
	}
	return s.pipelineView(ctx, p, pl)
}

// PipelineVariables lists the variables a pipeline was made with
// (developers: values may be secrets).
func (s *Service) PipelineVariables(ctx context.Context, a auth.Actor, projectRef string, id int64) ([]model.Variable, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.RunPipeline)
	if err != nil {
		return nil, err
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, id)
	if err != nil {
		return nil, err
	}
	return s.db.PipelineVariables(ctx, pl.ID)
}

// pipelineAction resolves a pipeline for a change on its ref.
func (s *Service) pipelineAction(ctx context.Context, a auth.Actor, projectRef string, id int64, action auth.Action) (model.Project, model.Pipeline, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return p, model.Pipeline{}, err
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, id)
	if err != nil {
		return p, pl, err
	}
	if !auth.Can(a, action, auth.Resource{Project: &p, Access: acc}) {
		return p, pl, model.Forbidden("")
	}
	if action == auth.RunPipeline {
		ok, err := s.mayRunOn(ctx, a, &p, acc, pl.Ref, pl.Tag)
		if err != nil {
			return p, pl, err
		}
		if !ok {
			return p, pl, model.Forbidden("")
		}
	}
	return p, pl, nil
}

// RetryPipeline retries every failed or canceled latest job of a
// pipeline (manual ones return to manual) and the skipped jobs after them.
func (s *Service) RetryPipeline(ctx context.Context, a auth.Actor, projectRef string, id int64) (PipelineView, error) {
	p, pl, err := s.pipelineAction(ctx, a, projectRef, id, auth.RunPipeline)
	if err != nil {
		return PipelineView{}, err
	}
	err = s.inPipeline(ctx, pl.ID, func(tx *store.Tx, p *model.Pipeline, fx *effects) error {
		jobs, err := tx.PipelineJobs(ctx, p.ID, false)
		if err != nil {
			return err
		}
		for i := range jobs {
			j := &jobs[i]
			if j.Kind != model.JobGeneric && (j.Status == model.StatusFailed || j.Status == model.StatusCanceled) {
				if _, err := s.retryJob(ctx, tx, j, a.UserID(), false, fx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return PipelineView{}, err
	}
	return s.reloadPipeline(ctx, p, pl.ID)
}

// reloadPipeline reads a pipeline again and loads its view.
func (s *Service) reloadPipeline(ctx context.Context, p model.Project, id int64) (PipelineView, error) {
	pl, err := s.db.Pipeline(ctx, id)
	if err != nil {
		return PipelineView{}, err
	}
	return s.pipelineView(ctx, p, pl)
}

// CancelPipeline cancels every cancelable job of a pipeline and of its
// child pipelines (manual jobs stay manual).
func (s *Service) CancelPipeline(ctx context.Context, a auth.Actor, projectRef string, id int64) (PipelineView, error) {
	p, pl, err := s.pipelineAction(ctx, a, projectRef, id, auth.RunPipeline)
	if err != nil {
		return PipelineView{}, err
	}
	ids, err := s.descendants(ctx, pl.ID)
	if err != nil {
		return PipelineView{}, err
	}
	for _, pid := range ids {
		if err := s.cancelAll(ctx, pid); err != nil {
			return PipelineView{}, err
		}
	}
	return s.reloadPipeline(ctx, p, pl.ID)
}

// cancelAll cancels the cancelable jobs of one pipeline.
func (s *Service) cancelAll(ctx context.Context, id int64) error {
	return s.inPipeline(ctx, id, func(tx *store.Tx, p *model.Pipeline, fx *effects) error {
		jobs, err := tx.PipelineJobs(ctx, p.ID, false)
		if err != nil {
			return err
		}
		for i := range jobs {
			if jobs[i].Status.Cancelable() {
				if err := s.moveJob(ctx, tx, &jobs[i], model.StatusCanceled, store.JobChange{}, fx); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DeletePipeline removes a pipeline and its child pipelines: jobs, logs,
// artifacts, variables and persistent refs (owners).
func (s *Service) DeletePipeline(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	p, pl, err := s.pipelineAction(ctx, a, projectRef, id, auth.DeletePipeline)
	if err != nil {
		return err
	}
	ids, err := s.descendants(ctx, pl.ID)
	if err != nil {
		return err
	}
	var jobs []model.Job
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		for i := len(ids) - 1; i >= 0; i-- {
			list, err := tx.PipelineJobs(ctx, ids[i], true)
			if err != nil {
				return err
			}
			jobs = append(jobs, list...)
			if err := tx.DeletePipeline(ctx, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.removeFiles(jobs)
	repo, err := s.repo(p)
	if err != nil {
		return err
	}
	for _, pid := range ids {
		// Children run at their parent's commit.
		if err := repo.DeleteRef(ctx, pipelineRef(pid), git.ObjectID(pl.SHA)); err != nil {
			s.log.Warn("ci: delete persistent ref", "pipeline_id", pid, "err", err)
		}
	}
	return nil
}

// OnProjectRemoved deletes the files of a removed project's jobs (its
// rows went with the project).
func (s *Service) OnProjectRemoved(projectID int64) error { return s.files.RemoveProject(projectID) }
