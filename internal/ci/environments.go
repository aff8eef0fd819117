package ci

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Environments and deployments (GitLab's CI environments).
//
// A job with environment: names its environment in its row
// (model.Job.Environment, expanded when the job is made) and keeps the
// expanded keyword in its options (jobOptions.Deploy). The environment is
// made with the job (GitLab's Environments::CreateForJobService), and a
// job whose action is start gets its deployment, created. Every move of
// such a job moves its deployment in the same transaction (followJob):
// a compare-and-set against model's deployment transition table. A job
// without an environment costs nothing more: moveJob looks at the row's
// column only.

// EnvironmentGuard answers for protected environments.
type EnvironmentGuard interface {
	// MayDeploy reports whether user userID may deploy to the named environment of project p
	// (true when no protected environment covers it).
	MayDeploy(ctx context.Context, p model.Project, environment string, userID int64) (bool, error)
	// Protected reports whether the named environment of project projectID is protected.
	Protected(ctx context.Context, projectID int64, environment string) (bool, error)
}

// SetEnvironmentGuard gives the service the protected environments'
// rules (before use). Without one, every deployment is allowed and no
// environment is protected.
func (s *Service) SetEnvironmentGuard(g EnvironmentGuard) { s.guard = g }

// deployTarget is a job's environment: keyword, expanded when the job
// was made.
type deployTarget struct {
	Name       string `json:"name"`
	URL        string `json:"url,omitempty"`
	Action     string `json:"action"`
	OnStop     string `json:"on_stop,omitempty"`
	AutoStopIn string `json:"auto_stop_in,omitempty"`
	// Tier is deployment_tier; "" when the configuration gives none.
	Tier string `json:"tier,omitempty"`
}

// targetOf expands job pl's environment: with the pipeline's variables
// and the job's YAML variables (GitLab expands the name and URL). bad is
// true when the expanded name is not a valid environment name.
func targetOf(pl ciconfig.Planned, yamlVars []ciconfig.Variable, vars map[string]string) (t *deployTarget, bad bool) {
	env, ok := pl.Environment()
	if !ok {
		return nil, false
	}
	values := maps.Clone(vars)
	if values == nil {
		values = map[string]string{}
	}
	for _, v := range yamlVars {
		values[v.Key] = v.Value
	}
	return target(env, values)
}

// jobVars is the pipeline's variables with one job's YAML variables
// over them, for the jobs of a new pipeline one after the other: the
// pipeline's are copied once, not for each job.
type jobVars struct {
	vars, values map[string]string
	set          []ciconfig.Variable
}

// targetOf is the package's targetOf with jv's copy of the variables.
func (jv *jobVars) targetOf(pl ciconfig.Planned, yamlVars []ciconfig.Variable) (t *deployTarget, bad bool) {
	env, ok := pl.Environment()
	if !ok {
		return nil, false
	}
	if jv.values == nil {
		jv.values = maps.Clone(jv.vars)
		if jv.values == nil {
			jv.values = map[string]string{}
		}
	}
	// Put back what the last job set.
	for _, v := range jv.set {
		if old, ok := jv.vars[v.Key]; ok {
			jv.values[v.Key] = old
		} else {
			delete(jv.values, v.Key)
		}
	}
	jv.set = yamlVars
	for _, v := range yamlVars {
		jv.values[v.Key] = v.Value
	}
	return target(env, jv.values)
}

// target is where a job deploys: its environment expanded with values.
func target(env ciconfig.JobEnvironment, values map[string]string) (t *deployTarget, bad bool) {
	t = &deployTarget{Name: strings.TrimSpace(ciconfig.Expand(env.Name, values)), URL: ciconfig.Expand(env.URL, values),
		Action: env.Action, OnStop: env.OnStop, AutoStopIn: env.AutoStopIn, Tier: env.Tier}
	if t.Action == "" {
		t.Action = model.EnvActionStart
	}
	if !model.ValidEnvironmentName(t.Name) {
		return nil, true
	}
	return t, false
}

// createDeployments makes the environments of a new pipeline's jobs
// that have none yet (those that exist read in one query), and for each
// job with a start action its deployment (created), all in one insert.
func (s *Service) createDeployments(ctx context.Context, tx *store.Tx, jobs []newJob) error {
	var names []string
	for _, j := range jobs {
		if j.deploy != nil && !slices.Contains(names, j.deploy.Name) {
			names = append(names, j.deploy.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	envs, err := tx.EnvironmentsByName(ctx, jobs[0].ProjectID, names)
	if err != nil {
		return err
	}
	var ds []*model.Deployment
	for i := range jobs {
		j, t := &jobs[i].Job, jobs[i].deploy
		if t == nil {
			continue
		}
		env, ok := envs[t.Name]
		if !ok {
			tier := t.Tier
			if tier == "" {
				tier = model.GuessTier(t.Name)
			}
			if env, _, err = tx.EnsureEnvironment(ctx, model.Environment{ProjectID: j.ProjectID, Name: t.Name,
				Slug: model.EnvironmentSlug(t.Name), Tier: tier, ExternalURL: t.URL}); err != nil {
				return fmt.Errorf("environment of job %s: %w", j.Name, err)
			}
			envs[t.Name] = env
		}
		if t.Action != model.EnvActionStart {
			continue
		}
		d := &model.Deployment{ProjectID: j.ProjectID, EnvironmentID: env.ID, Ref: j.Ref, Tag: j.Tag, SHA: j.SHA, UserID: j.UserID,
			JobID: j.ID, Status: model.DeployCreated, OnStop: t.OnStop, AutoStopIn: t.AutoStopIn}
		// A job stored already skipped (its first processing decided so)
		// has a skipped deployment.
		if st, ok := model.DeploymentFor(j.Status); ok && model.DeployCreated.CanMoveTo(st) && st != model.DeploySuccess {
			d.Status = st
		}
		ds = append(ds, d)
	}
	// Their numbers are taken last (see store).
	return tx.CreateDeploymentsAtCommit(ctx, ds)
}

// redeploy gives a retried deployment job nj the deployment old had
// (GitLab makes a new deployment for each run).
func (s *Service) redeploy(ctx context.Context, tx *store.Tx, old, nj *model.Job) error {
	d, err := tx.DeploymentOfJob(ctx, old.ID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	nd := model.Deployment{ProjectID: d.ProjectID, EnvironmentID: d.EnvironmentID, Ref: d.Ref, Tag: d.Tag, SHA: d.SHA,
		UserID: nj.UserID, JobID: nj.ID, Status: model.DeployCreated, OnStop: d.OnStop, AutoStopIn: d.AutoStopIn}
	return tx.CreateDeployment(ctx, &nd)
}

// followJob moves job j's deployment into the status its job just
// entered (created → running → success, failed, canceled or skipped); a
// stop job that succeeded stops its environment, and one that failed
// sends a stopping environment back to available.
func (s *Service) followJob(ctx context.Context, tx *store.Tx, j *model.Job, fx *effects) error {
	to, ok := model.DeploymentFor(j.Status)
	if !ok {
		return nil
	}
	d, err := tx.DeploymentOfJob(ctx, j.ID)
	if errors.Is(err, model.ErrNotFound) {
		return s.followStopJob(ctx, tx, j)
	}
	if err != nil {
		return err
	}
	if d.Status == to || !d.Status.CanMoveTo(to) {
		return nil
	}
	moved, err := tx.MoveDeployment(ctx, &d, to)
	if err != nil {
		return err
	}
	if !moved {
		return errLostRace
	}
	if to == model.DeploySuccess {
		return s.deployed(ctx, tx, j, d)
	}
	return nil
}

// deployed applies a successful job deployment to its environment, as
// GitLab's Deployments::UpdateEnvironmentService: the environment starts
// again if it was stopped, takes the job's URL and tier, and its
// auto_stop_in; the merge requests the deployment shipped are linked.
func (s *Service) deployed(ctx context.Context, tx *store.Tx, j *model.Job, d model.Deployment) error {
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
			return errLostRace
		}
	}
	var t deployTarget
	if opts, err := planned(j); err == nil && opts.Deploy != nil {
		t = *opts.Deploy
		if t.URL, err = s.dotenvURL(ctx, tx, j, opts); err != nil {
			return err
		}
	}
	changed := false
	if t.URL != "" && t.URL != env.ExternalURL {
		env.ExternalURL, changed = t.URL, true
	}
	if t.Tier != "" && t.Tier != env.Tier {
		env.Tier, changed = t.Tier, true
	}
	if changed {
		if err := tx.UpdateEnvironment(ctx, &env); err != nil {
			return err
		}
	}
	if err := s.setAutoStop(ctx, tx, env.ID, d.AutoStopIn); err != nil {
		return err
	}
	if !d.Tag {
		return tx.LinkDeploymentMergeRequests(ctx, d)
	}
	return nil
}

// setAutoStop applies a deployment's auto_stop_in to its environment
// ("never" clears it; "" leaves it) and schedules the stop.
func (s *Service) setAutoStop(ctx context.Context, tx *store.Tx, envID int64, in string) error {
	switch in {
	case "":
		return nil
	case "never":
		return tx.SetEnvironmentAutoStop(ctx, envID, nil)
	}
	dur, err := ciconfig.ParseDuration(in)
	if err != nil {
		return nil // the configuration refused it already
	}
	at := tx.Now().Add(dur)
	if err := tx.SetEnvironmentAutoStop(ctx, envID, &at); err != nil {
		return err
	}
	_, err = autoStopTask.Enqueue(ctx, tx, envPayload{EnvironmentID: envID}, tasks.At(at))
	return err
}

// followStopJob: a job with action stop (it has no deployment) stops its
// environment when it succeeds; one that fails or is canceled sends a
// stopping environment back to available (GitLab's recovery of a stuck
// stop).
func (s *Service) followStopJob(ctx context.Context, tx *store.Tx, j *model.Job) error {
	if !j.Status.Completed() {
		return nil
	}
	opts, err := planned(j)
	if err != nil || opts.Deploy == nil || opts.Deploy.Action != model.EnvActionStop {
		return nil
	}
	env, err := tx.EnvironmentByName(ctx, j.ProjectID, j.Environment)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	to := model.EnvStopped
	if j.Status != model.StatusSuccess {
		if env.State != model.EnvStopping {
			return nil
		}
		to = model.EnvAvailable
	}
	if !env.State.CanMoveTo(to) {
		return nil
	}
	moved, err := tx.MoveEnvironment(ctx, env.ID, env.State, to)
	if err != nil {
		return err
	}
	if !moved {
		return errLostRace
	}
	return nil
}

// Durable work of environments.
type envPayload struct{ EnvironmentID int64 }

// autoStopTask stops an environment when its auto_stop_at comes. Every
// deployment that sets auto_stop_at enqueues one for that time; one that
// finds the environment stopped, or without auto_stop_at, does nothing,
// and one that runs before the time enqueues itself again for it. The
// stop itself is a compare-and-set on the environment's state, so
// several processes (or a task run twice) stop it once.
var autoStopTask = tasks.Define("ci_environment_auto_stop", tasks.KindOptions[envPayload]{MaxAttempts: 10})

func (s *Service) runAutoStop(ctx context.Context, pl envPayload) error {
	env, err := s.db.Environment(ctx, pl.EnvironmentID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if env.State != model.EnvAvailable || env.AutoStopAt == nil {
		return nil
	}
	if at := *env.AutoStopAt; at.After(s.now()) {
		// Early (a process whose clock runs behind the one that enqueued
		// it): look again then, so the stop is never lost.
		return s.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := autoStopTask.Enqueue(ctx, tx, pl, tasks.At(at))
			return err
		})
	}
	_, err = s.stop(ctx, env, false, true)
	return err
}

// stop stops env as GitLab's Environments::StopService: when its last
// successful deployment names an on_stop job (and force is not set), the
// environment goes to stopping and that job is played (it stops the
// environment when it succeeds); otherwise it is stopped at once. due
// makes the stop conditional on auto_stop_at having come (the auto-stop
// task). It returns the environment as it is after.
func (s *Service) stop(ctx context.Context, env model.Environment, force, due bool) (model.Environment, error) {
	var stopJob model.Job
	if !force {
		d, err := s.db.LastDeployment(ctx, env.ID, model.DeploySuccess)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return env, err
		}
		if err == nil && d.OnStop != "" && d.JobID != 0 {
			if stopJob, err = s.stopJobOf(ctx, d); err != nil {
				return env, err
			}
		}
	}
	still := func(tx *store.Tx) (model.Environment, bool, error) {
		cur, err := tx.Environment(ctx, env.ID)
		if err != nil {
			return cur, false, err
		}
		if cur.State == model.EnvStopped || (due && (cur.State != model.EnvAvailable || cur.AutoStopAt == nil || cur.AutoStopAt.After(tx.Now()))) {
			return cur, false, nil
		}
		return cur, true, nil
	}
	if stopJob.ID == 0 {
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			cur, ok, err := still(tx)
			if err != nil || !ok {
				return err
			}
			moved, err := tx.MoveEnvironment(ctx, cur.ID, cur.State, model.EnvStopped)
			if err == nil && !moved {
				err = model.Conflict("environment moved")
			}
			return err
		})
		if err != nil {
			return env, err
		}
		return s.db.Environment(ctx, env.ID)
	}
	err := s.withJob(ctx, stopJob.ID, func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error {
		cur, ok, err := still(tx)
		if err != nil || !ok {
			return err
		}
		if cur.State == model.EnvAvailable {
			moved, err := tx.MoveEnvironment(ctx, cur.ID, cur.State, model.EnvStopping)
			if err != nil {
				return err
			}
			if !moved {
				return errLostRace
			}
		}
		switch {
		case j.Status == model.StatusManual || j.Status == model.StatusScheduled:
			to := model.StatusPending
			if j.ResourceGroup != 0 {
				to = model.StatusWaitingForResource
			}
			return s.moveJob(ctx, tx, j, to, store.JobChange{}, fx)
		case j.Status.Completed() && !j.Retried:
			_, err := s.retryJob(ctx, tx, j, j.UserID, true, fx)
			return err
		}
		return nil // on its way already
	})
	if err != nil {
		return env, err
	}
	return s.db.Environment(ctx, env.ID)
}

// stopJobOf is the latest job named d.OnStop in the pipeline of d's job.
func (s *Service) stopJobOf(ctx context.Context, d model.Deployment) (model.Job, error) {
	dj, err := s.db.Job(ctx, d.JobID)
	if errors.Is(err, model.ErrNotFound) {
		return model.Job{}, nil
	}
	if err != nil {
		return model.Job{}, err
	}
	list, err := s.db.JobsNamed(ctx, dj.PipelineID, []string{d.OnStop})
	if err != nil || len(list) == 0 {
		return model.Job{}, err
	}
	return s.db.Job(ctx, list[len(list)-1].ID)
}

// deployCheck is the pre-assign check of a deployment job (GitLab's
// protected_environment_failure and forward_deployment_failure): the
// reason to fail it, or "".
func (s *Service) deployCheck(ctx context.Context, tx *store.Tx, j *model.Job, opts jobOptions) (model.FailureReason, string, error) {
	if opts.Deploy == nil {
		return "", "", nil
	}
	p, err := tx.ProjectByID(ctx, j.ProjectID)
	if err != nil {
		return "", "", err
	}
	action := opts.Deploy.Action
	if s.guard != nil && (action == model.EnvActionStart || action == model.EnvActionStop) {
		ok, err := s.guard.MayDeploy(ctx, p, j.Environment, j.UserID)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return model.FailureProtectedEnvironment, "the user may not deploy to " + j.Environment, nil
		}
	}
	if action != model.EnvActionStart || !p.Settings.CIForwardDeploymentEnabled {
		return "", "", nil
	}
	d, err := tx.DeploymentOfJob(ctx, j.ID)
	if errors.Is(err, model.ErrNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	last, err := tx.LastDeployment(ctx, d.EnvironmentID, model.DeploySuccess)
	if errors.Is(err, model.ErrNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	// GitLab's Deployment#older_than_last_successful_deployment?: a
	// deployment of the commit deployed last is not outdated.
	if last.ID > d.ID && last.SHA != d.SHA {
		return model.FailureForwardDeployment, fmt.Sprintf("deployment %d is older than the last successful deployment %d", d.IID, last.IID), nil
	}
	return "", "", nil
}

// environmentVariables are the CI_ENVIRONMENT_* variables of a job with
// an environment (GitLab sends them only then).
func (s *Service) environmentVariables(ctx context.Context, j model.Job, opts jobOptions) ([]RequestVariable, error) {
	if opts.Deploy == nil || j.Environment == "" {
		return nil, nil
	}
	t := opts.Deploy
	env, err := s.db.EnvironmentByName(ctx, j.ProjectID, j.Environment)
	if errors.Is(err, model.ErrNotFound) {
		env = model.Environment{Name: t.Name, Slug: model.EnvironmentSlug(t.Name), Tier: t.Tier, ExternalURL: t.URL}
		if env.Tier == "" {
			env.Tier = model.GuessTier(t.Name)
		}
	} else if err != nil {
		return nil, err
	}
	url := t.URL
	if url == "" {
		url = env.ExternalURL
	}
	tier := t.Tier
	if tier == "" {
		tier = env.Tier
	}
	out := []RequestVariable{
		{Key: "CI_ENVIRONMENT_NAME", Value: env.Name, Public: true},
		{Key: "CI_ENVIRONMENT_ACTION", Value: t.Action, Public: true},
		{Key: "CI_ENVIRONMENT_TIER", Value: tier, Public: true},
		{Key: "CI_ENVIRONMENT_SLUG", Value: env.Slug, Public: true},
	}
	if url != "" {
		out = append(out, RequestVariable{Key: "CI_ENVIRONMENT_URL", Value: url, Public: true})
	}
	return out, nil
}

// environmentClaims are what an ID token of a job with an environment
// says of it (GitLab sets them only then).
func (s *Service) environmentClaims(ctx context.Context, j model.Job, opts jobOptions) (name string, protected bool, tier string, err error) {
	if opts.Deploy == nil || j.Environment == "" {
		return "", false, "", nil
	}
	tier = opts.Deploy.Tier
	if env, err := s.db.EnvironmentByName(ctx, j.ProjectID, j.Environment); err == nil {
		tier = env.Tier
	} else if !errors.Is(err, model.ErrNotFound) {
		return "", false, "", err
	}
	if tier == "" {
		tier = model.GuessTier(j.Environment)
	}
	if s.guard != nil {
		if protected, err = s.guard.Protected(ctx, j.ProjectID, j.Environment); err != nil {
			return "", false, "", err
		}
	}
	return j.Environment, protected, tier, nil
}

// maxEnvironmentBatch bounds the environments one stop_stale or
// review_apps call touches.
const maxEnvironmentBatch = 1000
