package mergerequests

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// MergeInput is PUT …/merge.
type MergeInput struct {
	SHA                       string // the head the merger saw; another is 409
	MergeCommitMessage        string
	SquashCommitMessage       string
	Squash                    *bool
	ShouldRemoveSourceBranch  *bool
	MergeWhenPipelineSucceeds bool
}

// notMergeable is GitLab's 405 for a merge request that is not open, is
// a draft, or waits for its pipeline.
func notMergeable() error {
	return &model.Error{Kind: model.KindMethodNotAllowed, Message: "405 Method Not Allowed", Raw: true}
}

// cannotMerge is GitLab's 406 for a merge git cannot make (conflicts, a
// fast-forward that is not one).
func cannotMerge(msg string) error {
	return &model.Error{Kind: model.KindNotAcceptable, Message: msg, Raw: true}
}

// maxMergeRetries bounds the merges made again after the target branch
// moved under them.
const maxMergeRetries = 3

// Merge merges a merge request by the project's merge method (merge
// commit, rebase-merge, fast-forward), squashed when asked, and moves the
// target branch with a compare-and-swap: a merge racing a push to the
// target is made again on the new tip, and answered 409 only when the
// target keeps moving. The merger needs the target branch's merge grant.
func (s *Service) Merge(ctx context.Context, a auth.Actor, projectRef string, iid int64, in MergeInput) (View, error) {
	p, acc, err := s.found(ctx, a, projectRef, auth.ReadMergeRequest)
	if err != nil {
		return View{}, err
	}
	if !a.SignedIn() {
		return View{}, model.Unauthorized("")
	}
	m, err := s.load(ctx, p, iid)
	if err != nil {
		return View{}, err
	}
	rules, err := s.projects.ProtectedRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return View{}, err
	}
	if !auth.Can(a, auth.MergeCode, auth.Resource{Project: &p, Access: acc, Branch: &auth.Branch{Name: m.TargetBranch, Rules: rules}}) {
		return View{}, model.Unauthorized("")
	}
	if m.State != model.MRStateOpened || m.Draft() {
		return View{}, notMergeable()
	}
	if s.approvals != nil {
		ok, err := s.approvals.Approved(ctx, p, m)
		if err != nil {
			return View{}, err
		}
		if !ok {
			return View{}, notMergeable()
		}
	}
	v := View{MergeRequest: m, Target: p, Source: p}
	if m.SourceProjectID != p.ID {
		if v.Source, err = s.db.ProjectByID(ctx, m.SourceProjectID); err != nil {
			return View{}, ignoreNotFoundAs(err, cannotMerge("Source project is gone"))
		}
	}
	head, _, err := s.tips(ctx, &v)
	if err != nil {
		return View{}, err
	}
	if head == "" {
		return View{}, cannotMerge("Branch cannot be merged")
	}
	if in.SHA != "" && in.SHA != string(head) {
		return View{}, model.Conflict("SHA does not match HEAD of source branch: " + string(head))
	}
	if err := s.pipelineAllows(ctx, v, head); err != nil {
		return View{}, err
	}
	squash := m.Squash
	if in.Squash != nil && p.Settings.SquashOption != "always" && p.Settings.SquashOption != "never" {
		squash = *in.Squash
	}
	if p.Settings.SquashOption == "always" {
		squash = true
	}
	// The merge writes to the target's repository: a write in flight
	// until it returns (a storage move waits for it).
	end, err := s.projects.BeginWrite(ctx, &p)
	if err != nil {
		return View{}, err
	}
	defer end()
	repo, err := s.repo(p)
	if err != nil {
		return View{}, err
	}
	if v.Source.ID != p.ID {
		srcRepo, err := s.repo(v.Source)
		if err != nil {
			return View{}, err
		}
		if err := fetchCommit(ctx, repo, srcRepo, head); err != nil {
			return View{}, err
		}
	}
	// The merge request is locked while it merges (GitLab's locked
	// state, taken by compare-and-set in the database): a second merge, in
	// this process or another, finds it not open and is refused. The lock
	// lasts while this merge renews it (lock.go); ctx ends if it is lost.
	lk, ctx, err := s.lock(ctx, m.ID, a.UserID())
	if err != nil {
		return View{}, err
	}
	if lk == nil {
		return View{}, notMergeable()
	}
	moved := false
	defer func() {
		lk.stop()
		if !moved {
			lk.unlock(context.WithoutCancel(ctx))
		}
	}()
	if m, err = s.load(ctx, p, iid); err != nil {
		return View{}, err
	}
	var res mergeResult
	for attempt := 0; ; attempt++ {
		tip, err := branchTip(ctx, repo, m.TargetBranch)
		if err != nil {
			return View{}, cannotMerge("Target branch does not exist")
		}
		// The source is in the target already (merged meanwhile by another
		// process, or pushed there): there is nothing to merge, as GitLab
		// answers a merge request without commits.
		if merged, err := repo.IsAncestor(ctx, head, tip); err != nil {
			return View{}, err
		} else if merged {
			return View{}, notMergeable()
		}
		res, err = s.mergeCommits(ctx, a, p, repo, m, tip, head, squash, in)
		if err != nil {
			return View{}, err
		}
		// What the branch is about to become is on record before it does:
		// should this process die after the move, the recovery finds it on
		// the branch and finishes the merge.
		if err := lk.record(ctx, model.MergeResult{Branch: m.TargetBranch, Head: string(head), OldTip: string(tip),
			NewTip: string(res.newTip), MergeCommit: string(res.mergeCommit), SquashCommit: string(res.squashCommit), Squash: squash}); err != nil {
			return View{}, err
		}
		err = repo.UpdateRef(ctx, "refs/heads/"+m.TargetBranch, res.newTip, tip)
		if err == nil {
			moved = true
			res.oldTip = tip
			break
		}
		if !errors.Is(err, gitrepo.ErrRefMoved) {
			return View{}, err
		}
		if attempt >= maxMergeRetries {
			return View{}, model.Conflict("409 Conflict: the target branch moved during the merge; try again")
		}
	}
	// The branch moved: the merge request is merged, and what follows a
	// change of refs follows, in one transaction. The request may have
	// gone meanwhile; the merge stands all the same.
	done := context.WithoutCancel(ctx)
	outcome := store.MergeOutcome{MergedByID: a.UserID(), MergedAt: s.now(), HeadSHA: string(head), MergeCommitSHA: string(res.mergeCommit),
		SquashCommitSHA: string(res.squashCommit), Squash: squash}
	event := model.RefsChanged{ProjectID: p.ID, ActorID: a.UserID(), Source: mergeSource, At: s.now(),
		Updates: []model.RefUpdate{{Ref: "refs/heads/" + m.TargetBranch, Old: string(res.oldTip), New: string(res.newTip)}}}
	finished, err := lk.finish(done, outcome, event)
	for attempt := 0; err != nil && attempt < maxRetries && done.Err() == nil; attempt++ {
		finished, err = lk.finish(done, outcome, event)
	}
	if err != nil {
		// The lock stays: the recovery finishes the merge when its lease
		// ends.
		return View{}, err
	}
	if m, err = s.load(done, p, iid); err != nil {
		return View{}, err
	}
	if !finished && m.State != model.MRStateMerged {
		// The lock was taken from this merge (its lease ran out) and the
		// merge request is not merged: never overwritten, said.
		return View{}, model.Conflict("409 Conflict: the merge request changed during the merge")
	}
	ctx = done
	remove := m.RemoveSourceBranch
	if in.ShouldRemoveSourceBranch != nil {
		remove = *in.ShouldRemoveSourceBranch
	}
	if remove {
		s.removeSourceBranch(ctx, a, v.Source, m.SourceBranch, head)
	}
	return s.view(ctx, a, p, acc, m, true)
}

// mergeResult is what a merge made.
type mergeResult struct {
	newTip, oldTip            git.ObjectID
	mergeCommit, squashCommit git.ObjectID
}

// mergeCommits makes the commits a merge of head into tip needs by the
// project's merge method, without moving anything.
func (s *Service) mergeCommits(ctx context.Context, a auth.Actor, p model.Project, repo *gitrepo.Repo, m model.MergeRequest, tip, head git.ObjectID,
	squash bool, in MergeInput) (mergeResult, error) {
	sig := gitrepo.Signature{Name: a.User.Name, Email: a.User.Email, When: s.now()}
	var out mergeResult
	merged := head
	if squash {
		base, ok, err := repo.MergeBase(ctx, string(tip), string(head))
		if err != nil {
			return out, err
		}
		c, err := repo.ReadCommit(ctx, string(head))
		if err != nil {
			return out, err
		}
		msg := in.SquashCommitMessage
		if msg == "" {
			msg = m.Title + "\n"
		}
		var parents []git.ObjectID
		if ok {
			parents = []git.ObjectID{base}
		}
		if merged, err = repo.CommitTree(ctx, c.Tree, parents, msg, sig, sig); err != nil {
			return out, err
		}
		out.squashCommit = merged
	}
	method := p.Settings.MergeMethod
	if method == "ff" || method == "rebase_merge" {
		ok, err := repo.IsAncestor(ctx, tip, head)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, cannotMerge("Branch cannot be merged") // it must be rebased first
		}
	}
	switch method {
	case "ff":
		if squash {
			// A squash of a rebased branch sits on the target's tip.
			c, err := repo.ReadCommit(ctx, string(head))
			if err != nil {
				return out, err
			}
			msg := in.SquashCommitMessage
			if msg == "" {
				msg = m.Title + "\n"
			}
			if merged, err = repo.CommitTree(ctx, c.Tree, []git.ObjectID{tip}, msg, sig, sig); err != nil {
				return out, err
			}
			out.squashCommit = merged
		}
		out.newTip = merged
		return out, nil
	default: // merge, rebase_merge
		msg := in.MergeCommitMessage
		if msg == "" {
			msg = fmt.Sprintf("Merge branch '%s' into '%s'\n\n%s\n\nSee merge request %s!%d\n", m.SourceBranch, m.TargetBranch, m.Title, p.FullPath(), m.IID)
		}
		c, err := repo.MergeCommit(ctx, tip, merged, msg, sig)
		if errors.Is(err, gitrepo.ErrMergeConflict) {
			return out, cannotMerge("Branch cannot be merged")
		}
		if err != nil {
			return out, err
		}
		out.newTip, out.mergeCommit = c, c
		return out, nil
	}
}

// pipelineAllows refuses a merge (405) when the project requires a
// successful pipeline and the head's latest one is not (skipped passes
// where the project allows it).
func (s *Service) pipelineAllows(ctx context.Context, v View, head git.ObjectID) error {
	if !v.Target.Settings.OnlyAllowMergeIfPipelineSucceeds {
		return nil
	}
	pl, err := s.db.LatestPipeline(ctx, v.Source.ID, v.SourceBranch, string(head))
	if errors.Is(err, model.ErrNotFound) {
		return notMergeable()
	}
	if err != nil {
		return err
	}
	if pl.Status == model.StatusSuccess || (pl.Status == model.StatusSkipped && v.Target.Settings.AllowMergeOnSkippedPipeline != nil && *v.Target.Settings.AllowMergeOnSkippedPipeline) {
		return nil
	}
	return notMergeable()
}

// removeSourceBranch deletes a merged source branch (where the merger may
// push to it), and says so to what follows a change of refs.
func (s *Service) removeSourceBranch(ctx context.Context, a auth.Actor, src model.Project, branch string, head git.ObjectID) {
	acc, err := s.projects.Access(ctx, a, src.ID)
	if err != nil {
		return
	}
	rules, err := s.projects.ProtectedRules(ctx, src.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return
	}
	for _, r := range rules {
		if model.MatchesBranch(r.Name, branch) {
			return // protected branches stay
		}
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &src, Access: acc, Branch: &auth.Branch{Name: branch, Rules: rules}}) ||
		branch == src.DefaultBranch {
		return
	}
	end, err := s.projects.BeginWrite(ctx, &src)
	if err != nil {
		s.log.Info("source branch not removed", "project_id", src.ID, "branch", branch, "err", err)
		return
	}
	defer end()
	repo, err := s.repo(src)
	if err != nil {
		return
	}
	if err := repo.DeleteRef(ctx, "refs/heads/"+branch, head); err != nil {
		s.log.Info("source branch not removed", "project_id", src.ID, "branch", branch, "err", err)
		return
	}
	if err := s.events.RefsChanged(ctx, model.RefsChanged{ProjectID: src.ID, ActorID: a.UserID(), Source: "merge_request", At: s.now(),
		Updates: []model.RefUpdate{{Ref: "refs/heads/" + branch, Old: string(head), New: model.ZeroRef}}}); err != nil {
		s.log.Warn("refs changed after removing a source branch", "err", err)
	}
}

// ignoreNotFoundAs turns a not-found error into other.
func ignoreNotFoundAs(err, other error) error {
	if errors.Is(err, model.ErrNotFound) {
		return other
	}
	return err
}

// Rebase replays the source branch onto the target's tip (who may push
// to the source branch) and moves the source branch with a
// compare-and-swap; the merge request follows.
func (s *Service) Rebase(ctx context.Context, a auth.Actor, projectRef string, iid int64) error {
	p, _, err := s.found(ctx, a, projectRef, auth.ReadMergeRequest)
	if err != nil {
		return err
	}
	m, err := s.load(ctx, p, iid)
	if err != nil {
		return err
	}
	if m.State != model.MRStateOpened {
		return notMergeable()
	}
	src := p
	if m.SourceProjectID != p.ID {
		if src, err = s.db.ProjectByID(ctx, m.SourceProjectID); err != nil {
			return ignoreNotFoundAs(err, model.Forbidden("Cannot push to source branch"))
		}
	}
	acc, err := s.projects.Access(ctx, a, src.ID)
	if err != nil {
		return err
	}
	rules, err := s.projects.ProtectedRules(ctx, src.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return err
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &src, Access: acc, Branch: &auth.Branch{Name: m.SourceBranch, Rules: rules}}) {
		return model.Forbidden("Cannot push to source branch")
	}
	end, err := s.projects.BeginWrite(ctx, &src)
	if err != nil {
		return err
	}
	defer end()
	if src.ID == p.ID {
		p.RepositoryStorage = src.RepositoryStorage
	}
	srcRepo, err := s.repo(src)
	if err != nil {
		return err
	}
	dstRepo, err := s.repo(p)
	if err != nil {
		return err
	}
	tip, err := branchTip(ctx, dstRepo, m.TargetBranch)
	if err != nil {
		return cannotMerge("Target branch does not exist")
	}
	head, err := branchTip(ctx, srcRepo, m.SourceBranch)
	if err != nil {
		return cannotMerge("Source branch does not exist")
	}
	if srcRepo != dstRepo {
		if err := fetchCommit(ctx, srcRepo, dstRepo, tip); err != nil {
			return err
		}
	}
	sig := gitrepo.Signature{Name: a.User.Name, Email: a.User.Email, When: s.now()}
	next, err := srcRepo.Rebase(ctx, tip, head, sig)
	if errors.Is(err, gitrepo.ErrMergeConflict) {
		return cannotMerge("Rebase failed: the branches conflict; resolve them locally")
	}
	if err != nil {
		return err
	}
	if next == head {
		return nil
	}
	if err := srcRepo.UpdateRef(ctx, "refs/heads/"+m.SourceBranch, next, head); err != nil {
		if errors.Is(err, gitrepo.ErrRefMoved) {
			return model.Conflict("409 Conflict: the source branch moved during the rebase; try again")
		}
		return err
	}
	return s.events.RefsChanged(ctx, model.RefsChanged{ProjectID: src.ID, ActorID: a.UserID(), Source: "merge_request", At: s.now(),
		Updates: []model.RefUpdate{{Ref: "refs/heads/" + m.SourceBranch, Old: string(head), New: string(next)}}})
}
