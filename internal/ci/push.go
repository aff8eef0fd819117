package ci

import (
	"context"
	"errors"
	"slices"
	"strings"

	"quarry/internal/git"
	"quarry/internal/model"
)

// OnRefsChanged creates the pipelines of a change of refs (a push, an API
// commit, a new branch or tag): one per branch or tag created or updated,
// none for deletions, with source push. A ref whose commit has no CI
// configuration gets none; a push that asks to skip CI gets a skipped
// one. Seeing the same event again (a delivery retried after a crash)
// creates nothing twice.
func (s *Service) OnRefsChanged(ctx context.Context, e model.RefsChanged) error {
	p, err := s.db.ProjectByID(ctx, e.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.PendingDelete || p.Settings.BuildsAccessLevel == "disabled" {
		return nil
	}
	var user *model.User
	if e.ActorID != 0 {
		u, err := s.db.UserByID(ctx, e.ActorID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
		if err == nil {
			user = &u
		}
	}
	skip := slices.Contains(e.PushOptions, "ci.skip")
	repo, err := s.repo(p)
	if err != nil {
		return err
	}
	var errs []error
	for _, u := range e.Updates {
		name, ok := strings.CutPrefix(u.Ref, "refs/heads/")
		if !ok {
			name, ok = strings.CutPrefix(u.Ref, "refs/tags/")
		}
		if !ok || u.New == model.ZeroRef {
			continue
		}
		if done, err := s.db.PushPipelineExists(ctx, p.ID, name, u.New, u.Old); err != nil || done {
			errs = append(errs, err)
			continue
		}
		req := request{project: p, source: model.SourcePush, ref: u.Ref, sha: u.New, before: u.Old, user: user, save: true,
			skipOption: skip}
		if u.Old != model.ZeroRef {
			changed, err := repo.ChangedPaths(ctx, git.ObjectID(u.Old), git.ObjectID(u.New))
			if err == nil {
				req.changesKnown = true
				for path := range changed {
					req.changes = append(req.changes, path)
				}
				slices.Sort(req.changes)
			}
		}
		if _, err := s.create(ctx, req); err != nil && model.KindOf(err) != model.KindInvalid {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
