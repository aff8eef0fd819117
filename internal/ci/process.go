package ci

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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
		at := now.Add(startIn(j))
		ch.ScheduledAt = &at
	}
	moved, err := tx.MoveJob(ctx, j.ID, j.Status, to, ch, j)
	if err != nil {
		return err
	}
	if !moved {
		return errLostRace
	}
	switch {
	case to == model.StatusPending && j.Kind == model.JobBridge:
		fx.downstream = append(fx.downstream, j.ID)
	case to == model.StatusWaitingForResource:
		fx.assignGroup(j.ResourceGroup)
	case to == model.StatusScheduled:
		fx.delayed = append(fx.delayed, delayedJob{id: j.ID, at: *j.ScheduledAt})
	case to.Completed() || to == model.StatusCanceling:
		fx.assignGroup(j.ResourceGroup)
	}
	return nil
}

// jobOptions is a job's stored configuration: the seeded job and its
// YAML variables (global, then the matching workflow rule's, then its
// own; a later key wins in place).
type jobOptions struct {
	ciconfig.Planned
	YAMLVariables []ciconfig.Variable `json:"yaml_variables,omitempty"`
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
// (reference §3.3–3.5). The caller holds the pipeline's lock.
func (s *Service) process(ctx context.Context, tx *store.Tx, p *model.Pipeline, fx *effects) error {
	jobs, err := tx.PipelineJobs(ctx, p.ID, false)
	if err != nil || len(jobs) == 0 {
		return err
	}
	in := make([]model.ProcJob, len(jobs))
	byID := make(map[int64]int, len(jobs))
	for i, j := range jobs {
		byID[j.ID] = i
		in[i] = model.ProcJob{ID: j.ID, Name: j.Name, Stage: j.StageIdx, Status: j.Status, When: j.When,
			AllowFailure: j.AllowFailure, DAG: j.DAG, Needs: j.Needs, ResourceGroup: j.ResourceGroup != 0,
			Immediate: j.EnqueueImmediately}
	}
	res := model.Process(in)
	for _, m := range res.Moves {
		if err := s.moveJob(ctx, tx, &jobs[byID[m.ID]], m.To, store.JobChange{}, fx); err != nil {
			return err
		}
	}
	return s.savePipeline(ctx, tx, p, jobs, res.Status, fx)
}

// savePipeline writes the pipeline's status and what derives from its
// latest jobs, if anything changed.
func (s *Service) savePipeline(ctx context.Context, tx *store.Tx, p *model.Pipeline, jobs []model.Job, status model.CIStatus, fx *effects) error {
	now := tx.Now()
	next := *p
	next.Status = status
	switch {
	case status == model.StatusRunning && next.StartedAt == nil:
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
	next.Duration = nil
	if status.Completed() || status == model.StatusManual {
		next.Duration = runTime(jobs, now)
	}
	next.Coverage = averageCoverage(jobs)
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
// intervals, overlaps counted once and idle gaps left out; nil when no
// job ran.
func runTime(jobs []model.Job, now time.Time) *int64 {
	type span struct{ from, to time.Time }
	var spans []span
	for _, j := range jobs {
		if j.StartedAt == nil {
			continue
		}
		end := now
		if j.FinishedAt != nil {
			end = *j.FinishedAt
		}
		if end.After(*j.StartedAt) {
			spans = append(spans, span{*j.StartedAt, end})
		}
	}
	if len(spans) == 0 {
		if anyStarted(jobs) {
			zero := int64(0)
			return &zero
		}
		return nil
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].from.Before(spans[b].from) })
	var total time.Duration
	cur := spans[0]
	for _, sp := range spans[1:] {
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
	secs := int64(math.Round(total.Seconds()))
	return &secs
}

func anyStarted(jobs []model.Job) bool {
	for _, j := range jobs {
		if j.StartedAt != nil {
			return true
		}
	}
	return false
}

// averageCoverage is the mean coverage of the jobs that report one, to
// two decimals; nil when none does.
func averageCoverage(jobs []model.Job) *float64 {
	var sum float64
	n := 0
	for _, j := range jobs {
		if j.Coverage != nil {
			sum += *j.Coverage
			n++
		}
	}
	if n == 0 {
		return nil
	}
	avg := math.Round(sum/float64(n)*100) / 100
	return &avg
}
