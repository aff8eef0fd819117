package schedules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// The scheduler: a pass every Interval (a durable task; the next is
// enqueued before this one ends, and one waits at a time) takes the due
// active schedules, longest waiting first. Each is claimed by moving its
// next_run_at from the due time to the cron's next time after now, a
// compare-and-set: of several processes (or passes) seeing the same due
// run, one claims it. A schedule that was due several times while no
// process ran (downtime) runs once, and its next run is the next future
// time — GitLab's behaviour. The claim and a run task (due runGrace
// later) commit together; the pass then runs the pipeline itself and
// marks the task done, so a process dying between claim and pipeline
// leaves the run to another worker. The run's key (schedule and claimed
// time) makes a retried run create nothing twice.

// RunDue is one pass of the scheduler: it claims and runs every schedule
// due now (up to a batch) and reports how many it claimed.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	now := s.db.Now()
	due, err := s.db.DuePipelineSchedules(ctx, now, batch)
	if err != nil {
		return 0, err
	}
	claimed := 0
	var errs []error
	for _, sc := range due {
		next := nextAfter(sc, now)
		p := runPayload{ScheduleID: sc.ID, UserID: sc.OwnerID, Key: fmt.Sprintf("%d %d", sc.ID, sc.NextRunAt.UnixMicro())}
		var task model.Task
		var ok bool
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if ok, err = tx.ClaimPipelineSchedule(ctx, sc.ID, sc.NextRunAt, next); err != nil || !ok {
				return err
			}
			if sc.OwnerID == 0 {
				return nil
			}
			task, err = runTask.Enqueue(ctx, tx, p, tasks.After(runGrace))
			return err
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		claimed++
		if sc.OwnerID == 0 {
			s.log.Warn("pipeline schedule not run: it has no owner", "schedule_id", sc.ID)
			continue
		}
		if err := s.run(ctx, p); err != nil {
			// The run task retries it.
			s.log.Error("pipeline schedule run", "schedule_id", sc.ID, "err", err)
			continue
		}
		if err := s.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := runTask.Done(ctx, tx, task.ID)
			return err
		}); err != nil {
			errs = append(errs, err)
		}
	}
	return claimed, errors.Join(errs...)
}

// nextAfter is a schedule's next run after now; a line that no longer
// parses (it was valid when stored) or never matches waits a day.
func nextAfter(sc model.PipelineSchedule, now time.Time) time.Time {
	n, err := NextRun(sc.Cron, sc.CronTimezone, now)
	if err != nil || n.IsZero() {
		return now.Add(24 * time.Hour)
	}
	return n
}

func (s *Service) runTick(ctx context.Context, _ tickPayload) error {
	n, err := s.RunDue(ctx)
	wait := Interval
	if n >= batch {
		wait = 0
	}
	nerr := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tickTask.Enqueue(ctx, tx, tickPayload{}, tasks.After(wait))
		return err
	})
	return errors.Join(err, nerr)
}

func (s *Service) runRun(ctx context.Context, p runPayload) error { return s.run(ctx, p) }

// run creates one run's pipeline. A schedule or user that is gone, or a
// user who may not run it (blocked, no longer a developer, a protected
// ref they may not push or merge to), a missing ref or an invalid
// configuration: no pipeline, logged, done — GitLab's schedules neither
// save a failed pipeline nor deactivate the schedule then. Other errors
// are returned (the task retries).
func (s *Service) run(ctx context.Context, p runPayload) error {
	sc, err := s.db.PipelineSchedule(ctx, p.ScheduleID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	u, err := s.db.UserByID(ctx, p.UserID)
	if errors.Is(err, model.ErrNotFound) {
		s.log.Warn("pipeline schedule not run: its user is gone", "schedule_id", sc.ID, "user_id", p.UserID)
		return nil
	}
	if err != nil {
		return err
	}
	vars, err := s.db.ScheduleVariables(ctx, sc.ID)
	if err != nil {
		return err
	}
	pl, created, err := s.pipelines.CreateSchedulePipeline(ctx, ci.ScheduleRun{ScheduleID: sc.ID, ProjectID: sc.ProjectID, Ref: sc.Ref,
		User: u, Variables: vars, Key: p.Key})
	switch model.KindOf(err) {
	case 0:
	case model.KindForbidden, model.KindNotFound, model.KindInvalid:
		s.log.Warn("pipeline schedule not run", "schedule_id", sc.ID, "user_id", u.ID, "reason", err)
		return nil
	default:
		return err
	}
	if err != nil {
		return err
	}
	if created {
		s.log.Info("pipeline schedule ran", "schedule_id", sc.ID, "pipeline_id", pl.ID)
	}
	return nil
}
