package mergerequests

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// maxRetries bounds the retries of a write that lost a race with another
// writer of the same merge request.
const maxRetries = 5

// UpdateInput edits a merge request; nil means "not given".
type UpdateInput struct {
	Title, Description, TargetBranch *string
	StateEvent                       *string // close, reopen
	AssigneeIDs, ReviewerIDs         *[]int64
	Labels                           *[]string
	AddLabels, RemoveLabels          []string
	RemoveSourceBranch, Squash       *bool
	DiscussionLocked                 *bool
}

// Update edits a merge request (its author, developers up); each change
// is applied on the merge request as it is when written (a racing edit of
// another field is kept).
func (s *Service) Update(ctx context.Context, a auth.Actor, projectRef string, iid int64, in UpdateInput) (View, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadMergeRequest)
	if err != nil {
		return View{}, err
	}
	var m model.MergeRequest
	var head string
	for attempt := 0; ; attempt++ {
		m, err = s.load(ctx, p, iid)
		if err != nil {
			return View{}, err
		}
		head = m.HeadSHA
		res := auth.Resource{Project: &p, Access: acc, User: &model.User{ID: m.AuthorID}}
		if !auth.Can(a, auth.UpdateMergeRequest, res) {
			return View{}, model.Forbidden("")
		}
		was := m.State
		if err := s.apply(ctx, a, p, &m, in); err != nil {
			return View{}, err
		}
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.UpdateMergeRequest(ctx, &m); err != nil {
				return err
			}
			return recordStateEvent(ctx, tx, m, was, a.UserID())
		})
		if !errors.Is(err, model.ErrConflict) || attempt >= maxRetries {
			break
		}
	}
	if err != nil {
		return View{}, err
	}
	if m.HeadSHA != head {
		// Reopened on a newer head: what follows a push follows.
		if s.approvals != nil {
			if err := s.approvals.HeadMoved(ctx, p, m); err != nil {
				return View{}, err
			}
		}
		if repo, err := s.repo(p); err == nil {
			if err := setRef(ctx, repo, model.MRHeadRef(m.IID), git.ObjectID(m.HeadSHA)); err != nil {
				s.log.Warn("write merge request ref", "project_id", p.ID, "iid", m.IID, "err", err)
			}
		}
	}
	return s.view(ctx, a, p, acc, m, true)
}

// recordStateEvent records a closed or reopened event when an update
// moved m from state was.
func recordStateEvent(ctx context.Context, tx *store.Tx, m model.MergeRequest, was string, actorID int64) error {
	switch {
	case m.State == was:
		return nil
	case m.State == model.MRStateClosed:
		return tx.AddMergeRequestEvent(ctx, m.ID, actorID, model.EventClosed)
	case m.State == model.MRStateOpened && was == model.MRStateClosed:
		return tx.AddMergeRequestEvent(ctx, m.ID, actorID, model.EventReopened)
	}
	return nil
}

// takeSourceTip moves a merge request of the target project dst to its
// source branch's tip (diff refs from the target's tip); a branch that is
// gone leaves it as it was.
func (s *Service) takeSourceTip(ctx context.Context, dst model.Project, m *model.MergeRequest) error {
	src := dst
	if m.SourceProjectID != dst.ID {
		var err error
		if src, err = s.db.ProjectByID(ctx, m.SourceProjectID); err != nil {
			return ignoreNotFound(err)
		}
	}
	srcRepo, err := s.repo(src)
	if err != nil {
		return err
	}
	dstRepo, err := s.repo(dst)
	if err != nil {
		return err
	}
	head, err := branchTip(ctx, srcRepo, m.SourceBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) || (err == nil && string(head) == m.HeadSHA) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := fetchCommit(ctx, dstRepo, srcRepo, head); err != nil {
		return err
	}
	tip, err := branchTip(ctx, dstRepo, m.TargetBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		tip = git.ObjectID(m.StartSHA)
	} else if err != nil {
		return err
	}
	return s.setDiffRefs(ctx, dstRepo, m, head, tip)
}

// apply makes the edits of in to m.
func (s *Service) apply(ctx context.Context, a auth.Actor, p model.Project, m *model.MergeRequest, in UpdateInput) error {
	if m.State == model.MRStateMerged && (in.TargetBranch != nil || in.StateEvent != nil) {
		return model.Unprocessable("Cannot change the state or target branch of a merged merge request")
	}
	if in.Title != nil {
		if strings.TrimSpace(*in.Title) == "" {
			return model.Invalid("title", "can't be blank")
		}
		m.Title = strings.TrimSpace(*in.Title)
	}
	if in.Description != nil {
		m.Description = *in.Description
	}
	if in.TargetBranch != nil && *in.TargetBranch != m.TargetBranch {
		repo, err := s.repo(p)
		if err != nil {
			return err
		}
		tip, err := branchTip(ctx, repo, *in.TargetBranch)
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return validationError(model.KindUnprocessable, "Target branch \""+*in.TargetBranch+"\" does not exist")
		}
		if err != nil {
			return err
		}
		if m.SourceProjectID == m.TargetProjectID && *in.TargetBranch == m.SourceBranch {
			return validationError(model.KindConflict, "You can't use same project/branch for source and target")
		}
		m.TargetBranch = *in.TargetBranch
		if err := s.setDiffRefs(ctx, repo, m, git.ObjectID(m.HeadSHA), tip); err != nil {
			return err
		}
		m.MergeStatus = model.MergeUnchecked
	}
	if in.StateEvent != nil {
		now := s.now()
		switch *in.StateEvent {
		case "close":
			if m.State == model.MRStateOpened {
				m.State, m.ClosedByID, m.ClosedAt = model.MRStateClosed, a.UserID(), &now
			}
		case "reopen":
			if m.State == model.MRStateClosed {
				if dup, err := s.db.OpenMergeRequestFrom(ctx, m.SourceProjectID, m.SourceBranch, m.TargetProjectID, m.TargetBranch); err == nil {
					return validationError(model.KindConflict, "Another open merge request already exists for this source branch: !"+itoa(dup.IID))
				} else if !errors.Is(err, model.ErrNotFound) {
					return err
				}
				m.State, m.ClosedByID, m.ClosedAt, m.MergeStatus = model.MRStateOpened, 0, nil, model.MergeUnchecked
				// Pushes to a closed merge request's branch are not
				// followed: it takes the branch as it is now.
				if err := s.takeSourceTip(ctx, p, m); err != nil {
					return err
				}
			}
		default:
			return model.Param("state_event does not have a valid value")
		}
	}
	var err error
	if in.AssigneeIDs != nil {
		if m.AssigneeIDs, err = s.people(ctx, p, *in.AssigneeIDs); err != nil {
			return err
		}
	}
	if in.ReviewerIDs != nil {
		if m.ReviewerIDs, err = s.people(ctx, p, *in.ReviewerIDs); err != nil {
			return err
		}
	}
	if in.Labels != nil {
		m.Labels = model.CleanList(*in.Labels)
	}
	if len(in.AddLabels) > 0 {
		m.Labels = model.CleanList(append(m.Labels, in.AddLabels...))
	}
	for _, l := range model.CleanList(in.RemoveLabels) {
		m.Labels = removeString(m.Labels, l)
	}
	if in.RemoveSourceBranch != nil {
		m.RemoveSourceBranch = *in.RemoveSourceBranch
	}
	if in.Squash != nil && p.Settings.SquashOption != "always" && p.Settings.SquashOption != "never" {
		m.Squash = *in.Squash
	}
	if in.DiscussionLocked != nil {
		m.DiscussionLocked = *in.DiscussionLocked
	}
	return nil
}

func removeString(list []string, v string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ignoreNotFound drops a not-found error (a merge request or project gone
// meanwhile).
func ignoreNotFound(err error) error {
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// setRef points ref at next, whatever it pointed at (a merge request's
// head ref; only Quarry writes it).
func setRef(ctx context.Context, repo *gitrepo.Repo, ref string, next git.ObjectID) error {
	var err error
	for range 3 {
		cur, ok, rerr := repo.ResolveCommit(ctx, ref)
		if rerr != nil {
			return rerr
		}
		if !ok {
			cur = ""
		}
		if cur == next {
			return nil
		}
		if err = repo.UpdateRef(ctx, ref, next, cur); !errors.Is(err, gitrepo.ErrRefMoved) {
			return err
		}
	}
	return err
}

// Delete removes a merge request (owners and administrators) and its ref.
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef string, iid int64) error {
	p, _, err := s.found(ctx, a, projectRef, auth.DeleteMergeRequest)
	if err != nil {
		return err
	}
	m, err := s.load(ctx, p, iid)
	if err != nil {
		return err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.DeleteMergeRequest(ctx, m.ID)
		return err
	}); err != nil {
		return err
	}
	if repo, err := s.repo(p); err == nil {
		if cur, ok, err := repo.ResolveCommit(ctx, model.MRHeadRef(m.IID)); err == nil && ok {
			if err := repo.DeleteRef(ctx, model.MRHeadRef(m.IID), cur); err != nil {
				s.log.Warn("remove merge request ref", "project_id", p.ID, "iid", m.IID, "err", err)
			}
		}
	}
	return nil
}

// OnRefsChanged follows a change of refs: the open merge requests whose
// source branch moved take its new tip (their diff refs and head ref
// follow), and every open merge request whose source or target branch
// moved gets its merge check and changes count computed and stored now,
// so that reading it runs no git.
func (s *Service) OnRefsChanged(ctx context.Context, e model.RefsChanged) error {
	p, err := s.db.ProjectByID(ctx, e.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, u := range e.Updates {
		branch, ok := strings.CutPrefix(u.Ref, "refs/heads/")
		if !ok {
			continue
		}
		list, err := s.db.OpenMergeRequestsOfBranch(ctx, p.ID, branch)
		if err != nil {
			return err
		}
		for _, m := range list {
			if m.SourceProjectID == p.ID && m.SourceBranch == branch && u.New != model.ZeroRef {
				// The branch's tip now, not the event's: events of quick
				// pushes may be handled out of order, and an older one must
				// not move the merge request back.
				head, err := s.sourceTip(ctx, p, branch)
				if err != nil {
					return err
				}
				if head != "" && string(head) != m.HeadSHA {
					if m, err = s.follow(ctx, p, m, head, e.ActorID); err != nil {
						return err
					}
				}
			}
			if err := s.refreshStored(ctx, p, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// refreshStored computes and stores what git decides of an open merge
// request of (as source or target) project p, if it is still open.
func (s *Service) refreshStored(ctx context.Context, p model.Project, m model.MergeRequest) error {
	if m.State != model.MRStateOpened {
		return nil
	}
	v := View{MergeRequest: m, Target: p, Source: p}
	var err error
	if m.TargetProjectID != p.ID {
		if v.Target, err = s.db.ProjectByID(ctx, m.TargetProjectID); err != nil {
			return ignoreNotFound(err)
		}
	}
	if m.SourceProjectID != p.ID {
		if v.Source, err = s.db.ProjectByID(ctx, m.SourceProjectID); err != nil {
			return ignoreNotFound(err)
		}
	}
	return s.refresh(ctx, &v)
}

// sourceTip is a source branch's tip ("" when the branch is gone).
func (s *Service) sourceTip(ctx context.Context, src model.Project, branch string) (git.ObjectID, error) {
	repo, err := s.repo(src)
	if err != nil {
		return "", err
	}
	tip, err := branchTip(ctx, repo, branch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return "", nil
	}
	return tip, err
}

// follow moves a merge request to its source's new tip and returns it as
// stored (closed or merged meanwhile: as it is then).
func (s *Service) follow(ctx context.Context, src model.Project, m model.MergeRequest, head git.ObjectID, actorID int64) (model.MergeRequest, error) {
	dst := src
	if m.TargetProjectID != src.ID {
		var err error
		if dst, err = s.db.ProjectByID(ctx, m.TargetProjectID); err != nil {
			return m, ignoreNotFound(err)
		}
	}
	srcRepo, err := s.repo(src)
	if err != nil {
		return m, err
	}
	dstRepo, err := s.repo(dst)
	if err != nil {
		return m, err
	}
	tip, err := branchTip(ctx, dstRepo, m.TargetBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		tip = git.ObjectID(m.StartSHA)
	} else if err != nil {
		return m, err
	}
	for attempt := 0; ; attempt++ {
		if dstRepo != srcRepo {
			if err := fetchCommit(ctx, dstRepo, srcRepo, head); err != nil {
				return m, err
			}
		}
		if err := s.setDiffRefs(ctx, dstRepo, &m, head, tip); err != nil {
			return m, err
		}
		m.MergeStatus = model.MergeUnchecked
		err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateMergeRequest(ctx, &m) })
		if !errors.Is(err, model.ErrConflict) || attempt >= maxRetries {
			break
		}
		cur, lerr := s.db.MergeRequest(ctx, m.TargetProjectID, m.IID)
		if lerr != nil {
			return m, ignoreNotFound(lerr)
		}
		if cur.State != model.MRStateOpened {
			return cur, nil
		}
		// Another writer moved it: follow the branch as it is now.
		if head, err = s.sourceTip(ctx, src, m.SourceBranch); err != nil {
			return m, err
		}
		if head == "" || string(head) == cur.HeadSHA {
			return cur, nil
		}
		m = cur
	}
	if err != nil {
		return m, err
	}
	if s.approvals != nil {
		if err := s.approvals.HeadMoved(ctx, dst, m); err != nil {
			return m, err
		}
	}
	if err := setRef(ctx, dstRepo, model.MRHeadRef(m.IID), head); err != nil {
		return m, err
	}
	s.runPipeline(ctx, m, actorID)
	return m, nil
}
