package mergerequests

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// view loads what a merge request's JSON shows: its projects, its people
// and (detail) what git decides of it, as stored when its tips moved
// (refresh). acc is the actor's access to target.
func (s *Service) view(ctx context.Context, a auth.Actor, target model.Project, acc model.AccessLevel, m model.MergeRequest, detail bool) (View, error) {
	return s.viewWith(ctx, a, target, acc, m, nil, detail)
}

// viewWith is view with the people of m already read (nil: read them).
func (s *Service) viewWith(ctx context.Context, a auth.Actor, target model.Project, acc model.AccessLevel, m model.MergeRequest,
	users map[int64]model.User, detail bool) (View, error) {
	v := View{MergeRequest: m, Target: target, Source: target, Users: users}
	if m.SourceProjectID != target.ID {
		src, err := s.db.ProjectByID(ctx, m.SourceProjectID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return v, err
		}
		v.Source = src
	}
	var err error
	if v.Users == nil {
		if v.Users, err = s.users(ctx, []model.MergeRequest{m}); err != nil {
			return v, err
		}
	}
	if !detail {
		return v, nil
	}
	if s.pipelines != nil && m.HeadSHA != "" {
		if v.HeadPipeline, err = s.pipelines.HeadPipeline(ctx, m.SourceProjectID, m.SourceBranch, m.HeadSHA); err != nil {
			return v, err
		}
	}
	if err := s.refresh(ctx, &v); err != nil {
		return v, err
	}
	v.ChangesCount = strconv.Itoa(v.ChangedFiles)
	var rules []model.ProtectedBranch
	if a.SignedIn() && m.State == model.MRStateOpened {
		if rules, err = s.projects.ProtectedRules(ctx, target.ID); err != nil && !errors.Is(err, model.ErrNotFound) {
			return v, err
		}
		v.CanMerge = auth.Can(a, auth.MergeCode, auth.Resource{Project: &target, Access: acc,
			Branch: &auth.Branch{Name: m.TargetBranch, Rules: rules}})
	}
	if err := s.blockers(ctx, &v); err != nil {
		return v, err
	}
	return v, nil
}

// users loads the people of merge requests (one query): what a user's
// summary shows, all a merge request renders of them.
func (s *Service) users(ctx context.Context, list []model.MergeRequest) (map[int64]model.User, error) {
	var ids []int64
	seen := map[int64]bool{0: true}
	for _, m := range list {
		for _, group := range [][]int64{{m.AuthorID, m.MergedByID, m.ClosedByID}, m.AssigneeIDs, m.ReviewerIDs} {
			for _, id := range group {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return s.db.UserBasicsByIDs(ctx, ids)
}

// tips reads the source's and the target's current tips ("" for a
// branch that is gone).
func (s *Service) tips(ctx context.Context, v *View) (source, target git.ObjectID, err error) {
	srcRepo, err := s.repo(v.Source)
	if err != nil {
		return "", "", err
	}
	dstRepo, err := s.repo(v.Target)
	if err != nil {
		return "", "", err
	}
	source, err = srcRepo.BranchTip(ctx, v.SourceBranch)
	if err != nil && !errors.Is(err, gitrepo.ErrRefNotFound) {
		return "", "", err
	}
	target, err = dstRepo.BranchTip(ctx, v.TargetBranch)
	if err != nil && !errors.Is(err, gitrepo.ErrRefNotFound) {
		return "", "", err
	}
	return source, target, nil
}

// refresh brings what git decides of a merge request up to date on v:
// an open one's merge check for its tips as they are now, and its changes
// count for its diff refs. What is stored for them (computed when the
// tips moved: OnRefsChanged) is used as it is; what is not is computed
// and stored by compare-and-set, so a request that finds nothing moved
// runs no git process.
func (s *Service) refresh(ctx context.Context, v *View) error {
	if err := s.refreshCheck(ctx, v); err != nil {
		return err
	}
	return s.refreshChanges(ctx, v)
}

// refreshCheck makes an open merge request's merge check the one of its
// tips as they are now: the stored one when it was made for them, else a
// new one, stored unless another writer stored one first. A writer that
// lost that race stores its check over the other one only while its tips
// are still the branches' (the other one's are older then; newer tips
// have their own writers: their refs-changed event, their readers).
func (s *Service) refreshCheck(ctx context.Context, v *View) error {
	if v.State != model.MRStateOpened {
		return nil
	}
	source, target, err := s.tips(ctx, v)
	if err != nil {
		return err
	}
	if checked(v.Check(), source, target) {
		return nil
	}
	c, err := s.check(ctx, v, source, target)
	if err != nil {
		return err
	}
	// v no longer shows the row as read at its version: not the entity
	// cache's to keep (the next read finds the stored check at a new one).
	v.EntityVersion = 0
	old := v.Check()
	for attempt := 0; ; attempt++ {
		var stored bool
		err := s.db.InTx(ctx, func(tx *store.Tx) (err error) {
			stored, err = tx.SetMergeCheck(ctx, v.ID, old, c)
			return err
		})
		if err != nil || stored {
			break
		}
		cur, err := s.db.MergeRequestByID(ctx, v.ID)
		if err != nil || cur.State != model.MRStateOpened || checked(cur.Check(), source, target) {
			break
		}
		s2, t2, err := s.tips(ctx, v)
		if err != nil || s2 != source || t2 != target {
			break
		}
		if attempt >= maxRetries {
			s.log.Warn("merge check: lost the race to store it", "merge_request_id", v.ID, "attempts", attempt+1)
			break
		}
		old = cur.Check()
	}
	v.SetCheck(c)
	return nil
}

// checked reports whether c is a check made for the tips source and
// target.
func checked(c model.MergeCheck, source, target git.ObjectID) bool {
	return c.Status != model.MergeUnchecked && c.Source == string(source) && c.Target == string(target)
}

// check merges source into target with merge-tree (no work tree): the
// merge status, conflicts, and whether the target is already in the
// source (a fast-forward).
func (s *Service) check(ctx context.Context, v *View, source, target git.ObjectID) (model.MergeCheck, error) {
	c := model.MergeCheck{Status: model.MergeCannotBeMerged, Source: string(source), Target: string(target)}
	if source == "" || target == "" {
		return c, nil
	}
	repo, err := s.repo(v.Target)
	if err != nil {
		return c, err
	}
	if v.Source.ID != v.Target.ID {
		srcRepo, err := s.repo(v.Source)
		if err != nil {
			return c, err
		}
		if err := fetchCommit(ctx, repo, srcRepo, source); err != nil {
			return c, err
		}
	}
	res, err := repo.MergeTree(ctx, target, source)
	switch {
	case errors.Is(err, gitrepo.ErrUnrelatedHistories):
		// Nothing in common: no merge git makes.
		return c, nil
	case err != nil:
		return c, err
	}
	c.Conflicts = len(res.Conflicts) > 0
	if !c.Conflicts {
		c.Status = model.MergeCanBeMerged
	}
	c.FastForward, err = repo.IsAncestor(ctx, target, source)
	return c, err
}

// refreshChanges makes a merge request's changes count the one of its
// diff refs: the stored one when counted for them, else counted (a
// diff-tree) and stored while they are still its diff refs.
func (s *Service) refreshChanges(ctx context.Context, v *View) error {
	if v.ChangesKnown() {
		return nil
	}
	n := 0
	if v.BaseSHA != "" && v.HeadSHA != "" && v.BaseSHA != v.HeadSHA {
		repo, err := s.repo(v.Target)
		if err != nil {
			return err
		}
		paths, err := repo.ChangedPaths(ctx, git.ObjectID(v.BaseSHA), git.ObjectID(v.HeadSHA))
		if err != nil {
			return err
		}
		n = len(paths)
	}
	// Not stored: the diff refs moved meanwhile, and the count of the
	// new ones is their writer's to store.
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SetChangesCount(ctx, v.ID, v.BaseSHA, v.HeadSHA, n)
		return err
	})
	v.ChangedFiles, v.ChangesBase, v.ChangesHead = n, v.BaseSHA, v.HeadSHA
	v.EntityVersion = 0 // as in refreshCheck
	return err
}

// Get returns a project's merge request with its merge status up to
// date.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef string, iid int64) (View, error) {
	p, acc, err := s.project(ctx, a, projectRef, auth.ReadMergeRequest)
	if err != nil {
		return View{}, err
	}
	m, users, err := s.db.MergeRequestWithPeople(ctx, p.ID, iid)
	if errors.Is(err, model.ErrNotFound) {
		return View{}, model.NotFound("Merge Request")
	}
	if err != nil {
		return View{}, err
	}
	return s.viewWith(ctx, a, p, acc, m, users, true)
}

// ListInput's AssigneeID and ReviewerID take a user's id or one of
// these.
const (
	NoOne  = store.FilterNone
	AnyOne = store.FilterAny
)

// ListInput filters a list.
type ListInput struct {
	store.MergeRequestFilter
	// Scope: created_by_me, assigned_to_me, reviews_for_me, all.
	Scope string
}

// List lists a project's merge requests (projectRef), a group's (and its
// subgroups') (groupRef), or, with neither, those of every project the
// actor reads.
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef, groupRef string, in ListInput, page model.Page) ([]View, model.PageInfo, error) {
	f := in.MergeRequestFilter
	switch in.Scope {
	case "created_by_me", "created-by-me":
		if !a.SignedIn() {
			return nil, model.PageInfo{}, model.Unauthorized("")
		}
		f.AuthorID = a.UserID()
	case "assigned_to_me", "assigned-to-me":
		if !a.SignedIn() {
			return nil, model.PageInfo{}, model.Unauthorized("")
		}
		f.AssigneeID = a.UserID()
	case "reviews_for_me":
		if !a.SignedIn() {
			return nil, model.PageInfo{}, model.Unauthorized("")
		}
		f.ReviewerID = a.UserID()
	}
	projects := map[int64]model.Project{}
	switch {
	case projectRef != "":
		p, _, err := s.project(ctx, a, projectRef, auth.ReadMergeRequest)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		f.ProjectIDs = []int64{p.ID}
		projects[p.ID] = p
	default:
		ids, err := s.readableProjects(ctx, a, groupRef)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		f.ProjectIDs = ids
	}
	list, users, info, err := s.db.MergeRequestsWithPeople(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	// The page's other projects (targets across projects, fork sources) in
	// one statement; a source project since deleted stays the zero value.
	var missing []int64
	for _, m := range list {
		for _, id := range []int64{m.TargetProjectID, m.SourceProjectID} {
			if _, ok := projects[id]; !ok && !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		}
	}
	if len(missing) > 0 {
		found, err := s.db.ProjectsByIDs(ctx, missing)
		if err != nil {
			return nil, info, err
		}
		maps.Copy(projects, found)
	}
	out := make([]View, len(list))
	for i, m := range list {
		out[i] = View{MergeRequest: m, Target: projects[m.TargetProjectID], Source: projects[m.SourceProjectID], Users: users}
	}
	return out, info, nil
}

// readableProjects lists the projects (of a group and its subgroups, or
// all) whose merge requests the actor reads.
func (s *Service) readableProjects(ctx context.Context, a auth.Actor, groupRef string) ([]int64, error) {
	var candidates []model.Project
	if groupRef != "" {
		g, _, err := s.groups.Resolve(ctx, a, groupRef)
		if err != nil {
			return nil, err
		}
		list, err := s.db.ProjectsUnderNamespace(ctx, g.Traversal)
		if err != nil {
			return nil, err
		}
		candidates = list
	} else {
		if !a.SignedIn() {
			return nil, model.Unauthorized("")
		}
		list, err := s.db.ProjectsWithMergeRequests(ctx)
		if err != nil {
			return nil, err
		}
		candidates = list
	}
	ids := []int64{}
	for _, p := range candidates {
		if p.PendingDelete {
			continue
		}
		acc, err := s.projects.Access(ctx, a, p.ID)
		if err != nil {
			return nil, err
		}
		if auth.Can(a, auth.ReadMergeRequest, auth.Resource{Project: &p, Access: acc}) {
			ids = append(ids, p.ID)
		}
	}
	return ids, nil
}

// maxCommits is how many commits of a merge request are listed at most
// (newest first).
const maxCommits = 1000

// Commits is one page of a merge request's commits (base..head, newest
// first, at most maxCommits in all): the ids are listed once, only the
// page's commits are read.
func (s *Service) Commits(ctx context.Context, a auth.Actor, projectRef string, iid int64, pg model.Page) (model.Project, []gitrepo.Commit, model.PageInfo, error) {
	p, _, err := s.project(ctx, a, projectRef, auth.ReadMergeRequest)
	if err != nil {
		return p, nil, model.PageInfo{}, err
	}
	m, err := s.load(ctx, p, iid)
	if err != nil {
		return p, nil, model.PageInfo{}, err
	}
	repo, err := s.repo(p)
	if err != nil {
		return p, nil, model.PageInfo{}, err
	}
	var ids []git.ObjectID
	if m.HeadSHA != "" && m.HeadSHA != m.BaseSHA {
		if ids, err = repo.Log(ctx, gitrepo.LogOptions{Rev: m.BaseSHA + ".." + m.HeadSHA, Max: maxCommits}); err != nil {
			return p, nil, model.PageInfo{}, err
		}
	}
	page, info := model.PageOf(ids, pg)
	out := make([]gitrepo.Commit, 0, len(page))
	for _, id := range page {
		c, err := repo.ReadCommit(ctx, string(id))
		if err != nil {
			return p, nil, model.PageInfo{}, err
		}
		out = append(out, c)
	}
	return p, out, info, nil
}

// Changes is a merge request with the files it changes (base..head).
type Changes struct {
	View
	Diffs    []gitrepo.FileDiff
	Overflow bool
}

// Changes returns a merge request's diffs, within GitLab's limits.
func (s *Service) Changes(ctx context.Context, a auth.Actor, projectRef string, iid int64) (Changes, error) {
	v, err := s.Get(ctx, a, projectRef, iid)
	if err != nil {
		return Changes{}, err
	}
	out := Changes{View: v, Diffs: []gitrepo.FileDiff{}}
	if v.BaseSHA == "" || v.HeadSHA == "" || v.BaseSHA == v.HeadSHA {
		return out, nil
	}
	repo, err := s.repo(v.Target)
	if err != nil {
		return out, err
	}
	lim, err := s.diffLimits(ctx)
	if err != nil {
		return out, err
	}
	out.Diffs, out.Overflow, err = repo.Diff(ctx, git.ObjectID(v.BaseSHA), git.ObjectID(v.HeadSHA), lim)
	return out, err
}

// Participants are the author, assignees, reviewers, merger and closer.
func (s *Service) Participants(ctx context.Context, a auth.Actor, projectRef string, iid int64) ([]model.User, error) {
	v, err := s.Get(ctx, a, projectRef, iid)
	if err != nil {
		return nil, err
	}
	var out []model.User
	seen := map[int64]bool{}
	ids := append([]int64{v.AuthorID}, v.AssigneeIDs...)
	ids = append(ids, v.ReviewerIDs...)
	ids = append(ids, v.MergedByID, v.ClosedByID)
	for _, id := range ids {
		if u, ok := v.Users[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, u)
		}
	}
	return out, nil
}

// blockers notes what keeps an open, mergeable merge request from merging
// (detailed_merge_status): it is not approved, its pipeline must succeed
// and has not, or the merge method wants it rebased.
func (s *Service) blockers(ctx context.Context, v *View) error {
	if v.State != model.MRStateOpened || v.MergeStatus != model.MergeCanBeMerged {
		return nil
	}
	if s.approvals != nil {
		ok, err := s.approvals.Approved(ctx, v.Target, v.MergeRequest)
		if err != nil {
			return err
		}
		v.NotApproved = !ok
	}
	if v.Target.Settings.OnlyAllowMergeIfPipelineSucceeds {
		pl := v.HeadPipeline
		skipOK := v.Target.Settings.AllowMergeOnSkippedPipeline != nil && *v.Target.Settings.AllowMergeOnSkippedPipeline
		v.CIMustPass = pl == nil || !(pl.Status == model.StatusSuccess || (pl.Status == model.StatusSkipped && skipOK))
	}
	if m := v.Target.Settings.MergeMethod; m == "ff" || m == "rebase_merge" {
		v.NeedRebase = !v.FastForward
	}
	return nil
}
