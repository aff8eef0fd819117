package ci

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// hexSHA is a commit id (sha1 or sha256, lower-case hex).
var hexSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// DeploymentsInput filters and orders a project's deployments.
type DeploymentsInput struct {
	OrderBy                       string // id (default), iid, created_at, updated_at, finished_at, ref
	Desc                          bool
	UpdatedAfter, UpdatedBefore   *time.Time
	FinishedAfter, FinishedBefore *time.Time
	Environment                   string
	Status                        model.DeploymentStatus
}

// Deployments lists a project's deployments. As GitLab's
// DeploymentsFinder, finished_after/finished_before need order_by
// finished_at and status success.
func (s *Service) Deployments(ctx context.Context, a auth.Actor, projectRef string, in DeploymentsInput, page model.Page) ([]DeploymentView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadDeployment)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	finished := in.FinishedAfter != nil || in.FinishedBefore != nil
	switch {
	case finished && in.OrderBy != "finished_at":
		return nil, model.PageInfo{}, model.BadRequestRaw("400 Bad request - `finished_at` filter requires `finished_at` sort.")
	case finished && in.Status != model.DeploySuccess:
		return nil, model.PageInfo{}, model.BadRequestRaw("400 Bad request - `finished_at` filter must be combined with `success` status filter.")
	case (in.UpdatedAfter != nil || in.UpdatedBefore != nil) && in.OrderBy != "updated_at":
		return nil, model.PageInfo{}, model.BadRequestRaw("400 Bad request - `updated_at` filter and `updated_at` sorting must be paired")
	}
	f := store.DeploymentFilter{ProjectID: p.ID, Status: in.Status, UpdatedAfter: in.UpdatedAfter, UpdatedBefore: in.UpdatedBefore,
		FinishedAfter: in.FinishedAfter, FinishedBefore: in.FinishedBefore, OrderBy: in.OrderBy, Desc: in.Desc}
	if in.Environment != "" {
		e, err := s.db.EnvironmentByName(ctx, p.ID, in.Environment)
		if errors.Is(err, model.ErrNotFound) {
			return []DeploymentView{}, model.PageInfo{}, nil
		}
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		f.EnvironmentID = e.ID
	}
	list, info, err := s.db.Deployments(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.deploymentViews(ctx, p, list)
	return views, info, err
}

// deploymentIn finds a deployment of the project: 404 Not found
// otherwise.
func (s *Service) deploymentIn(ctx context.Context, projectID, id int64) (model.Deployment, error) {
	d, err := s.db.Deployment(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && d.ProjectID != projectID) {
		return d, model.RecordNotFound()
	}
	return d, err
}

// deploymentFor finds a deployment of a project the actor reads
// deployments of (404 otherwise), then checks that the actor may also do
// action (403): GitLab looks the deployment up before the permission.
func (s *Service) deploymentFor(ctx context.Context, a auth.Actor, projectRef string, id int64, action auth.Action) (model.Project, model.Deployment, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadDeployment)
	if err != nil {
		return p, model.Deployment{}, err
	}
	d, err := s.deploymentIn(ctx, p.ID, id)
	if err != nil {
		return p, d, err
	}
	if action != auth.ReadDeployment {
		if _, _, err := s.project(ctx, a, projectRef, action); err != nil {
			return p, d, err
		}
	}
	return p, d, nil
}

// Deployment returns one deployment.
func (s *Service) Deployment(ctx context.Context, a auth.Actor, projectRef string, id int64) (DeploymentView, error) {
	p, d, err := s.deploymentFor(ctx, a, projectRef, id, auth.ReadDeployment)
	if err != nil {
		return DeploymentView{}, err
	}
	views, err := s.deploymentViews(ctx, p, []model.Deployment{d})
	if err != nil {
		return DeploymentView{}, err
	}
	return views[0], nil
}

// DeploymentInput is an external deployment (POST): all required.
type DeploymentInput struct {
	Environment, SHA, Ref string
	Tag                   bool
	Status                model.DeploymentStatus
}

// ExternalStatuses are the statuses the API sets (running, success,
// failed, canceled).
var ExternalStatuses = []model.DeploymentStatus{model.DeployRunning, model.DeploySuccess, model.DeployFailed, model.DeployCanceled}

// CreateDeployment records a deployment made outside Quarry's CI (its
// environment made when missing, as GitLab's find_or_create_by_name).
func (s *Service) CreateDeployment(ctx context.Context, a auth.Actor, projectRef string, in DeploymentInput) (DeploymentView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.CreateDeployment)
	if err != nil {
		return DeploymentView{}, err
	}
	if !model.ValidEnvironmentName(in.Environment) {
		return DeploymentView{}, model.Invalid("environment", "is invalid")
	}
	if !hexSHA.MatchString(in.SHA) {
		return DeploymentView{}, model.Invalid("sha", "is invalid")
	}
	if in.Ref == "" || len(in.Ref) > 255 || strings.HasPrefix(in.Ref, "-") || strings.Contains(in.Ref, "..") {
		return DeploymentView{}, model.Invalid("ref", "The branch or tag does not exist")
	}
	// GitLab's Deployment#valid_sha and #valid_ref: both name commits of
	// the project.
	repo, err := s.repo(p)
	if err != nil {
		return DeploymentView{}, err
	}
	if _, err := repo.CommitID(ctx, in.SHA); errors.Is(err, gitrepo.ErrRefNotFound) {
		return DeploymentView{}, model.Invalid("sha", "The commit does not exist")
	} else if err != nil {
		return DeploymentView{}, err
	}
	refName := "refs/heads/" + in.Ref
	if in.Tag {
		refName = "refs/tags/" + in.Ref
	}
	if _, err := repo.CommitID(ctx, refName); errors.Is(err, gitrepo.ErrRefNotFound) {
		return DeploymentView{}, model.Invalid("ref", "The branch or tag does not exist")
	} else if err != nil {
		return DeploymentView{}, err
	}
	if s.guard != nil {
		ok, err := s.guard.MayDeploy(ctx, p, in.Environment, a.UserID())
		if err != nil {
			return DeploymentView{}, err
		}
		if !ok {
			return DeploymentView{}, model.Forbidden("")
		}
	}
	var d model.Deployment
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		env, _, err := tx.EnsureEnvironment(ctx, model.Environment{ProjectID: p.ID, Name: in.Environment,
			Slug: model.EnvironmentSlug(in.Environment), Tier: model.GuessTier(in.Environment)})
		if err != nil {
			return err
		}
		d = model.Deployment{ProjectID: p.ID, EnvironmentID: env.ID, Ref: in.Ref, Tag: in.Tag, SHA: in.SHA, UserID: a.UserID(),
			Status: in.Status}
		if err := tx.CreateDeployment(ctx, &d); err != nil {
			return err
		}
		if in.Status == model.DeploySuccess {
			return s.externalDeployed(ctx, tx, d)
		}
		return nil
	})
	if err != nil {
		return DeploymentView{}, err
	}
	views, err := s.deploymentViews(ctx, p, []model.Deployment{d})
	if err != nil {
		return DeploymentView{}, err
	}
	return views[0], nil
}

// externalDeployed: an API deployment that succeeded starts its
// environment again and links its merge requests.
func (s *Service) externalDeployed(ctx context.Context, tx *store.Tx, d model.Deployment) error {
	env, err := tx.Environment(ctx, d.EnvironmentID)
	if err != nil {
		return err
	}
	if env.State != model.EnvAvailable {
		moved, err := tx.MoveEnvironment(ctx, env.ID, env.State, model.EnvAvailable)
		if err != nil {
			return err
		}
		if !moved {
			return model.Conflict("environment moved")
		}
	}
	if d.Tag {
		return nil
	}
	return tx.LinkDeploymentMergeRequests(ctx, d)
}

// UpdateDeployment moves a deployment reported through the API (one made
// by a job is 403, as GitLab); a move the state machine refuses is 400.
func (s *Service) UpdateDeployment(ctx context.Context, a auth.Actor, projectRef string, id int64, status model.DeploymentStatus) (DeploymentView, error) {
	p, d, err := s.deploymentFor(ctx, a, projectRef, id, auth.CreateDeployment)
	if err != nil {
		return DeploymentView{}, err
	}
	if d.JobID != 0 {
		return DeploymentView{}, model.ForbiddenRaw("403 Forbidden - Deployments created using GitLab CI can not be updated using the API")
	}
	if d.Status != status {
		if !d.Status.CanMoveTo(status) {
			return DeploymentView{}, model.Invalid("status", "cannot transition via \""+string(status)+"\"")
		}
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			moved, err := tx.MoveDeployment(ctx, &d, status)
			if err != nil {
				return err
			}
			if !moved {
				return model.Conflict("409 Conflict - the deployment moved")
			}
			if status == model.DeploySuccess {
				return s.externalDeployed(ctx, tx, d)
			}
			return nil
		})
		if err != nil {
			return DeploymentView{}, err
		}
	}
	views, err := s.deploymentViews(ctx, p, []model.Deployment{d})
	if err != nil {
		return DeploymentView{}, err
	}
	return views[0], nil
}

// DeleteDeployment removes a deployment (GitLab's
// Ci::Deployments::DestroyService): never a running one, nor the
// environment's last successful deployment.
func (s *Service) DeleteDeployment(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	_, d, err := s.deploymentFor(ctx, a, projectRef, id, auth.DestroyDeployment)
	if err != nil {
		return err
	}
	if d.Status == model.DeployRunning {
		return model.BadRequestRaw("Cannot destroy running deployment")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		// GitLab's Deployment#last?: the environment's last successful
		// deployment is what it runs.
		last, err := tx.LastDeployment(ctx, d.EnvironmentID, model.DeploySuccess)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
		if err == nil && last.ID == d.ID {
			return model.BadRequestRaw("Deployment currently deployed to environment")
		}
		return tx.DeleteDeployment(ctx, d.ID)
	})
}

// DeploymentMergeRequestIIDs lists the iids of the merge requests a
// deployment shipped (linked when it succeeded).
func (s *Service) DeploymentMergeRequestIIDs(ctx context.Context, a auth.Actor, projectRef string, id int64) (model.Project, []int64, error) {
	p, d, err := s.deploymentFor(ctx, a, projectRef, id, auth.ReadDeployment)
	if err != nil {
		return p, nil, err
	}
	ids, err := s.db.DeploymentMergeRequestIIDs(ctx, d.ID)
	return p, ids, err
}
