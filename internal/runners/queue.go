package runners

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
)

// waker wakes every parked job request when a build becomes pending: each
// waiter takes the current generation's channel, which the next
// notification closes.
type waker struct {
	mu  sync.Mutex
	gen chan struct{}
}

func newWaker() *waker { return &waker{gen: make(chan struct{})} }

func (w *waker) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen
}

func (w *waker) broadcast() {
	w.mu.Lock()
	close(w.gen)
	w.gen = make(chan struct{})
	w.mu.Unlock()
}

// Start listens for queued builds (ci.QueueChannel) on the database, so
// that a build made pending by any Quarry process wakes the runners
// waiting here, until ctx ends; then parked requests answer at once (a
// server shutting down does not wait out their long polls). The returned
// channel is closed when the listener has stopped.
func (s *Service) Start(ctx context.Context) (<-chan struct{}, error) {
	sub, err := s.db.Subscribe(ci.QueueChannel)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.stopped)
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-sub.C:
				if !ok {
					return
				}
				s.wake.broadcast()
			}
		}
	}()
	return done, nil
}

// RequestInput is a runner's POST /jobs/request.
type RequestInput struct {
	LastUpdate string
	Features   map[string]bool
}

// Assignment is a job handed to a runner.
type Assignment struct {
	Job     model.Job
	Payload *ci.JobRequest
}

// candidates bounds one look at the queue.
const candidates = 50

// queueVersion is the runner's view of the queue (X-GitLab-Last-Update):
// it changes when the set of pending builds changes or the runner's
// settings do.
func (s *Service) queueVersion(ctx context.Context, r model.Runner) (string, error) {
	count, sum, err := s.db.QueueState(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%d-%d", r.Version, count, sum), nil
}

// RequestJob finds runner r a job (POST /jobs/request). A paused runner
// gets none. When the runner saw the queue as it is (in.LastUpdate is
// the current version), the request waits up to the long-poll time for a
// build to become pending, then looks; otherwise it looks at once and,
// finding nothing, answers at once (reference §1.4). It returns the
// assignment, or nil and the queue version to send back. A claim lost to
// another runner with nothing else found is model.ErrConflict.
func (s *Service) RequestJob(ctx context.Context, r model.Runner, in RequestInput) (*Assignment, string, error) {
	deadline := time.NewTimer(s.cfg.LongPoll)
	defer deadline.Stop()
	for {
		woken := s.wake.wait() // before reading the version: no wake-up is missed
		version, err := s.queueVersion(ctx, r)
		if err != nil {
			return nil, "", err
		}
		if r.Paused {
			return nil, version, nil
		}
		if version != in.LastUpdate {
			a, lost, err := s.assign(ctx, r, in.Features)
			if err != nil || a != nil {
				return a, "", err
			}
			if lost {
				return nil, "", model.Conflict("job was taken by another runner")
			}
			// Nothing for this runner now: answered at once with the
			// version as it is now (the claim may have changed it); the
			// runner's next request, with that version, parks.
			version, err = s.queueVersion(ctx, r)
			return nil, version, err
		}
		select {
		case <-woken:
		case <-deadline.C:
			return nil, version, nil
		case <-ctx.Done():
			return nil, version, nil
		case <-s.stopped:
			return nil, version, nil
		}
	}
}

// assign claims the oldest pending build runner r may take. lost reports
// that a build it could take went to another runner first.
func (s *Service) assign(ctx context.Context, r model.Runner, features map[string]bool) (a *Assignment, lost bool, err error) {
	scope := store.QueueScope{}
	switch r.Type {
	case model.RunnerProject:
		scope.RunnerID = r.ID
	case model.RunnerGroup:
		g, err := s.db.GroupByID(ctx, r.GroupID)
		if err != nil {
			return nil, false, err
		}
		scope.GroupTraversal = g.Traversal
	}
	projects := map[int64]*model.Project{}
	var after int64
	for {
		queued, err := s.db.QueuedJobs(ctx, scope, after, candidates)
		if err != nil || len(queued) == 0 {
			return nil, lost, err
		}
		for _, q := range queued {
			after = q.ID
			if !r.TakesTags(q.TagList) || (r.AccessLevel == model.RunnerRefProtected && !q.Protected) {
				continue
			}
			p, ok := projects[q.ProjectID]
			if !ok {
				pp, err := s.db.ProjectByID(ctx, q.ProjectID)
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return nil, lost, err
				}
				if err == nil {
					p = &pp
				}
				projects[q.ProjectID] = p
			}
			if p == nil || p.PendingDelete || p.Settings.BuildsAccessLevel == "disabled" || (r.Shared() && !p.Settings.SharedRunnersEnabled) {
				continue
			}
			j, token, err := s.ci.Claim(ctx, q.ID, r, features)
			if errors.Is(err, model.ErrConflict) || errors.Is(err, model.ErrNotFound) {
				lost = true
				continue
			}
			if errors.Is(err, ci.ErrDropped) {
				// Failed instead (a dependency lost its archive, a
				// feature is missing): the next candidate.
				continue
			}
			if err != nil {
				return nil, lost, err
			}
			payload, err := s.ci.Payload(ctx, j, token, r)
			if err != nil {
				s.log.Error("build a job payload", "job_id", j.ID, "err", err)
				if _, derr := s.ci.Drop(ctx, j.ID, model.FailureScheduler); derr != nil {
					return nil, lost, errors.Join(err, derr)
				}
				continue
			}
			return &Assignment{Job: j, Payload: payload}, lost, nil
		}
		if len(queued) < candidates {
			return nil, lost, nil
		}
	}
}
