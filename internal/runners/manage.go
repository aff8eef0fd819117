package runners

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/store"
)

// The runners API users manage runners with (GitLab's doc/api/runners.md).
//
// Who may do what follows GitLab's runner policy. A runner's owner is the
// instance (administrators), its group (the group's owners) or its first
// project (that project's maintainers); owners may change, delete, reset
// and assign it. Besides them, any signed-in user may read an instance
// runner, a group's maintainers (and maintainers of a project inside the
// group) may read a group runner, and the maintainers of any project a
// project runner serves may read it — and, once it serves several
// projects, change and assign it. A runner the caller may not read is
// "404 Runner Not Found", exactly like one that does not exist; one the
// caller may read but not change is 403.

// View is a runner with what its JSON shows to one caller.
type View struct {
	model.Runner
	// CanUpdate is whether the caller may change the runner: its
	// maintenance note and address are shown only then.
	CanUpdate bool
	// Projects and Groups are, for the details, the runner's projects and
	// group that the caller belongs to (all of them for administrators).
	Projects []model.Project
	Groups   []model.Namespace
}

// ListFilter narrows a list of runners. Values are checked by the caller
// against the names below; Status also takes the deprecated "active" and
// "paused".
type ListFilter struct {
	Type   string
	Status string
	Paused *bool
	Tags   []string
	// Scope is the deprecated filter: a type (or "specific", "shared") or
	// a status.
	Scope string
}

// Statuses are the values of the status filter, the deprecated ones last.
var Statuses = []string{model.RunnerOnline, model.RunnerOffline, model.RunnerStale, model.RunnerNeverContacted, "active", "paused"}

// Scopes are the values of the deprecated scope filter.
var Scopes = append([]string{"specific", "shared", model.RunnerInstance, model.RunnerGroup, model.RunnerProject}, Statuses...)

// errScope is GitLab's answer to a scope a list does not take.
var errScope = model.BadRequestRaw("Scope contains invalid value")

// errNoAccess is GitLab's 403 for a runner the caller may read but not
// change.
var errNoAccess = model.Forbidden("No access granted")

// notFound is the answer for a runner that does not exist or that the
// caller may not read.
func notFound() error { return model.NotFound("Runner") }

func (s *Service) today() string { return s.now().UTC().Format(model.DateLayout) }

// levels are the caller's access to the projects and groups of some
// runners.
type levels struct {
	admin    bool
	projects map[int64]model.AccessLevel
	groups   map[int64]model.AccessLevel
}

// levelsFor reads the caller's access to everything the runners belong
// to, in two queries.
func (s *Service) levelsFor(ctx context.Context, a auth.Actor, runners ...model.Runner) (levels, error) {
	lv := levels{admin: a.Admin(), projects: map[int64]model.AccessLevel{}, groups: map[int64]model.AccessLevel{}}
	if !a.SignedIn() {
		return lv, nil
	}
	var pids, gids []int64
	for _, r := range runners {
		pids = append(pids, r.ProjectIDs...)
		if r.GroupID != 0 {
			gids = append(gids, r.GroupID)
		}
	}
	var err error
	if len(pids) > 0 {
		if lv.projects, err = s.db.ProjectAccessLevels(ctx, a.UserID(), pids, s.today()); err != nil {
			return lv, err
		}
	}
	if len(gids) > 0 {
		if lv.groups, err = s.db.NamespaceAccessLevels(ctx, a.UserID(), gids, s.today()); err != nil {
			return lv, err
		}
	}
	return lv, nil
}

// owns reports whether the caller owns r: an administrator, the owner
// of its group, a maintainer of its first project.
func (lv levels) owns(r *model.Runner) bool {
	switch {
	case lv.admin:
		return true
	case r.Type == model.RunnerGroup:
		return lv.groups[r.GroupID] >= model.Owner
	case r.Type == model.RunnerProject:
		return len(r.ProjectIDs) > 0 && lv.projects[r.ProjectIDs[0]] >= model.Maintainer
	}
	return false
}

// maintainsAny reports whether the caller maintains a project r serves.
func (lv levels) maintainsAny(r *model.Runner) bool {
	for _, id := range r.ProjectIDs {
		if lv.projects[id] >= model.Maintainer {
			return true
		}
	}
	return false
}

// shares reports whether r is a project runner serving several projects
// one of which the caller maintains: GitLab lets such a maintainer change
// and assign it like its owner.
func (lv levels) shares(r *model.Runner) bool {
	return r.Type == model.RunnerProject && len(r.ProjectIDs) > 1 && lv.maintainsAny(r)
}

func (lv levels) canUpdate(r *model.Runner) bool { return lv.owns(r) || lv.shares(r) }

// canReadJobs reports whether the caller may list r's jobs.
func (lv levels) canReadJobs(r *model.Runner) bool {
	return lv.owns(r) || lv.shares(r) || (r.Type == model.RunnerGroup && lv.groups[r.GroupID] >= model.Maintainer)
}

// canAssign reports whether the caller may enable r in (or disable it
// from) another project: never a locked runner unless an administrator.
func (lv levels) canAssign(r *model.Runner) bool {
	if r.Locked && !lv.admin {
		return false
	}
	return lv.owns(r) || lv.shares(r)
}

// readable loads a runner the caller may read, with the caller's levels;
// anything else is 404.
func (s *Service) readable(ctx context.Context, a auth.Actor, id int64) (model.Runner, levels, error) {
	r, err := s.db.Runner(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return r, levels{}, notFound()
	}
	if err != nil {
		return r, levels{}, err
	}
	lv, err := s.levelsFor(ctx, a, r)
	if err != nil {
		return r, lv, err
	}
	ok, err := s.canRead(ctx, a, &r, lv)
	if err != nil {
		return r, lv, err
	}
	if !ok {
		return r, lv, notFound()
	}
	return r, lv, nil
}

// canRead is GitLab's read_runner.
func (s *Service) canRead(ctx context.Context, a auth.Actor, r *model.Runner, lv levels) (bool, error) {
	switch {
	case !a.SignedIn():
		return false, nil
	case lv.owns(r), r.Type == model.RunnerInstance:
		return true, nil
	case r.Type == model.RunnerProject:
		return lv.maintainsAny(r), nil
	case r.Type == model.RunnerGroup:
		if lv.groups[r.GroupID] >= model.Maintainer {
			return true, nil
		}
		// A maintainer of a project inside the group, which the group's
		// runners serve.
		g, err := s.db.NamespaceByID(ctx, r.GroupID)
		if errors.Is(err, model.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return s.db.HasProjectAccessInTree(ctx, a.UserID(), g.Traversal, model.Maintainer, s.today())
	}
	return false, nil
}

// query turns a list filter into the store's, narrowed to scope; false
// when the filters contradict each other (the list is empty).
func (f ListFilter) query(scope store.RunnerFilter, now time.Time) (store.RunnerFilter, bool) {
	q := scope
	q.Now = now
	q.Tags = f.Tags
	ok := true
	types := func(ts ...string) {
		if q.Types == nil {
			q.Types = ts
			return
		}
		var both []string
		for _, t := range ts {
			if slices.Contains(q.Types, t) {
				both = append(both, t)
			}
		}
		q.Types, ok = both, ok && len(both) > 0
	}
	paused := func(v bool) {
		if q.Paused != nil && *q.Paused != v {
			ok = false
		}
		q.Paused = &v
	}
	status := func(st string) {
		switch st {
		case "active":
			paused(false)
		case "paused":
			paused(true)
		default:
			if q.Status != "" && q.Status != st {
				ok = false
			}
			q.Status = st
		}
	}
	switch f.Scope {
	case "":
	case "specific":
		types(model.RunnerGroup, model.RunnerProject)
	case "shared":
		types(model.RunnerInstance)
	case model.RunnerInstance, model.RunnerGroup, model.RunnerProject:
		types(f.Scope)
	default:
		status(f.Scope)
	}
	if f.Type != "" {
		types(f.Type)
	}
	if f.Status != "" {
		status(f.Status)
	}
	if f.Paused != nil {
		paused(*f.Paused)
	}
	if !ok {
		q.IDs = []int64{}
	}
	return q, ok
}

// list runs a filtered list and makes its views.
func (s *Service) list(ctx context.Context, a auth.Actor, f ListFilter, scope store.RunnerFilter, page model.Page) ([]View, model.PageInfo, error) {
	q, _ := f.query(scope, s.now())
	runners, info, err := s.db.Runners(ctx, q, page)
	if err != nil {
		return nil, info, err
	}
	lv, err := s.levelsFor(ctx, a, runners...)
	if err != nil {
		return nil, info, err
	}
	out := make([]View, len(runners))
	for i := range runners {
		out[i] = View{Runner: runners[i], CanUpdate: lv.canUpdate(&runners[i])}
	}
	return out, info, nil
}

// statusScope reports whether a scope is a status (the only scopes the
// list of owned runners takes).
func statusScope(scope string) bool { return scope == "" || slices.Contains(Statuses, scope) }

// ListOwned is GET /runners: the runners the caller owns — project
// runners of projects the caller maintains, group runners of groups the
// caller owns (administrators too see only these).
func (s *Service) ListOwned(ctx context.Context, a auth.Actor, f ListFilter, page model.Page) ([]View, model.PageInfo, error) {
	if !statusScope(f.Scope) {
		return nil, model.PageInfo{}, errScope
	}
	ids, err := s.db.OwnedRunnerIDs(ctx, a.UserID(), s.today())
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.list(ctx, a, f, store.RunnerFilter{IDs: ids}, page)
}

// ListAll is GET /runners/all, for administrators.
func (s *Service) ListAll(ctx context.Context, a auth.Actor, f ListFilter, page model.Page) ([]View, model.PageInfo, error) {
	if !a.Admin() {
		return nil, model.PageInfo{}, model.Forbidden("")
	}
	return s.list(ctx, a, f, store.RunnerFilter{}, page)
}

// traversalIDs reads the ids of a traversal ("1/5/9/").
func traversalIDs(t string) []int64 {
	var out []int64
	for _, part := range strings.Split(strings.TrimSuffix(t, "/"), "/") {
		if id, err := strconv.ParseInt(part, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// ListForProject is GET /projects/:id/runners, for the project's
// maintainers: its own runners, those of its groups and, when shared
// runners are enabled, the instance's.
func (s *Service) ListForProject(ctx context.Context, a auth.Actor, ref string, f ListFilter, page model.Page) ([]View, model.PageInfo, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if !a.Admin() && acc < model.Maintainer {
		return nil, model.PageInfo{}, model.Forbidden("")
	}
	scope := store.RunnerFilter{ProjectID: p.ID, IncludeShared: p.Settings.SharedRunnersEnabled}
	if p.Namespace.Kind == model.NamespaceGroup {
		scope.GroupIDs = traversalIDs(p.Namespace.Traversal)
	}
	return s.list(ctx, a, f, scope, page)
}

// ListForGroup is GET /groups/:id/runners, for the group's owners: the
// runners of the group and of the groups above it, and the instance's.
func (s *Service) ListForGroup(ctx context.Context, a auth.Actor, ref string, f ListFilter, page model.Page) ([]View, model.PageInfo, error) {
	g, acc, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if !a.Admin() && acc < model.Owner {
		return nil, model.PageInfo{}, model.Forbidden("")
	}
	f.Scope = "" // the group list takes no scope
	return s.list(ctx, a, f, store.RunnerFilter{GroupIDs: traversalIDs(g.Traversal), IncludeShared: true}, page)
}

// Get is GET /runners/:id: the runner's details.
func (s *Service) Get(ctx context.Context, a auth.Actor, id int64) (View, error) {
	r, lv, err := s.readable(ctx, a, id)
	if err != nil {
		return View{}, err
	}
	return s.details(ctx, r, lv)
}

// details adds to a runner the projects and group the caller belongs to.
func (s *Service) details(ctx context.Context, r model.Runner, lv levels) (View, error) {
	v := View{Runner: r, CanUpdate: lv.canUpdate(&r), Projects: []model.Project{}, Groups: []model.Namespace{}}
	if len(r.ProjectIDs) > 0 {
		projects, err := s.db.ProjectsByIDs(ctx, r.ProjectIDs)
		if err != nil {
			return v, err
		}
		for _, id := range r.ProjectIDs {
			if p, ok := projects[id]; ok && !p.PendingDelete && (lv.admin || lv.projects[id] > 0) {
				v.Projects = append(v.Projects, p)
			}
		}
	}
	if r.GroupID != 0 && (lv.admin || lv.groups[r.GroupID] > 0) {
		g, err := s.db.NamespaceByID(ctx, r.GroupID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return v, err
		}
		if err == nil {
			v.Groups = append(v.Groups, g)
		}
	}
	return v, nil
}

// UpdateInput is PUT /runners/:id: the attributes to change (nil: keep).
type UpdateInput struct {
	Description     *string
	MaintenanceNote *string
	Paused          *bool
	Locked          *bool
	RunUntagged     *bool
	TagList         *[]string
	AccessLevel     *string
	// MaximumTimeout in seconds; 0 removes the limit.
	MaximumTimeout *int
}

// maxNote bounds a maintenance note, as GitLab does.
const maxNote = 1024

// apply sets in's attributes on r and validates the result.
func (in UpdateInput) apply(r *model.Runner) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Description, in.Description)
	set(&r.MaintenanceNote, in.MaintenanceNote)
	set(&r.AccessLevel, in.AccessLevel)
	for _, b := range []struct {
		dst *bool
		v   *bool
	}{{&r.Paused, in.Paused}, {&r.Locked, in.Locked}, {&r.RunUntagged, in.RunUntagged}} {
		if b.v != nil {
			*b.dst = *b.v
		}
	}
	if in.TagList != nil {
		r.TagList = *in.TagList
	}
	if in.MaximumTimeout != nil {
		r.MaximumTimeout = *in.MaximumTimeout
	}
	check := RegisterInput{RunUntagged: &r.RunUntagged, TagList: r.TagList, AccessLevel: r.AccessLevel, MaximumTimeout: r.MaximumTimeout}
	if err := check.validate(); err != nil {
		return err
	}
	r.TagList, r.AccessLevel = check.TagList, check.AccessLevel
	if len([]rune(r.MaintenanceNote)) > maxNote {
		return model.Invalid("maintenance_note", "is too long (maximum is 1024 characters)")
	}
	return nil
}

// updateAttempts bounds the retries of an update that lost a race.
const updateAttempts = 10

// Update is PUT /runners/:id. The change is applied, in the writing
// transaction, to the runner as it is then; a write that another beat
// (the version moved) is applied again on top of the other's, never over
// it.
func (s *Service) Update(ctx context.Context, a auth.Actor, id int64, in UpdateInput) (View, error) {
	r, lv, err := s.readable(ctx, a, id)
	if err != nil {
		return View{}, err
	}
	if !lv.canUpdate(&r) {
		return View{}, errNoAccess
	}
	for range updateAttempts {
		var written bool
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.Runner(ctx, id)
			if errors.Is(err, model.ErrNotFound) {
				return notFound()
			}
			if err != nil {
				return err
			}
			if err := in.apply(&cur); err != nil {
				return err
			}
			if written, err = tx.UpdateRunner(ctx, &cur); written {
				r = cur
			}
			return err
		})
		if err != nil {
			return View{}, err
		}
		if written {
			return s.details(ctx, r, lv)
		}
	}
	return View{}, model.Conflict("")
}

// Delete is DELETE /runners/:id. Only an administrator may delete a
// project runner that serves several projects.
func (s *Service) Delete(ctx context.Context, a auth.Actor, id int64) error {
	r, lv, err := s.readable(ctx, a, id)
	if err != nil {
		return err
	}
	if !lv.admin && len(r.ProjectIDs) > 1 {
		return model.Forbidden("Runner associated with more than one project")
	}
	if !lv.owns(&r) {
		return errNoAccess
	}
	s.forget(r.ID)
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteRunner(ctx, r.ID)
		if err == nil && !ok {
			return notFound()
		}
		return err
	})
}

// JobFilter narrows GET /runners/:id/jobs.
type JobFilter struct {
	Status model.CIStatus
	// OrderBy is "id" or "" (GitLab orders by id ascending unless asked);
	// Sort is "asc" or "desc" (the default with OrderBy).
	OrderBy string
	Sort    string
}

// Jobs is GET /runners/:id/jobs: the jobs the runner ran or runs, in
// the projects where the caller is at least Reporter (all of them for
// administrators).
func (s *Service) Jobs(ctx context.Context, a auth.Actor, id int64, f JobFilter, page model.Page) ([]ci.ProjectJobView, model.PageInfo, error) {
	r, lv, err := s.readable(ctx, a, id)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if !lv.canReadJobs(&r) {
		return nil, model.PageInfo{}, errNoAccess
	}
	q := store.RunnerJobFilter{RunnerID: r.ID, Desc: f.OrderBy == "id" && f.Sort != "asc", Today: s.today()}
	if f.Status != "" {
		q.Statuses = []model.CIStatus{f.Status}
	}
	if !lv.admin {
		q.ViewerID = a.UserID()
	}
	jobs, info, err := s.db.RunnerJobsFor(ctx, q, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.ci.ProjectJobViews(ctx, jobs)
	return views, info, err
}

// ResetTokenOf is POST /runners/:id/reset_authentication_token: the new
// token, shown once, and its expiry.
func (s *Service) ResetTokenOf(ctx context.Context, a auth.Actor, id int64) (string, *time.Time, error) {
	r, lv, err := s.readable(ctx, a, id)
	if err != nil {
		return "", nil, err
	}
	if !lv.canUpdate(&r) {
		return "", nil, errNoAccess
	}
	secret, err := s.ResetToken(ctx, r)
	return secret, nil, err
}

// EnableInProject is POST /projects/:id/runners: a project runner serves
// one more project. The caller maintains the project and may assign the
// runner (owns it, or maintains one of its projects once it serves
// several); a locked runner stays where it is, unless an administrator
// moves it.
func (s *Service) EnableInProject(ctx context.Context, a auth.Actor, ref string, runnerID int64) (View, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return View{}, err
	}
	if !a.Admin() && acc < model.Maintainer {
		return View{}, model.Forbidden("")
	}
	r, lv, err := s.readable(ctx, a, runnerID)
	if err != nil {
		return View{}, err
	}
	switch r.Type {
	case model.RunnerGroup:
		return View{}, model.Forbidden("Runner is a group runner")
	case model.RunnerInstance:
		return View{}, model.Forbidden("Runner is an instance runner")
	}
	if !lv.admin && r.Locked {
		return View{}, model.Forbidden("Runner is locked")
	}
	if !lv.canAssign(&r) {
		return View{}, errNoAccess
	}
	var added bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		added, err = tx.AddRunnerProject(ctx, r.ID, p.ID)
		return err
	})
	if err != nil {
		return View{}, err
	}
	if !added {
		return View{}, model.Invalid("assign_to", "Validation failed: Runner has already been taken")
	}
	r.ProjectIDs = append(r.ProjectIDs, p.ID)
	lv.projects[p.ID] = max(lv.projects[p.ID], acc)
	return View{Runner: r, CanUpdate: lv.canUpdate(&r)}, nil
}

// errOnlyProject refuses to take a runner from its owner project.
var errOnlyProject = model.Forbidden("Only one project associated with the runner. Please remove the runner instead")

// DisableInProject is DELETE /projects/:id/runners/:runner_id: the runner
// stops serving the project. Its owner (first) project keeps it: a
// runner is deleted, not taken from its owner.
func (s *Service) DisableInProject(ctx context.Context, a auth.Actor, ref string, runnerID int64) error {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if !a.Admin() && acc < model.Maintainer {
		return model.Forbidden("")
	}
	r, err := s.db.Runner(ctx, runnerID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !slices.Contains(r.ProjectIDs, p.ID)) {
		return notFound()
	}
	if err != nil {
		return err
	}
	if !a.Admin() && r.Locked {
		return model.Forbidden("User not allowed to assign runner")
	}
	if len(r.ProjectIDs) == 1 || r.ProjectIDs[0] == p.ID {
		return errOnlyProject
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.RemoveRunnerProject(ctx, r.ID, p.ID)
		if err == nil && !ok {
			return notFound()
		}
		return err
	})
}
