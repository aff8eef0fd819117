// Package mergerequests holds merge requests: opening one from a branch of
// the project or of a fork, listing and reading them with their merge
// status computed from the repository, editing, closing and reopening,
// their commits and changes, following pushes to their branches, and
// deleting them.
//
// The merge status is a cache of git: it is recorded with the two tips it
// was computed at (merge-tree of the target's tip and the source's), and
// computed again when either tip moved.
package mergerequests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
	// UsersWhoCan keeps of ids the users who may do action on p.
	UsersWhoCan(ctx context.Context, p model.Project, action auth.Action, ids []int64) ([]int64, error)
	ProtectedRules(ctx context.Context, projectID int64) ([]model.ProtectedBranch, error)
	// BeginWrite registers a write to the project's repository (refused
	// with model.ErrRepositoryReadOnly while a storage move holds it) and
	// sets p's storage to where it is now; end ends it.
	BeginWrite(ctx context.Context, p *model.Project) (end func(), err error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// RefsEvents receives the refs-changed event of a merge (the event bus),
// in a transaction of its own or in the caller's.
type RefsEvents interface {
	RefsChanged(ctx context.Context, e model.RefsChanged) error
	EmitRefsChanged(ctx context.Context, tx *store.Tx, e model.RefsChanged) error
}

// Approvals is what merging asks of approvals (the approvals service):
// whether a merge request is approved, and what follows a push to its
// source branch.
type Approvals interface {
	Approved(ctx context.Context, p model.Project, m model.MergeRequest) (bool, error)
	HeadMoved(ctx context.Context, p model.Project, m model.MergeRequest) error
}

// Pipelines runs and finds merge request pipelines (the CI engine).
type Pipelines interface {
	MergeRequestPipeline(ctx context.Context, m model.MergeRequest, userID int64) (model.Pipeline, bool, error)
	HeadPipeline(ctx context.Context, projectID int64, branch, sha string) (*model.Pipeline, error)
}

// Service is the merge requests service.
type Service struct {
	db        *store.DB
	projects  Projects
	groups    Groups
	storages  *gitrepo.Storages
	events    RefsEvents
	log       *slog.Logger
	approvals Approvals
	pipelines Pipelines
	settings  Settings
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings makes diffs follow the instance's diff_max_* settings
// (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// diffLimits are the instance's diff limits.
func (s *Service) diffLimits(ctx context.Context) (gitrepo.DiffLimits, error) {
	if s.settings == nil {
		return gitrepo.DefaultDiffLimits, nil
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return gitrepo.DiffLimits{}, err
	}
	return gitrepo.InstanceDiffLimits(st.DiffMaxFiles, st.DiffMaxLines, st.DiffMaxPatchBytes), nil
}

// SetPipelines installs the CI engine merge requests run pipelines on.
func (s *Service) SetPipelines(p Pipelines) { s.pipelines = p }

// runPipeline runs a merge request's pipeline at its head; a failure is
// logged (the merge request stands without it).
func (s *Service) runPipeline(ctx context.Context, m model.MergeRequest, userID int64) {
	if s.pipelines == nil {
		return
	}
	if _, _, err := s.pipelines.MergeRequestPipeline(ctx, m, userID); err != nil {
		s.log.Warn("merge request pipeline", "merge_request_id", m.ID, "err", err)
	}
}

// SetApprovals installs the approvals a merge waits for.
func (s *Service) SetApprovals(a Approvals) { s.approvals = a }

// New returns the service and registers its background tasks on queue.
func New(db *store.DB, projects Projects, groups Groups, storages *gitrepo.Storages, queue *tasks.Queue, events RefsEvents, log *slog.Logger) *Service {
	s := &Service{db: db, projects: projects, groups: groups, storages: storages, events: events, log: log}
	tasks.Handle(queue, recoverTask, s.runRecover, nil)
	return s
}

func (s *Service) now() time.Time { return s.db.Now() }

func (s *Service) repo(p model.Project) (*gitrepo.Repo, error) {
	return s.storages.Open(p.RepositoryStorage, p.DiskPath)
}

// fetchCommit brings commit (and its history) from src into repo. Two
// fetches into one repository at once (a read computing a fork's merge
// status while the push follow-up fetches the same head) make one fail on
// the commit-graph lock git takes after the objects arrived: what counts
// is the commit being there.
func fetchCommit(ctx context.Context, repo, src *gitrepo.Repo, commit git.ObjectID) error {
	err := repo.FetchCommit(ctx, src, commit)
	for attempt := 0; err != nil && attempt < 2 && ctx.Err() == nil; attempt++ {
		if _, cerr := repo.CommitID(ctx, string(commit)); cerr == nil {
			return nil
		}
		err = repo.FetchCommit(ctx, src, commit)
	}
	return err
}

// branchTip is a branch's tip, gitrepo.ErrRefNotFound when the branch
// does not exist (Repo.BranchTip answers "" and no error then).
func branchTip(ctx context.Context, repo *gitrepo.Repo, branch string) (git.ObjectID, error) {
	id, err := repo.BranchTip(ctx, branch)
	if err == nil && id == "" {
		return "", gitrepo.ErrRefNotFound
	}
	return id, err
}

// View is a merge request with what its JSON shows besides its row.
type View struct {
	model.MergeRequest
	Target, Source model.Project
	Users          map[int64]model.User // author, assignees, reviewers, merger, closer
	// ChangesCount is how many files the merge request changes ("" when
	// not computed, as in lists).
	ChangesCount string
	// CanMerge is whether the viewer may merge it (user.can_merge).
	CanMerge bool
	// HeadPipeline is the newest pipeline of its source branch at its
	// head (detail only).
	HeadPipeline *model.Pipeline
	// What keeps an open, mergeable merge request from merging (detail
	// only): approvals, its pipeline, a rebase the merge method wants.
	NotApproved, CIMustPass, NeedRebase bool
}

// project resolves a project and checks action on it; a project the
// actor cannot see is 404, other refusals 403 — its merge requests closed
// to the actor too (GitLab's list, merge request reads and writes
// authorize read_merge_request and the action on a project found).
func (s *Service) project(ctx context.Context, a auth.Actor, ref string, action auth.Action) (model.Project, model.AccessLevel, error) {
	return s.resolve(ctx, a, ref, action, model.Forbidden(""))
}

// found is project for the calls that look the merge request up among
// those the actor reads (GitLab's find_project_merge_request, through
// MergeRequestsFinder: merge, rebase, delete): merge requests closed to
// the actor are not found there.
func (s *Service) found(ctx context.Context, a auth.Actor, ref string, action auth.Action) (model.Project, model.AccessLevel, error) {
	return s.resolve(ctx, a, ref, action, model.NotFound(""))
}

// resolve is project and found: closed is the answer when the actor does
// not read the project's merge requests.
func (s *Service) resolve(ctx context.Context, a auth.Actor, ref string, action auth.Action, closed error) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, acc, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	if !auth.Can(a, auth.ReadMergeRequest, res) {
		return p, acc, closed
	}
	if action != auth.ReadMergeRequest && !auth.Can(a, action, res) {
		return p, acc, model.Forbidden("")
	}
	return p, acc, nil
}

// load reads a project's merge request by iid (404 Merge Request Not
// Found).
func (s *Service) load(ctx context.Context, p model.Project, iid int64) (model.MergeRequest, error) {
	m, err := s.db.MergeRequest(ctx, p.ID, iid)
	if errors.Is(err, model.ErrNotFound) {
		return m, model.NotFound("Merge Request")
	}
	return m, err
}

// CreateInput opens a merge request.
type CreateInput struct {
	SourceBranch, TargetBranch, Title string
	Description                       string
	TargetProjectID                   int64 // 0: the source project
	AssigneeIDs, ReviewerIDs          []int64
	Labels                            []string
	RemoveSourceBranch, Squash        *bool
}

// validationError is GitLab's branch validation answer: a list of
// messages under "message".
func validationError(status model.Kind, msg string) error {
	return &model.Error{Kind: status, Message: msg, Raw: true, List: true}
}

// Create opens a merge request from a branch of the project sourceRef
// (developers up) into a branch of it or of its upstream (whose merge
// requests the actor reads).
func (s *Service) Create(ctx context.Context, a auth.Actor, sourceRef string, in CreateInput) (View, error) {
	src, srcAcc, err := s.projects.Resolve(ctx, a, sourceRef)
	if err != nil {
		return View{}, err
	}
	if !auth.Can(a, auth.PushCode, auth.Resource{Project: &src, Access: srcAcc, Branch: &auth.Branch{Name: in.SourceBranch}}) &&
		!(a.Admin() || srcAcc >= model.Developer) {
		return View{}, model.Forbidden("")
	}
	dst, dstAcc := src, srcAcc
	if in.TargetProjectID != 0 && in.TargetProjectID != src.ID {
		dst, dstAcc, err = s.project(ctx, a, fmt.Sprint(in.TargetProjectID), auth.CreateMergeRequestIn)
		if err != nil {
			return View{}, err
		}
		if !forkOf(src, dst) {
			return View{}, validationError(model.KindUnprocessable, "Source project is not a fork of the target project")
		}
	} else if _, _, err := s.project(ctx, a, sourceRef, auth.CreateMergeRequestIn); err != nil {
		return View{}, err
	}
	if strings.TrimSpace(in.Title) == "" {
		return View{}, model.Invalid("title", "can't be blank")
	}
	if src.ID == dst.ID && in.SourceBranch == in.TargetBranch {
		return View{}, validationError(model.KindConflict, "You can't use same project/branch for source and target")
	}
	srcRepo, err := s.repo(src)
	if err != nil {
		return View{}, err
	}
	dstRepo, err := s.repo(dst)
	if err != nil {
		return View{}, err
	}
	head, err := branchTip(ctx, srcRepo, in.SourceBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return View{}, validationError(model.KindUnprocessable, "Source branch \""+in.SourceBranch+"\" does not exist")
	}
	if err != nil {
		return View{}, err
	}
	tip, err := branchTip(ctx, dstRepo, in.TargetBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return View{}, validationError(model.KindUnprocessable, "Target branch \""+in.TargetBranch+"\" does not exist")
	}
	if err != nil {
		return View{}, err
	}
	if existing, err := s.db.OpenMergeRequestFrom(ctx, src.ID, in.SourceBranch, dst.ID, in.TargetBranch); err == nil {
		return View{}, validationError(model.KindConflict, fmt.Sprintf("Another open merge request already exists for this source branch: !%d", existing.IID))
	} else if !errors.Is(err, model.ErrNotFound) {
		return View{}, err
	}
	if dstRepo != srcRepo {
		if err := fetchCommit(ctx, dstRepo, srcRepo, head); err != nil {
			return View{}, err
		}
	}
	m := model.MergeRequest{TargetProjectID: dst.ID, SourceProjectID: src.ID, SourceBranch: in.SourceBranch, TargetBranch: in.TargetBranch,
		Title: strings.TrimSpace(in.Title), Description: in.Description, State: model.MRStateOpened, AuthorID: a.UserID(),
		Labels: model.CleanList(in.Labels), MergeStatus: model.MergeUnchecked}
	if in.RemoveSourceBranch != nil {
		m.RemoveSourceBranch = *in.RemoveSourceBranch
	}
	switch dst.Settings.SquashOption {
	case "always":
		m.Squash = true
	case "never":
	default:
		m.Squash = dst.Settings.SquashOption == "default_on"
		if in.Squash != nil {
			m.Squash = *in.Squash
		}
	}
	if m.AssigneeIDs, err = s.people(ctx, dst, in.AssigneeIDs); err != nil {
		return View{}, err
	}
	if m.ReviewerIDs, err = s.people(ctx, dst, in.ReviewerIDs); err != nil {
		return View{}, err
	}
	if err := s.setDiffRefs(ctx, dstRepo, &m, head, tip); err != nil {
		return View{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateMergeRequest(ctx, &m); err != nil {
			return err
		}
		return tx.AddMergeRequestEvent(ctx, m.ID, a.UserID(), model.EventCreated)
	})
	if err != nil {
		return View{}, err
	}
	if err := setRef(ctx, dstRepo, model.MRHeadRef(m.IID), head); err != nil {
		s.log.Warn("write merge request ref", "project_id", dst.ID, "iid", m.IID, "err", err)
	}
	s.runPipeline(ctx, m, a.UserID())
	return s.view(ctx, a, dst, dstAcc, m, true)
}

// forkOf reports whether src is a fork of dst.
func forkOf(src, dst model.Project) bool {
	return src.ForkedFromID != nil && *src.ForkedFromID == dst.ID
}

// setDiffRefs records the source's tip and its merge base with the
// target's tip.
func (s *Service) setDiffRefs(ctx context.Context, repo *gitrepo.Repo, m *model.MergeRequest, head, tip git.ObjectID) error {
	base, ok, err := repo.MergeBase(ctx, string(tip), string(head))
	if err != nil {
		return err
	}
	if !ok {
		base = tip
	}
	m.HeadSHA, m.BaseSHA, m.StartSHA = string(head), string(base), string(tip)
	return nil
}

// people keeps the users (assignees, reviewers) who exist and may read
// the project's merge requests, in order, once each.
func (s *Service) people(ctx context.Context, p model.Project, ids []int64) ([]int64, error) {
	return s.projects.UsersWhoCan(ctx, p, auth.ReadMergeRequest, ids)
}
