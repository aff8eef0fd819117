package ci

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"quarry/internal/git"
	"quarry/internal/model"
	"quarry/internal/store"
)

// OnRefsChanged creates the pipelines of a change of refs (a push, an API
// commit, a new branch or tag): one per branch or tag created or updated,
// none for deletions, with source push. A ref whose commit has no CI
// configuration gets none; a push that asks to skip CI gets a skipped
// one. Each pipeline carries the event's key (ref, old, new, time): the
// same event seen again (a delivery retried after a crash, or two at
// once) creates nothing twice, while a later push of the same move is a
// new event.
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
		branchOrTag := strings.HasPrefix(u.Ref, "refs/heads/") || strings.HasPrefix(u.Ref, "refs/tags/")
		if !branchOrTag || u.New == model.ZeroRef {
			continue
		}
		req := request{project: p, source: model.SourcePush, ref: u.Ref, sha: u.New, before: u.Old, user: user, save: true,
			skipOption: skip, eventKey: fmt.Sprintf("%s %s %s %d", u.Ref, u.Old, u.New, e.At.UnixNano())}
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
		_, err := s.create(ctx, req)
		switch {
		case err == nil, store.IsUnique(err, store.UniquePipelineEvent):
		case model.KindOf(err) == model.KindInvalid:
			s.log.Debug("ci: no pipeline for a push", "project_id", p.ID, "ref", u.Ref, "reason", err)
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// MergeRequestPipeline runs a merge request's pipeline (source
// merge_request_event) in its source project at its head, as user: only
// jobs whose rules or only: ask for merge requests run, and a
// configuration that makes none makes no pipeline (ok false). A head a
// pipeline ran for already makes nothing again.
func (s *Service) MergeRequestPipeline(ctx context.Context, m model.MergeRequest, userID int64) (pl model.Pipeline, ok bool, err error) {
	p, err := s.db.ProjectByID(ctx, m.SourceProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return pl, false, nil
	}
	if err != nil {
		return pl, false, err
	}
	if p.PendingDelete || p.Settings.BuildsAccessLevel == "disabled" || m.HeadSHA == "" {
		return pl, false, nil
	}
	var user *model.User
	if userID != 0 {
		if u, err := s.db.UserByID(ctx, userID); err == nil {
			user = &u
		} else if !errors.Is(err, model.ErrNotFound) {
			return pl, false, err
		}
	}
	req := request{project: p, source: model.SourceMergeRequest, ref: "refs/heads/" + m.SourceBranch, sha: m.HeadSHA, user: user,
		save: true, mergeRequest: &m, eventKey: fmt.Sprintf("merge_request %d %s", m.ID, m.HeadSHA)}
	pl, err = s.create(ctx, req)
	switch {
	case err == nil:
		return pl, true, nil
	case store.IsUnique(err, store.UniquePipelineEvent), model.KindOf(err) == model.KindInvalid:
		return pl, false, nil
	}
	return pl, false, err
}

// HeadPipeline is the newest pipeline of a branch of a project at a
// commit (nil when none).
func (s *Service) HeadPipeline(ctx context.Context, projectID int64, branch, sha string) (*model.Pipeline, error) {
	pl, err := s.db.HeadPipeline(ctx, projectID, branch, sha)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &pl, nil
}
