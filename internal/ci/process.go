package ci

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
)

// moveJob moves j to status to (a compare-and-set on the status j has),
// stamps the times the move sets, notes in fx what must follow, and
// updates j. Another writer having moved j first is errLostRace.
func (s *Service) moveJob(ctx context.Context, tx *store.Tx, j *model.Job, to model.CIStatus, ch store.JobChange, fx *effects) error {
	now := tx.Now()
	switch {
	case to == model.StatusPending && ch.QueuedAt == nil:
		ch.QueuedAt = &now
	case to == model.StatusRunning && ch.StartedAt == nil:
		ch.StartedAt = &now
	case to.Finished() && ch.FinishedAt == nil:
		// A job canceled before it started has no finish time (the
		// spec's cancel response shows finished_at null).
		if !(to == model.StatusCanceled && j.StartedAt == nil) {
			ch.FinishedAt = &now
		}
	}
	if to == model.StatusScheduled && ch.ScheduledAt == nil {
		if j.Options == "" {
			// Processing reads jobs without their configuration.
			full, err := tx.Job(ctx, j.ID)
			if err != nil {
				return err
			}
			j.Options = full.Options
		}
		at := now.Add(startIn(j))
		ch.ScheduledAt = &at
	}
	var moved bool
	var err error
	if fx.countNext && j.Environment == "" {
		// Processing reads the counts and created jobs next (a job with
		// an environment writes its deployment first).
		fx.countNext = false
		moved, err = tx.MoveJobReadAhead(ctx, j.Status, to, ch, j)
	} else {
		moved, err = tx.MoveJob(ctx, j.ID, j.Status, to, ch, j)
	}
	if err != nil {
		return err
	}
	if !moved {
		return errLostRace
	}
	if ch.Coverage != nil {
		fx.coverage = true
	}
	if j.Environment != "" {
		// Only jobs with an environment pay for this.
		if err := s.followJob(ctx, tx, j, fx); err != nil {
			return err
		}
	}
	fx.entered(j)
	return nil
}

// entered notes what follows a job's entering its status: a pending
// bridge starts its downstream pipeline, a scheduled job waits for its
// time, and a job waiting for, or done with, a resource group's slot
// makes the group look for its next holder.
func (fx *effects) entered(j *model.Job) {
	switch to := j.Status; {
	case to == model.StatusPending && j.Kind == model.JobBridge:
		fx.downstream = append(fx.downstream, j.ID)
	case to == model.StatusPending && j.Kind == model.JobBuild:
		fx.queued = true
	case to == model.StatusWaitingForResource:
		fx.assignGroup(j.ResourceGroup)
	case to == model.StatusScheduled:
		fx.delayed = append(fx.delayed, delayedJob{id: j.ID, at: *j.ScheduledAt})
	case to.Completed() || to == model.StatusCanceling:
		fx.assignGroup(j.ResourceGroup)
	}
}

// jobOptions is a job's stored configuration: the seeded job and its
// YAML variables (global, then the matching workflow rule's, then its
// own; a later key wins in place).
type jobOptions struct {
	ciconfig.Planned
	YAMLVariables []ciconfig.Variable `json:"yaml_variables,omitempty"`
	// Deploy is the job's environment, expanded when the job was made.
	Deploy *deployTarget `json:"deploy,omitempty"`
}

// planned decodes a job's stored configuration.
func planned(j *model.Job) (jobOptions, error) {
	var p jobOptions
	if err := json.Unmarshal([]byte(j.Options), &p); err != nil {
		return p, fmt.Errorf("job %d options: %w", j.ID, err)
	}
	return p, nil
}

// startIn is how long a delayed job waits (a malformed or missing start_in,
// which the configuration refuses, waits no time).
func startIn(j *model.Job) time.Duration {
	p, err := planned(j)
	if err != nil || p.StartIn == "" {
		return 0
	}
	d, err := ciconfig.ParseDuration(p.StartIn)
	if err != nil {
		return 0
	}
	return d
}

// process decides what the pipeline's created jobs do now, applies the
// moves, and writes the pipeline's status, times, duration and coverage
// (reference §3.3–3.5). The caller holds the pipeline's lock. It reads
// only the pipeline's status counts, its created jobs and the jobs those
// need: a transition costs the same in a pipeline of 5 jobs or of 500.
func (s *Service) process(ctx context.Context, tx *store.Tx, p *model.Pipeline, fx *effects) error {
	counts, err := tx.JobStatusCounts(ctx, p.ID)
	if err != nil || len(counts) == 0 {
		return err
	}
	// Only created jobs move; with none, there is nothing to read.
	var created []model.Job
	if hasStatus(counts, model.StatusCreated) {
		if created, err = tx.LatestJobsIn(ctx, p.ID, model.StatusCreated); err != nil {
			return err
		}
	}
	in := make([]model.ProcJob, len(created))
	byID := make(map[int64]int, len(created))
	var needed []string
	for i, j := range created {
		byID[j.ID] = i
		in[i] = model.ProcJob{ID: j.ID, Name: j.Name, Stage: j.StageIdx, Status: j.Status, When: j.When,
			AllowFailure: j.AllowFailure, DAG: j.DAG, Needs: j.Needs, ResourceGroup: j.ResourceGroup != 0,
			Immediate: j.EnqueueImmediately}
		needed = append(needed, j.Needs...)
	}
	named := map[string][]model.NamedStatus{}
	if len(needed) > 0 {
		slices.Sort(needed)
		list, err := tx.JobsNamed(ctx, p.ID, slices.Compact(needed))
		if err != nil {
			return err
		}
		for _, j := range list {
			named[j.Name] = append(named[j.Name], model.NamedStatus{ID: j.ID, StatusItem: model.StatusItem{Status: j.Status, AllowFailure: j.AllowFailure}})
		}
	}
	res := model.ProcessCounts(in, counts, named)
	for _, m := range res.Moves {
		if err := s.moveJob(ctx, tx, &created[byID[m.ID]], m.To, store.JobChange{}, fx); err != nil {
			return err
		}
	}
	return s.savePipeline(ctx, tx, p, res.Status, fx)
}

// hasStatus reports whether counts hold a job in status st.
func hasStatus(counts model.StageStatuses, st model.CIStatus) bool {
	for _, stage := range counts {
		for it, n := range stage {
			if it.Status == st && n > 0 {
				return true
			}
		}
	}
	return false
}

// savePipeline writes the pipeline's status and what derives from its
// latest jobs, if anything changed: started at its first run, finished
// when it ends (success, failed, canceled), its run time when it ends or
// waits for a person, its coverage when a job's changed.
func (s *Service) savePipeline(ctx context.Context, tx *store.Tx, p *model.Pipeline, status model.CIStatus, fx *effects) error {
	now := tx.Now()
	next := *p
	next.Status = status
	if status == model.StatusRunning && next.StartedAt == nil {
		next.StartedAt = &now
	}
	switch {
	case status.Finished():
		if next.FinishedAt == nil || !p.Status.Finished() {
			next.FinishedAt = &now
		}
	case status.Completed():
		// skipped: done, but not finished
	default:
		next.FinishedAt = nil
	}
	if status != p.Status {
		next.Duration = nil
		if status.Completed() || status == model.StatusManual {
			spans, err := tx.JobRunTimes(ctx, p.ID)
			if err != nil {
				return err
			}
			next.Duration = runTime(spans, now)
		}
	}
	if fx.coverage {
		cov, err := tx.PipelineCoverage(ctx, p.ID)
		if err != nil {
			return err
		}
		if cov != nil {
			rounded := math.Round(*cov*100) / 100
			cov = &rounded
		}
		next.Coverage = cov
	}
	if samePipelineState(*p, next) {
		return nil
	}
	moved, err := tx.SavePipelineState(ctx, &next, p.Status)
	if err != nil {
		return err
	}
	if !moved {
		return errLostRace
	}
	wasDone := p.Status.Completed()
	*p = next
	if p.ParentJobID != 0 && p.Status.Completed() && !wasDone {
		fx.bridges = append(fx.bridges, p.ParentJobID)
	}
	return nil
}

func samePipelineState(a, b model.Pipeline) bool {
	return a.Status == b.Status && sameTime(a.StartedAt, b.StartedAt) && sameTime(a.FinishedAt, b.FinishedAt) &&
		sameInt(a.Duration, b.Duration) && sameFloat(a.Coverage, b.Coverage)
}

func sameTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
func sameInt(a, b *int64) bool      { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameFloat(a, b *float64) bool  { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// runTime is the time the pipeline's jobs ran: the union of their run
// intervals (an unfinished one ends now), overlaps counted once and idle
// gaps left out; nil when no job ran.
func runTime(spans [][2]*time.Time, now time.Time) *int64 {
	if len(spans) == 0 {
		return nil
	}
	type span struct{ from, to time.Time }
	list := make([]span, 0, len(spans))
	for _, sp := range spans {
		end := now
		if sp[1] != nil {
			end = *sp[1]
		}
		if end.After(*sp[0]) {
			list = append(list, span{*sp[0], end})
		}
	}
	var total time.Duration
	if len(list) > 0 {
		sort.Slice(list, func(a, b int) bool { return list[a].from.Before(list[b].from) })
		cur := list[0]
		for _, sp := range list[1:] {
			if sp.from.After(cur.to) {
				total += cur.to.Sub(cur.from)
				cur = sp
				continue
			}
			if sp.to.After(cur.to) {
				cur.to = sp.to
			}
		}
		total += cur.to.Sub(cur.from)
	}
	secs := int64(math.Round(total.Seconds()))
	return &secs
}
