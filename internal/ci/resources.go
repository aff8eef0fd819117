package ci

import (
	"context"
	"errors"
	"slices"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// runAssign is one assignment pass of a resource group (reference §6):
// a slot whose holder completed is freed, and a free slot goes to the
// first candidate of the group's process mode — if that candidate waits
// for the resource; otherwise the slot waits for it. The group's row is
// locked for the pass, then the chosen job's pipeline: the slot and the
// job move together.
func (s *Service) runAssign(ctx context.Context, pl groupPayload) error {
	var err error
	for range maxRaceRetries {
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			g, err := tx.LockResourceGroup(ctx, pl.GroupID)
			if errors.Is(err, model.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if g.HolderID != 0 {
				h, err := tx.Job(ctx, g.HolderID)
				if err == nil && !h.Status.Completed() {
					return nil // still held
				}
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return err
				}
				if ok, err := tx.SwapResourceHolder(ctx, g.ID, g.HolderID, 0); err != nil || !ok {
					return errors.Join(err, errLostRace)
				}
			}
			next, _, err := tx.ResourceCandidates(ctx, g.ID, g.ProcessMode, model.Page{Number: 1, PerPage: 1})
			if err != nil || len(next) == 0 || next[0].Status != model.StatusWaitingForResource {
				return err
			}
			if ok, err := tx.SwapResourceHolder(ctx, g.ID, 0, next[0].ID); err != nil || !ok {
				return errors.Join(err, errLostRace)
			}
			p, err := tx.LockPipeline(ctx, next[0].PipelineID)
			if err != nil {
				return err
			}
			j, err := tx.Job(ctx, next[0].ID)
			if err != nil {
				return err
			}
			if j.Status != model.StatusWaitingForResource {
				return errLostRace
			}
			fx := &effects{}
			if err := s.moveJob(ctx, tx, &j, model.StatusPending, store.JobChange{}, fx); err != nil {
				return err
			}
			if err := s.process(ctx, tx, &p, fx); err != nil {
				return err
			}
			return fx.flush(ctx, tx)
		})
		if !errors.Is(err, errLostRace) {
			return err
		}
	}
	return err
}

// resourceGroup resolves a project's resource group by key for a
// developer: 404 Not found when there is none.
func (s *Service) resourceGroup(ctx context.Context, a auth.Actor, projectRef, key string) (model.Project, model.ResourceGroup, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ManageResourceGroups)
	if err != nil {
		return p, model.ResourceGroup{}, err
	}
	g, err := s.db.ResourceGroup(ctx, p.ID, key)
	if errors.Is(err, model.ErrNotFound) {
		return p, g, model.RecordNotFound()
	}
	return p, g, err
}

// ResourceGroups lists a project's resource groups.
func (s *Service) ResourceGroups(ctx context.Context, a auth.Actor, projectRef string, page model.Page) ([]model.ResourceGroup, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ManageResourceGroups)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ResourceGroups(ctx, p.ID, page)
}

// ResourceGroup returns one resource group.
func (s *Service) ResourceGroup(ctx context.Context, a auth.Actor, projectRef, key string) (model.ResourceGroup, error) {
	_, g, err := s.resourceGroup(ctx, a, projectRef, key)
	return g, err
}

// SetProcessMode changes how a resource group picks its next job; the
// next pass follows the new mode.
func (s *Service) SetProcessMode(ctx context.Context, a auth.Actor, projectRef, key, mode string) (model.ResourceGroup, error) {
	_, g, err := s.resourceGroup(ctx, a, projectRef, key)
	if err != nil {
		return g, err
	}
	if mode == "" {
		return g, nil
	}
	if !slices.Contains(model.ProcessModes, mode) {
		return g, model.Param("process_mode does not have a valid value")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetProcessMode(ctx, g.ID, mode); err != nil {
			return err
		}
		_, err := assignTask.Enqueue(ctx, tx, groupPayload{GroupID: g.ID})
		return err
	})
	if err != nil {
		return g, err
	}
	return s.db.ResourceGroup(ctx, g.ProjectID, g.Key)
}

// UpcomingJobs lists the jobs a resource group will give its slot to, in
// the order of its process mode.
func (s *Service) UpcomingJobs(ctx context.Context, a auth.Actor, projectRef, key string, page model.Page) ([]JobView, model.PageInfo, error) {
	p, g, err := s.resourceGroup(ctx, a, projectRef, key)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	page.Keyset = false
	jobs, info, err := s.db.ResourceCandidates(ctx, g.ID, g.ProcessMode, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.jobViews(ctx, p, jobs)
	return views, info, err
}

// CurrentJob returns the job holding a resource group's slot; ok is
// false when it is free.
func (s *Service) CurrentJob(ctx context.Context, a auth.Actor, projectRef, key string) (*JobView, error) {
	p, g, err := s.resourceGroup(ctx, a, projectRef, key)
	if err != nil || g.HolderID == 0 {
		return nil, err
	}
	j, err := s.db.Job(ctx, g.HolderID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := s.jobView(ctx, p, j)
	return &v, err
}
