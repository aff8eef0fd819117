package ci

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Outcome is how a job ended, as a runner reports it.
type Outcome struct {
	Status   model.CIStatus // success or failed
	Reason   model.FailureReason
	ExitCode *int
}

// errNotRunning is a job update for a job that no longer runs; its
// current status goes with it (the runner protocol's Job-Status).
type errNotRunning struct{ status model.CIStatus }

func (e errNotRunning) Error() string { return "job is not running" }

// NotRunningStatus reports the status of a job an update found no longer
// running.
func NotRunningStatus(err error) (model.CIStatus, bool) {
	var e errNotRunning
	if errors.As(err, &e) {
		return e.status, true
	}
	return "", false
}

// Start moves a pending job to running (a runner took it).
func (s *Service) Start(ctx context.Context, jobID int64) (model.Job, error) {
	var out model.Job
	err := s.withJob(ctx, jobID, func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error {
		if j.Status != model.StatusPending {
			return errNotRunning{j.Status}
		}
		if err := s.moveJob(ctx, tx, j, model.StatusRunning, store.JobChange{}, fx); err != nil {
			return err
		}
		out = *j
		return nil
	})
	return out, err
}

// Finish ends a job that runs (or is pending) as o says: success, or
// failed with a reason (unknown names are unknown_failure) and exit
// code. A failure whose exit code allow_failure:exit_codes lists is
// allowed; one retry: allows is retried at once. The coverage is read
// from the finished log. A job that no longer runs is errNotRunning.
func (s *Service) Finish(ctx context.Context, jobID int64, o Outcome) (model.Job, error) {
	if o.Status == model.StatusFailed {
		o.Reason = normalizeReason(o.Reason)
	}
	return s.end(ctx, jobID, o, func(st model.CIStatus) bool {
		return st == model.StatusRunning || st == model.StatusPending || st == model.StatusCanceling
	})
}

// Drop fails a job that has not finished — created, waiting, pending,
// running, manual or scheduled — for a reason the server found (stuck,
// timed out, no runner can take it), as GitLab drops jobs: retry: applies
// as to a runner's failure. A finished job is errNotRunning.
func (s *Service) Drop(ctx context.Context, jobID int64, reason model.FailureReason) (model.Job, error) {
	return s.end(ctx, jobID, Outcome{Status: model.StatusFailed, Reason: reason}, func(st model.CIStatus) bool { return !st.Completed() })
}

// end moves a job in a status may allows to the outcome's status (a job
// being canceled ends canceled).
func (s *Service) end(ctx context.Context, jobID int64, o Outcome, may func(model.CIStatus) bool) (model.Job, error) {
	var out model.Job
	err := s.withJob(ctx, jobID, func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error {
		if !may(j.Status) {
			return errNotRunning{j.Status}
		}
		to := o.Status
		if j.Status == model.StatusCanceling {
			to = model.StatusCanceled
		}
		pl, err := planned(j)
		if err != nil {
			return err
		}
		var ch store.JobChange
		if cov := s.coverage(j, pl.Coverage); cov != nil {
			ch.Coverage = cov
		}
		switch to {
		case model.StatusSuccess, model.StatusCanceled:
		case model.StatusFailed:
			reason := o.Reason
			ch.FailureReason, ch.ExitCode = &reason, o.ExitCode
			if o.ExitCode != nil && slices.Contains(pl.AllowFailureExitCodes, *o.ExitCode) {
				allow := true
				ch.AllowFailure = &allow
			}
		default:
			return model.BadRequest("state is invalid")
		}
		if err := s.moveJob(ctx, tx, j, to, ch, fx); err != nil {
			return err
		}
		out = *j
		if to == model.StatusFailed && autoRetry(j, pl.Retry) {
			_, err := s.retryJob(ctx, tx, j, j.UserID, false, fx)
			return err
		}
		return nil
	})
	return out, err
}

// normalizeReason keeps the failure reasons a runner may report; any
// other (or none) is unknown_failure.
func normalizeReason(r model.FailureReason) model.FailureReason {
	if slices.Contains(model.RunnerFailureReasons, r) {
		return r
	}
	return model.FailureUnknown
}

// AppendLog writes a piece of a job's log at offset and returns the log's
// new size (jobfiles.ErrOffset when offset is past its end).
func (s *Service) AppendLog(ctx context.Context, jobID, offset int64, data io.Reader) (int64, error) {
	j, err := s.db.Job(ctx, jobID)
	if err != nil {
		return 0, model.NotFoundAs(err, "Job")
	}
	return s.appendLog(ctx, j, offset, data)
}

// appendLog writes a piece of a job already read to its log and records
// the log's size.
func (s *Service) appendLog(ctx context.Context, j model.Job, offset int64, data io.Reader) (int64, error) {
	size, err := s.files.AppendLog(j.ProjectID, j.ID, offset, data)
	if err != nil {
		return size, err
	}
	return size, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetJobLog(ctx, j.ID, size, nil) })
}

// withJob runs fn on a job under its pipeline's lock (see inPipeline).
func (s *Service) withJob(ctx context.Context, jobID int64, fn func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error) error {
	// The job is read with its pipeline's lock, in one statement.
	var j model.Job
	err := s.inLocked(ctx, func(tx *store.Tx) (model.Pipeline, error) { return tx.LockJobPipeline(ctx, jobID, &j) },
		func(tx *store.Tx, p *model.Pipeline, fx *effects) error {
			// The job's own move is followed by the pipeline's processing.
			fx.countNext = true
			return fn(tx, p, &j, fx)
		})
	return model.NotFoundAs(err, "Job")
}

// autoRetry reports whether a failed job's retry: configuration retries
// it: retries left, and the reason (and exit code) among those named.
func autoRetry(j *model.Job, r ciconfig.Retry) bool {
	if j.RetryCount >= r.Max {
		return false
	}
	if len(r.When) > 0 && !slices.Contains(r.When, "always") && !slices.Contains(r.When, string(j.FailureReason)) {
		return false
	}
	if len(r.ExitCodes) > 0 && (j.ExitCode == nil || !slices.Contains(r.ExitCodes, *j.ExitCode)) {
		return false
	}
	return true
}

// retryable reports whether a job may be retried: the latest of its name,
// and done (success, failed or canceled).
func retryable(j *model.Job) bool {
	return !j.Retried && j.Kind != model.JobGeneric &&
		(j.Status == model.StatusSuccess || j.Status == model.StatusFailed || j.Status == model.StatusCanceled)
}

// retryJob replaces a done job by a new one (created; processing starts
// it): the old job is marked retried, and the skipped jobs after it go
// back to created to be decided again. immediate enqueues a manual job
// instead of waiting for a person again.
func (s *Service) retryJob(ctx context.Context, tx *store.Tx, old *model.Job, userID int64, immediate bool, fx *effects) (model.Job, error) {
	ok, err := tx.MarkJobRetried(ctx, old.ID)
	if err != nil {
		return model.Job{}, err
	}
	if !ok {
		return model.Job{}, errLostRace
	}
	nj := model.Job{ProjectID: old.ProjectID, PipelineID: old.PipelineID, Kind: old.Kind, Name: old.Name, Stage: old.Stage,
		StageIdx: old.StageIdx, Status: model.StatusCreated, When: old.When, AllowFailure: old.AllowFailure,
		RetryCount: old.RetryCount + 1, UserID: userID, Ref: old.Ref, Tag: old.Tag, SHA: old.SHA, DAG: old.DAG, Needs: old.Needs,
		TagList: old.TagList, Timeout: old.Timeout, ResourceGroup: old.ResourceGroup, Options: old.Options, Environment: old.Environment,
		ManualVariables: old.ManualVariables, EnqueueImmediately: immediate && (old.When == model.WhenManual || old.When == model.WhenDelayed)}
	if pl, err := planned(old); err == nil {
		nj.AllowFailure = pl.AllowFailure // an exit code's allowance was for that run
	}
	if err := tx.CreateJob(ctx, &nj); err != nil {
		return nj, err
	}
	if nj.Environment != "" {
		if err := s.redeploy(ctx, tx, old, &nj); err != nil {
			return nj, err
		}
	}
	fx.coverage = fx.coverage || old.Coverage != nil
	return nj, s.resetAfter(ctx, tx, old.PipelineID, []model.Job{*old}, fx)
}

// resetAfter sends the skipped jobs that come after the given jobs (a
// later stage, or needing them) back to created.
func (s *Service) resetAfter(ctx context.Context, tx *store.Tx, pipelineID int64, from []model.Job, fx *effects) error {
	jobs, err := tx.LatestJobsIn(ctx, pipelineID, model.StatusSkipped)
	if err != nil {
		return err
	}
	minStage := -1
	names := map[string]bool{}
	for _, j := range from {
		if minStage < 0 || j.StageIdx < minStage {
			minStage = j.StageIdx
		}
		names[j.Name] = true
	}
	// Needs form a DAG; each pass takes in the jobs needing what is
	// reset already, until nothing more joins.
	reset := map[int64]bool{}
	for changed := true; changed; {
		changed = false
		for i := range jobs {
			j := &jobs[i]
			if reset[j.ID] {
				continue
			}
			after := !j.DAG && j.StageIdx > minStage
			for _, n := range j.Needs {
				after = after || names[n]
			}
			if after {
				reset[j.ID], names[j.Name], changed = true, true, true
			}
		}
	}
	for i := range jobs {
		if reset[jobs[i].ID] {
			if err := s.moveJob(ctx, tx, &jobs[i], model.StatusCreated, store.JobChange{}, fx); err != nil {
				return err
			}
		}
	}
	return nil
}

// jobAction resolves a job of a project for an action on it.
func (s *Service) jobAction(ctx context.Context, a auth.Actor, projectRef string, jobID int64, action auth.Action, kinds ...string) (model.Project, model.AccessLevel, model.Job, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadJob)
	if err != nil {
		return p, acc, model.Job{}, err
	}
	j, err := s.jobIn(ctx, s.db.Tx, p.ID, jobID, kinds...)
	if err != nil {
		return p, acc, j, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	if action == auth.EraseJob && j.UserID != 0 {
		res.User = &model.User{ID: j.UserID}
	}
	if !auth.Can(a, action, res) {
		return p, acc, j, model.Forbidden("")
	}
	if action == auth.RunPipeline || action == auth.EraseJob {
		ok, err := s.mayRunOn(ctx, a, &p, acc, j.Ref, j.Tag)
		if err != nil {
			return p, acc, j, err
		}
		if !ok {
			return p, acc, j, model.Forbidden("")
		}
	}
	return p, acc, j, nil
}

// Job returns a project's job (a build).
func (s *Service) Job(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.ReadJob, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	return s.jobView(ctx, p, j)
}

// CancelJob cancels a job that has not finished (a manual one too); a
// finished job is returned as it is.
func (s *Service) CancelJob(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.RunPipeline, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	err = s.withJob(ctx, j.ID, func(tx *store.Tx, p *model.Pipeline, jj *model.Job, fx *effects) error {
		j = *jj
		if !j.Status.Cancelable() && j.Status != model.StatusManual {
			return nil
		}
		return s.moveJob(ctx, tx, &j, model.StatusCanceled, store.JobChange{}, fx)
	})
	if err != nil {
		return JobView{}, err
	}
	return s.jobView(ctx, p, j)
}

// RetryJob retries a done job: a new job, which processing starts.
func (s *Service) RetryJob(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.RunPipeline, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	archived, err := s.archived(ctx, j)
	if err != nil {
		return JobView{}, err
	}
	var nj model.Job
	err = s.withJob(ctx, j.ID, func(tx *store.Tx, p *model.Pipeline, old *model.Job, fx *effects) error {
		if archived || !retryable(old) {
			return model.ForbiddenRaw("403 Forbidden - Job is not retryable")
		}
		var err error
		nj, err = s.retryJob(ctx, tx, old, a.UserID(), true, fx)
		return err
	})
	if err != nil {
		return JobView{}, err
	}
	return s.reloadView(ctx, p, nj.ID)
}

// archived reports a job older than the instance's
// archive_builds_in_human_readable: it can no longer be retried or played.
func (s *Service) archived(ctx context.Context, j model.Job) (bool, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return false, err
	}
	p := st.ArchiveBuildsInHumanReadable
	if p == nil {
		return false, nil
	}
	sec, ok := model.ParseHumanDuration(*p)
	if !ok || sec <= 0 {
		return false, nil
	}
	return j.CreatedAt.Before(s.now().Add(-time.Duration(sec) * time.Second)), nil
}

// reloadView reads a job again and loads its view.
func (s *Service) reloadView(ctx context.Context, p model.Project, jobID int64) (JobView, error) {
	j, err := s.db.Job(ctx, jobID)
	if err != nil {
		return JobView{}, err
	}
	return s.jobView(ctx, p, j)
}

// PlayJob starts a manual or scheduled job (with variables for a manual
// one), or runs a done manual job again.
func (s *Service) PlayJob(ctx context.Context, a auth.Actor, projectRef string, jobID int64, vars []model.Variable) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.RunPipeline, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	for _, v := range vars {
		if !model.ValidVariableKey(v.Key) {
			return JobView{}, model.Invalid("base", "Job variables key can contain only letters, digits and '_'.")
		}
	}
	archived, err := s.archived(ctx, j)
	if err != nil {
		return JobView{}, err
	}
	result := j.ID
	err = s.withJob(ctx, j.ID, func(tx *store.Tx, p *model.Pipeline, jj *model.Job, fx *effects) error {
		switch {
		case archived:
		case jj.Status == model.StatusManual || jj.Status == model.StatusScheduled:
			if len(vars) > 0 {
				if err := tx.SetJobManualVariables(ctx, jj.ID, vars); err != nil {
					return err
				}
			}
			to := model.StatusPending
			if jj.ResourceGroup != 0 {
				to = model.StatusWaitingForResource
			}
			return s.moveJob(ctx, tx, jj, to, store.JobChange{}, fx)
		case jj.When == model.WhenManual && retryable(jj):
			nj, err := s.retryJob(ctx, tx, jj, a.UserID(), true, fx)
			if err == nil && len(vars) > 0 {
				err = tx.SetJobManualVariables(ctx, nj.ID, vars)
			}
			result = nj.ID
			return err
		}
		return model.BadRequestRaw("400 Bad request - Unplayable Job")
	})
	if err != nil {
		return JobView{}, err
	}
	return s.reloadView(ctx, p, result)
}

// EraseJob removes a done job's log and artifacts and records when.
func (s *Service) EraseJob(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (JobView, error) {
	p, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.EraseJob, model.JobBuild)
	if err != nil {
		return JobView{}, err
	}
	arts, err := s.db.JobArtifacts(ctx, j.ID)
	if err != nil {
		return JobView{}, err
	}
	_, hasLog, err := s.logSize(j)
	if err != nil {
		return JobView{}, err
	}
	if !j.Status.Completed() || j.ErasedAt != nil || (len(arts) == 0 && !hasLog) {
		return JobView{}, model.ForbiddenRaw("403 Forbidden - Job is not erasable!")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.EraseJob(ctx, j.ID)
		if err != nil {
			return err
		}
		if !ok {
			return model.ForbiddenRaw("403 Forbidden - Job is not erasable!")
		}
		_, err = tx.DeleteJobArtifacts(ctx, j.ID)
		return err
	})
	if err != nil {
		return JobView{}, err
	}
	if err := s.files.RemoveJob(j.ProjectID, j.ID); err != nil {
		return JobView{}, err
	}
	return s.reloadView(ctx, p, j.ID)
}

// logSize reports the size of a job's log and whether it has one.
func (s *Service) logSize(j model.Job) (int64, bool, error) {
	f, ok, err := s.files.OpenLog(j.ProjectID, j.ID)
	if err != nil || !ok {
		return 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	return st.Size(), true, nil
}

// OpenLog opens a job's log for reading: 404 when the job or its log does
// not exist.
func (s *Service) OpenLog(ctx context.Context, a auth.Actor, projectRef string, jobID int64) (io.ReadCloser, int64, error) {
	_, _, j, err := s.jobAction(ctx, a, projectRef, jobID, auth.ReadJob, model.JobBuild)
	if err != nil {
		return nil, 0, err
	}
	f, ok, err := s.files.OpenLog(j.ProjectID, j.ID)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, model.NotFound("")
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// JobsInput selects a project's or pipeline's jobs.
type JobsInput struct {
	Scope          []model.CIStatus
	IncludeRetried bool
}

// Jobs lists a project's builds, newest first (retried ones included, as
// GitLab lists them).
func (s *Service) Jobs(ctx context.Context, a auth.Actor, projectRef string, in JobsInput, page model.Page) ([]JobView, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadJob)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	jobs, info, err := s.db.Jobs(ctx, store.JobFilter{ProjectID: p.ID, Kinds: []string{model.JobBuild}, Statuses: in.Scope, Retried: true}, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.jobViews(ctx, p, jobs)
	return views, info, err
}

// PipelineJobs lists the builds (or bridges) of a pipeline and of its
// child pipelines, newest first; retried jobs only when asked.
func (s *Service) PipelineJobs(ctx context.Context, a auth.Actor, projectRef string, pipelineID int64, kind string, in JobsInput, page model.Page) ([]JobView, model.PageInfo, error) {
	// GitLab authorizes read_pipeline on the project, then read_build for
	// the builds (lib/api/ci/pipelines.rb, Ci::JobsFinder).
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadPipeline)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if kind == model.JobBuild && !auth.Can(a, auth.ReadJob, auth.Resource{Project: &p, Access: acc}) {
		return nil, model.PageInfo{}, model.Forbidden("")
	}
	pl, err := s.pipelineIn(ctx, s.db.Tx, p.ID, pipelineID)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	ids := []int64{pl.ID}
	if kind == model.JobBuild {
		if ids, err = s.descendants(ctx, pl.ID); err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	jobs, info, err := s.db.Jobs(ctx, store.JobFilter{ProjectID: p.ID, PipelineIDs: ids, Kinds: []string{kind}, Statuses: in.Scope,
		Retried: in.IncludeRetried}, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.jobViews(ctx, p, jobs)
	return views, info, err
}

// descendants lists a pipeline and its child pipelines, depth first.
func (s *Service) descendants(ctx context.Context, id int64) ([]int64, error) {
	out := []int64{id}
	for i := 0; i < len(out) && i < 1000; i++ {
		children, err := s.db.ChildPipelines(ctx, out[i])
		if err != nil {
			return nil, err
		}
		for _, c := range children {
			if c.Source == model.SourceParentPipeline {
				out = append(out, c.ID)
			}
		}
	}
	return out, nil
}

// runDelayed enqueues a scheduled job whose start_in has passed; a job
// played or canceled meanwhile is left alone.
func (s *Service) runDelayed(ctx context.Context, pl jobPayload) error {
	err := s.withJob(ctx, pl.JobID, func(tx *store.Tx, p *model.Pipeline, j *model.Job, fx *effects) error {
		if j.Status != model.StatusScheduled {
			return nil
		}
		if j.ScheduledAt != nil && tx.Now().Before(*j.ScheduledAt) {
			// Due later than the task ran (a clock moved back): wait.
			fx.delayed = append(fx.delayed, delayedJob{id: j.ID, at: *j.ScheduledAt})
			return nil
		}
		to := model.StatusPending
		if j.ResourceGroup != 0 {
			to = model.StatusWaitingForResource
		}
		return s.moveJob(ctx, tx, j, to, store.JobChange{}, fx)
	})
	if model.KindOf(err) == model.KindNotFound {
		return nil
	}
	return err
}
