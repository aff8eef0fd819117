package ci

import (
	"context"
	"errors"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// The sweep: a durable task that comes back every SweepInterval and fails
// the jobs that will not finish by themselves — running past their
// timeout (job_execution_timeout), running without word from their
// runner for RunnerSilence, pending with no runner taking them within
// the project's timeout (both stuck_or_timeout_failure) — and removes
// expired artifacts. It survives restarts: the next one is enqueued before
// this one ends, and one waits at a time.

type sweepPayload struct{}

var sweepTask = tasks.Define("ci_sweep", tasks.KindOptions[sweepPayload]{MaxAttempts: 3,
	Dedupe: func(sweepPayload) string { return "sweep" }})

// timeoutGrace is how long past its timeout a running job gets for its
// runner to report the timeout itself.
const timeoutGrace = time.Minute

// StartSweeps makes sure a sweep is scheduled (one at a time, whatever
// the number of processes).
func (s *Service) StartSweeps(ctx context.Context) error {
	if s.cfg.SweepInterval <= 0 {
		return nil
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := sweepTask.Enqueue(ctx, tx, sweepPayload{}, tasks.After(s.cfg.SweepInterval))
		return err
	})
}

func (s *Service) runSweep(ctx context.Context, _ sweepPayload) error {
	err := errors.Join(s.dropStuck(ctx), s.expireArtifacts(ctx))
	// The next sweep is scheduled whatever this one found.
	if nerr := s.StartSweeps(ctx); nerr != nil {
		return errors.Join(err, nerr)
	}
	return err
}

// dropStuck fails running and pending builds that will not finish.
func (s *Service) dropStuck(ctx context.Context) error {
	now := s.now()
	projects := map[int64]*model.Project{}
	project := func(id int64) (*model.Project, error) {
		if p, ok := projects[id]; ok {
			return p, nil
		}
		p, err := s.db.ProjectByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			projects[id] = nil
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		projects[id] = &p
		return &p, nil
	}
	runners := map[int64]model.Runner{}
	var errs []error
	for _, status := range []model.CIStatus{model.StatusRunning, model.StatusPending} {
		var after int64
		for {
			jobs, err := s.db.JobsInStatus(ctx, status, after, 500)
			if err != nil {
				return err
			}
			for _, j := range jobs {
				after = j.ID
				p, err := project(j.ProjectID)
				if err != nil || p == nil {
					errs = append(errs, err)
					continue
				}
				reason := model.FailureReason("")
				switch status {
				case model.StatusRunning:
					r, ok := runners[j.RunnerID]
					if !ok && j.RunnerID != 0 {
						r, _ = s.db.Runner(ctx, j.RunnerID)
						runners[j.RunnerID] = r
					}
					limit := time.Duration(JobTimeout(j, *p, r))*time.Second + timeoutGrace
					switch {
					case j.StartedAt != nil && now.Sub(*j.StartedAt) > limit:
						reason = model.FailureJobExecutionTimeout
					case s.cfg.RunnerSilence > 0 && now.Sub(j.UpdatedAt) > s.cfg.RunnerSilence:
						reason = model.FailureStuckOrTimeout
					}
				case model.StatusPending:
					wait := time.Duration(p.Settings.BuildTimeout) * time.Second
					if wait <= 0 {
						wait = time.Hour
					}
					if j.QueuedAt != nil && now.Sub(*j.QueuedAt) > wait {
						reason = model.FailureStuckOrTimeout
					}
				}
				if reason == "" {
					continue
				}
				if _, err := s.Drop(ctx, j.ID, reason); err != nil {
					if _, ok := NotRunningStatus(err); !ok {
						errs = append(errs, err)
					}
					continue
				}
				s.log.Info("job dropped", "job_id", j.ID, "reason", reason)
			}
			if len(jobs) < 500 {
				break
			}
		}
	}
	return errors.Join(errs...)
}
