package ci

import (
	"context"
	"errors"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// EnvironmentView is an environment with, when asked for, its last
// successful deployment.
type EnvironmentView struct {
	model.Environment
	ProjectPath    string
	LastDeployment *DeploymentView
}

// DeploymentView is a deployment with its environment, user and job.
type DeploymentView struct {
	model.Deployment
	Environment model.Environment
	User        *model.User
	Job         *JobView
}

// deploymentViews loads what deployments' JSON shows in a few reads.
func (s *Service) deploymentViews(ctx context.Context, p model.Project, list []model.Deployment) ([]DeploymentView, error) {
	out := make([]DeploymentView, len(list))
	userOf, err := usersOf(ctx, s.db, list, func(d model.Deployment) int64 { return d.UserID })
	if err != nil {
		return nil, err
	}
	envs := map[int64]model.Environment{}
	var jobs []model.Job
	for _, d := range list {
		if _, ok := envs[d.EnvironmentID]; !ok {
			e, err := s.db.Environment(ctx, d.EnvironmentID)
			if err != nil {
				return nil, err
			}
			envs[d.EnvironmentID] = e
		}
		if d.JobID != 0 {
			j, err := s.db.Job(ctx, d.JobID)
			if err == nil {
				jobs = append(jobs, j)
			} else if !errors.Is(err, model.ErrNotFound) {
				return nil, err
			}
		}
	}
	views, err := s.jobViews(ctx, p, jobs)
	if err != nil {
		return nil, err
	}
	byJob := map[int64]*JobView{}
	for i := range views {
		byJob[views[i].ID] = &views[i]
	}
	for i, d := range list {
		out[i] = DeploymentView{Deployment: d, Environment: envs[d.EnvironmentID], User: userOf(d), Job: byJob[d.JobID]}
	}
	return out, nil
}

// EnvironmentsInput filters a project's environments.
type EnvironmentsInput struct {
	Name, Search string
	State        model.EnvironmentState
}

// Environments lists a project's environments.
func (s *Service) Environments(ctx context.Context, a auth.Actor, projectRef string, in EnvironmentsInput, page model.Page) ([]EnvironmentView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadEnvironment)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if in.Name != "" && in.Search != "" {
		return nil, model.PageInfo{}, model.Param("name, search cannot be used together")
	}
	if in.Search != "" && len(in.Search) < 3 {
		return nil, model.PageInfo{}, model.BadRequestRaw("400 Bad request - Search query is less than 3 characters")
	}
	list, info, err := s.db.Environments(ctx, store.EnvironmentFilter{ProjectID: p.ID, Name: in.Name,
		Search: strings.ToLower(in.Search), State: in.State}, page)
	if err != nil {
		return nil, info, err
	}
	out := make([]EnvironmentView, len(list))
	for i, e := range list {
		out[i] = EnvironmentView{Environment: e, ProjectPath: p.FullPath()}
	}
	return out, info, nil
}

// environmentIn finds an environment of the project: 404 Not found
// otherwise.
func (s *Service) environmentIn(ctx context.Context, projectID, id int64) (model.Environment, error) {
	e, err := s.db.Environment(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && e.ProjectID != projectID) {
		return e, model.RecordNotFound()
	}
	return e, err
}

// Environment returns one environment with its last deployment.
func (s *Service) Environment(ctx context.Context, a auth.Actor, projectRef string, id int64) (EnvironmentView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadEnvironment)
	if err != nil {
		return EnvironmentView{}, err
	}
	e, err := s.environmentIn(ctx, p.ID, id)
	if err != nil {
		return EnvironmentView{}, err
	}
	return s.environmentView(ctx, p, e)
}

func (s *Service) environmentView(ctx context.Context, p model.Project, e model.Environment) (EnvironmentView, error) {
	v := EnvironmentView{Environment: e, ProjectPath: p.FullPath()}
	// GitLab's Environment#last_deployment: the last successful one.
	d, err := s.db.LastDeployment(ctx, e.ID, model.DeploySuccess)
	if errors.Is(err, model.ErrNotFound) {
		return v, nil
	}
	if err != nil {
		return v, err
	}
	views, err := s.deploymentViews(ctx, p, []model.Deployment{d})
	if err != nil {
		return v, err
	}
	v.LastDeployment = &views[0]
	return v, nil
}

// EnvironmentInput carries an environment's writable fields; nil: not
// given.
type EnvironmentInput struct {
	Name, ExternalURL, Tier, Description *string
}

// checkEnvironment validates e as GitLab's Environment model: the
// name's characters and length, the URL's length and scheme, the tier.
func checkEnvironment(e model.Environment) model.FieldErrors {
	errs := model.FieldErrors{}
	switch {
	case strings.TrimSpace(e.Name) == "":
		errs.Add("name", "can't be blank")
	case len(e.Name) > 255:
		errs.Add("name", "is too long (maximum is 255 characters)")
	case !model.ValidEnvironmentName(e.Name):
		errs.Add("name", "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'")
	}
	if u := e.ExternalURL; u != "" {
		if len(u) > 255 {
			errs.Add("external_url", "is too long (maximum is 255 characters)")
		} else if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs.Add("external_url", "is blocked: Only allowed schemes are http, https")
		}
	}
	if !model.ValidTier(e.Tier) {
		errs.Add("tier", "is not included in the list")
	}
	if len(e.Description) > 10000 {
		errs.Add("description", "is too long (maximum is 10000 characters)")
	}
	return errs
}

func applyEnvironment(e *model.Environment, in EnvironmentInput) {
	if in.Name != nil {
		e.Name = *in.Name
	}
	if in.ExternalURL != nil {
		e.ExternalURL = strings.TrimSpace(*in.ExternalURL)
	}
	if in.Tier != nil {
		e.Tier = *in.Tier
	}
	if in.Description != nil {
		e.Description = *in.Description
	}
}

// uniqueEnvironment turns a taken name or slug into GitLab's 400.
func uniqueEnvironment(err error) error {
	switch {
	case store.IsUnique(err, store.UniqueEnvironmentName):
		return model.Invalid("name", "has already been taken")
	case store.IsUnique(err, store.UniqueEnvironmentSlug):
		return model.Invalid("slug", "has already been taken")
	}
	return err
}

// nameFree refuses a name another environment of the project has.
func nameFree(ctx context.Context, tx *store.Tx, projectID int64, name string) error {
	if _, err := tx.EnvironmentByName(ctx, projectID, name); err == nil {
		return model.Invalid("name", "has already been taken")
	} else if !errors.Is(err, model.ErrNotFound) {
		return err
	}
	return nil
}

// CreateEnvironment makes an environment (available).
func (s *Service) CreateEnvironment(ctx context.Context, a auth.Actor, projectRef string, in EnvironmentInput) (EnvironmentView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.CreateEnvironment)
	if err != nil {
		return EnvironmentView{}, err
	}
	e := model.Environment{ProjectID: p.ID}
	applyEnvironment(&e, in)
	if in.Tier == nil {
		e.Tier = model.GuessTier(e.Name)
	}
	if err := checkEnvironment(e).Err(); err != nil {
		return EnvironmentView{}, err
	}
	e.Slug = model.EnvironmentSlug(e.Name)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		// The name first: a taken name takes its slug too.
		if err := nameFree(ctx, tx, p.ID, e.Name); err != nil {
			return err
		}
		return tx.CreateEnvironment(ctx, &e)
	})
	if err != nil {
		return EnvironmentView{}, uniqueEnvironment(err)
	}
	return EnvironmentView{Environment: e, ProjectPath: p.FullPath()}, nil
}

// UpdateEnvironment changes an environment's name, URL, tier or
// description (a new name makes a new slug, as GitLab's rename).
func (s *Service) UpdateEnvironment(ctx context.Context, a auth.Actor, projectRef string, id int64, in EnvironmentInput) (EnvironmentView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.CreateEnvironment)
	if err != nil {
		return EnvironmentView{}, err
	}
	e, err := s.environmentIn(ctx, p.ID, id)
	if err != nil {
		return EnvironmentView{}, err
	}
	old := e.Name
	applyEnvironment(&e, in)
	if err := checkEnvironment(e).Err(); err != nil {
		return EnvironmentView{}, err
	}
	if e.Name != old {
		e.Slug = model.EnvironmentSlug(e.Name)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if e.Name != old {
			if err := nameFree(ctx, tx, p.ID, e.Name); err != nil {
				return err
			}
		}
		return tx.UpdateEnvironment(ctx, &e)
	})
	if err != nil {
		return EnvironmentView{}, uniqueEnvironment(err)
	}
	return EnvironmentView{Environment: e, ProjectPath: p.FullPath()}, nil
}

// DeleteEnvironment removes a stopped environment (GitLab refuses an
// available or stopping one).
func (s *Service) DeleteEnvironment(ctx context.Context, a auth.Actor, projectRef string, id int64) error {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadEnvironment)
	if err != nil {
		return err
	}
	e, err := s.environmentIn(ctx, p.ID, id)
	if err != nil {
		return err
	}
	if _, _, err := s.project(ctx, a, projectRef, auth.DestroyEnvironment); err != nil {
		return err
	}
	if e.State != model.EnvStopped {
		return model.Forbidden("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteStoppedEnvironment(ctx, e.ID)
		if err == nil && !ok {
			err = model.Forbidden("")
		}
		return err
	})
}

// StopEnvironment stops an environment (running its on_stop job unless
// force is set). A reader who may not stop it gets it unchanged, as
// GitLab's API answers.
func (s *Service) StopEnvironment(ctx context.Context, a auth.Actor, projectRef string, id int64, force bool) (EnvironmentView, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadEnvironment)
	if err != nil {
		return EnvironmentView{}, err
	}
	e, err := s.environmentIn(ctx, p.ID, id)
	if err != nil {
		return EnvironmentView{}, err
	}
	if _, _, err := s.project(ctx, a, projectRef, auth.CreateEnvironment); err != nil {
		if errors.Is(err, model.ErrForbidden) {
			// GitLab's StopService refuses quietly: the API answers 200
			// with the environment as it is.
			return EnvironmentView{Environment: e, ProjectPath: p.FullPath()}, nil
		}
		return EnvironmentView{}, err
	}
	if e.State == model.EnvStopped {
		return EnvironmentView{Environment: e, ProjectPath: p.FullPath()}, nil
	}
	if e, err = s.stop(ctx, e, force, false); err != nil {
		return EnvironmentView{}, err
	}
	return EnvironmentView{Environment: e, ProjectPath: p.FullPath()}, nil
}

// StopStaleEnvironments stops the project's available environments not
// updated nor deployed to since before (between ten years and a week
// ago), at most maxEnvironmentBatch of them, and answers GitLab's
// message.
func (s *Service) StopStaleEnvironments(ctx context.Context, a auth.Actor, projectRef string, before time.Time) (string, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.CreateEnvironment)
	if err != nil {
		return "", err
	}
	now := s.now()
	if before.Before(now.AddDate(-10, 0, 0)) || before.After(now.AddDate(0, 0, -7)) {
		return "", model.BadRequestRaw("400 Bad request - Invalid Date")
	}
	list, err := s.db.StaleEnvironments(ctx, p.ID, before, maxEnvironmentBatch)
	if err != nil {
		return "", err
	}
	for _, e := range list {
		if _, err := s.stop(ctx, e, false, false); err != nil {
			return "", err
		}
	}
	return "Successfully requested stop for all stale environments", nil
}

// ReviewAppsResult is what DELETE review_apps answers (GitLab's
// ScheduleToDeleteReviewAppsService result): Denied when the caller may
// not delete environments, NoneFound when nothing matched.
type ReviewAppsResult struct {
	Scheduled, Unprocessable []model.Environment
	Denied, NoneFound        bool
}

// Review apps' refusals, GitLab's words.
const (
	ReviewAppsDenied    = "You do not have permission to destroy environments in this project"
	ReviewAppsNoneFound = "No environments found for scheduled deletion. Either your query did not match any environments (default parameters match environments that are 30 days or older), or you have insufficient permissions to delete matching environments."
)

// DeleteReviewApps removes (unless dryRun) up to limit stopped review
// apps (environments under review/) last updated before before. GitLab
// schedules them for deletion a week later; Quarry removes them at once.
func (s *Service) DeleteReviewApps(ctx context.Context, a auth.Actor, projectRef string, before time.Time, limit int, dryRun bool) (ReviewAppsResult, error) {
	res := ReviewAppsResult{Scheduled: []model.Environment{}, Unprocessable: []model.Environment{}}
	p, _, err := s.project(ctx, a, projectRef, auth.ReadEnvironment)
	if err != nil {
		return res, err
	}
	if _, _, err := s.project(ctx, a, projectRef, auth.DestroyEnvironment); err != nil {
		if errors.Is(err, model.ErrForbidden) {
			res.Denied = true
			return res, nil
		}
		return res, err
	}
	list, err := s.db.StoppedReviewApps(ctx, p.ID, before, limit)
	if err != nil {
		return res, err
	}
	if len(list) == 0 {
		res.NoneFound = true
		return res, nil
	}
	if !dryRun {
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			for _, e := range list {
				if _, err := tx.DeleteStoppedEnvironment(ctx, e.ID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	res.Scheduled = list
	return res, nil
}
