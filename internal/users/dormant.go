package users

import (
	"context"
	"errors"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Dormant users: when the instance's deactivate_dormant_users is on, a
// durable task deactivates, once a day, the human users inactive for
// deactivate_dormant_users_period days (or never active and created that
// long ago), as GitLab's daily worker does. One task waits at a time,
// whatever the number of processes; each run schedules the next.

type dormantPayload struct{}

var dormantTask = tasks.Define("deactivate_dormant_users", tasks.KindOptions[dormantPayload]{MaxAttempts: 3,
	Dedupe: func(dormantPayload) string { return "dormant" }})

// dormantEvery is how often the dormant users are looked for.
const dormantEvery = 24 * time.Hour

// HandleDormant registers the daily task with the queue and makes sure
// one is scheduled (the first a minute after start).
func (s *Service) HandleDormant(ctx context.Context, q *tasks.Queue) error {
	tasks.Handle(q, dormantTask, s.runDormant, nil)
	return s.scheduleDormant(ctx, time.Minute)
}

func (s *Service) scheduleDormant(ctx context.Context, after time.Duration) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := dormantTask.Enqueue(ctx, tx, dormantPayload{}, tasks.After(after))
		return err
	})
}

func (s *Service) runDormant(ctx context.Context, _ dormantPayload) error {
	_, err := s.DeactivateDormant(ctx)
	// The next run is scheduled whatever this one found.
	if nerr := s.scheduleDormant(ctx, dormantEvery); nerr != nil {
		return errors.Join(err, nerr)
	}
	return err
}

// DeactivateDormant deactivates the dormant users now if the instance
// asks for it, and reports how many it deactivated.
func (s *Service) DeactivateDormant(ctx context.Context) (int64, error) {
	if s.settings == nil {
		return 0, nil
	}
	st, err := s.settings.Current(ctx)
	if err != nil || !st.DeactivateDormantUsers {
		return 0, err
	}
	cutoff := s.now().UTC().Add(-time.Duration(st.DeactivateDormantUsersPeriod) * 24 * time.Hour)
	var n int64
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.DeactivateDormantUsers(ctx, cutoff.Format(model.DateLayout), cutoff)
		return err
	})
	s.sessions.Invalidate()
	if n > 0 {
		s.log.Info("dormant users deactivated", "count", n, "inactive_days", st.DeactivateDormantUsersPeriod)
	}
	return n, err
}
