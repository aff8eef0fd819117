package projects

import (
	"context"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// View is a project with everything its entity shows to one actor.
type View struct {
	Project       model.Project
	Access        model.AccessLevel // effective
	ProjectAccess model.AccessLevel // direct project membership (0: none)
	GroupAccess   model.AccessLevel // membership in the group hierarchy (0: none)
	GroupMember   bool
	CanReadCode   bool
	CanAdmin      bool // maintainer view: CI settings, runners token
	CanOwn        bool
	Topics        []string
	SharedWith    []model.GroupLink
	ForkedFrom    *model.Project // when the actor may see the source
	Owner         *model.User    // personal projects: what a user summary shows (UserBasicsByIDs)
	Statistics    *model.ProjectStatistics
}

// Views loads what the entities of projects need, in a few queries for
// the whole list.
func (s *Service) Views(ctx context.Context, a auth.Actor, ps []model.Project, withStats bool) ([]View, error) {
	return s.views(ctx, a, ps, nil, withStats)
}

// View is Views for one project whose access the caller has resolved.
func (s *Service) View(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, withStats bool) (View, error) {
	vs, err := s.views(ctx, a, []model.Project{p}, map[int64]model.AccessLevel{p.ID: acc}, withStats)
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// ViewsWithoutTopics is Views (or View, with access resolved for the
// one project) leaving the topics out, for a caller that loads them only
// for the views it renders (LoadTopics): the entity cache's misses.
func (s *Service) ViewsWithoutTopics(ctx context.Context, a auth.Actor, ps []model.Project, access map[int64]model.AccessLevel, withStats bool) ([]View, error) {
	return s.viewsWith(ctx, a, ps, access, withStats, false)
}

// LoadTopics loads the topics of views, in one query.
func (s *Service) LoadTopics(ctx context.Context, vs []*View) error {
	ids := make([]int64, len(vs))
	for i, v := range vs {
		ids[i] = v.Project.ID
	}
	topics, err := s.db.TopicsOf(ctx, ids)
	if err != nil {
		return err
	}
	for _, v := range vs {
		v.Topics = topics[v.Project.ID]
	}
	return nil
}

func (s *Service) views(ctx context.Context, a auth.Actor, ps []model.Project, access map[int64]model.AccessLevel, withStats bool) ([]View, error) {
	return s.viewsWith(ctx, a, ps, access, withStats, true)
}

func (s *Service) viewsWith(ctx context.Context, a auth.Actor, ps []model.Project, access map[int64]model.AccessLevel, withStats, withTopics bool) ([]View, error) {
	ids := make([]int64, len(ps))
	var nsIDs, forkIDs, ownerIDs []int64
	for i, p := range ps {
		ids[i] = p.ID
		if p.Namespace.Kind == model.NamespaceGroup {
			nsIDs = append(nsIDs, p.NamespaceID)
		}
		if p.ForkedFromID != nil {
			forkIDs = append(forkIDs, *p.ForkedFromID)
		}
		if p.Namespace.Kind == model.NamespaceUser {
			ownerIDs = append(ownerIDs, p.Namespace.OwnerID)
		}
	}
	today := s.today()
	var err error
	if access == nil {
		if access, err = s.db.ProjectAccessLevels(ctx, a.UserID(), ids, today); err != nil {
			return nil, err
		}
	}
	direct, err := s.db.MemberLevels(ctx, model.SourceProject, ids, a.UserID(), today)
	if err != nil {
		return nil, err
	}
	groupAcc, err := s.db.GroupMembershipLevels(ctx, a.UserID(), nsIDs, today)
	if err != nil {
		return nil, err
	}
	var topics map[int64][]string
	if withTopics {
		if topics, err = s.db.TopicsOf(ctx, ids); err != nil {
			return nil, err
		}
	}
	links, err := s.db.GroupLinksOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	sources, srcAccess, err := s.forkSources(ctx, a, forkIDs)
	if err != nil {
		return nil, err
	}
	owners, err := s.db.UserBasicsByIDs(ctx, ownerIDs)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(ps))
	for i := range ps {
		p := &ps[i]
		var owner *model.User
		if o, ok := owners[p.Namespace.OwnerID]; ok && p.Namespace.Kind == model.NamespaceUser {
			owner = &o
		}
		var group model.AccessLevel
		if p.Namespace.Kind == model.NamespaceGroup {
			group = groupAcc[p.NamespaceID]
		}
		out[i] = newView(a, p, access[p.ID], direct[p.ID], group, links[p.ID], sources, srcAccess, owner, withStats)
		out[i].Topics = topics[p.ID]
	}
	return out, nil
}

// forkSources reads the projects forks were made from, with the actor's
// access to them.
func (s *Service) forkSources(ctx context.Context, a auth.Actor, forkIDs []int64) (map[int64]model.Project, map[int64]model.AccessLevel, error) {
	if len(forkIDs) == 0 {
		return nil, nil, nil
	}
	sources, err := s.db.ProjectsByIDs(ctx, forkIDs)
	if err != nil {
		return nil, nil, err
	}
	srcIDs := make([]int64, 0, len(sources))
	for id := range sources {
		srcIDs = append(srcIDs, id)
	}
	srcAccess, err := s.db.ProjectAccessLevels(ctx, a.UserID(), srcIDs, s.today())
	return sources, srcAccess, err
}

// newView is the view of p for a from what was read: the actor's levels
// (group: in the project's group hierarchy, 0 for none or a personal
// project), the group links, the fork sources and the owner's summary.
func newView(a auth.Actor, p *model.Project, acc, direct, group model.AccessLevel, links []model.GroupLink,
	sources map[int64]model.Project, srcAccess map[int64]model.AccessLevel, owner *model.User, withStats bool) View {
	v := View{Project: *p}
	v.fill(a, acc, direct, group, links, sources, srcAccess, owner, withStats)
	return v
}

// fill is newView on a view that holds its project only.
func (v *View) fill(a auth.Actor, acc, direct, group model.AccessLevel, links []model.GroupLink,
	sources map[int64]model.Project, srcAccess map[int64]model.AccessLevel, owner *model.User, withStats bool) {
	p := &v.Project
	v.Access, v.ProjectAccess, v.SharedWith = acc, direct, links
	if group > 0 {
		v.GroupAccess, v.GroupMember = group, true
	}
	v.CanReadCode = can(a, auth.ReadCode, p, acc)
	v.CanAdmin = can(a, auth.UpdateProject, p, acc)
	v.CanOwn = can(a, auth.OwnProject, p, acc)
	if p.ForkedFromID != nil {
		if src, ok := sources[*p.ForkedFromID]; ok && !src.PendingDelete && can(a, auth.ReadProject, &src, srcAccess[src.ID]) {
			v.ForkedFrom = &src
		}
	}
	v.Owner = owner
	if withStats && can(a, auth.ReadProjectStats, p, acc) {
		v.Statistics = &model.ProjectStatistics{CommitCount: p.CommitCount, RepositorySize: p.RepositorySize,
			WikiSize: p.WikiSize, StorageSize: p.RepositorySize + p.WikiSize}
	}
}

// ListInput are the filters of the project lists.
type ListInput struct {
	store.ProjectFilter
	// UserRef lists the personal projects of a user (id or username).
	UserRef string
}

// OffsetLimit caps offset pagination of project lists.
const OffsetLimit = 50000

// List returns one page of the projects the actor may see.
func (s *Service) List(ctx context.Context, a auth.Actor, in ListInput, page model.Page) ([]model.Project, model.PageInfo, error) {
	f, err := s.listFilter(ctx, a, in, page)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListProjects(ctx, f, page)
}

// listFilter is the store's filter of a project list for a.
func (s *Service) listFilter(ctx context.Context, a auth.Actor, in ListInput, page model.Page) (store.ProjectFilter, error) {
	f := in.ProjectFilter
	f.Viewer = store.Viewer{UserID: a.UserID(), Admin: a.Admin(), Today: s.today()}
	if a.User != nil {
		f.Viewer.External = a.User.External
	}
	if !page.Keyset && page.Number*page.PerPage > OffsetLimit {
		return f, &model.Error{Kind: model.KindMethodNotAllowed, Message: "Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. Remaining records can be retrieved using keyset pagination."}
	}
	if !a.SignedIn() {
		f.Owned, f.Membership, f.Starred, f.MinAccessLevel = false, false, false, 0
	}
	if !a.Admin() {
		f.RepositoryStorage = ""
		f.CustomAttributes = nil
		switch f.OrderBy {
		case "repository_size", "storage_size", "packages_size", "wiki_size":
			f.OrderBy = "created_at"
		}
	}
	if in.UserRef != "" {
		u, err := s.userByRef(ctx, in.UserRef)
		if err != nil {
			return f, err
		}
		f.UserNamespaceID = u.NamespaceID
	}
	return f, nil
}

func (s *Service) userByRef(ctx context.Context, ref string) (model.User, error) {
	u, err := s.db.UserByRef(ctx, ref)
	return u, model.NotFoundAs(err, "User")
}

// Forks lists the forks of a project that the actor may see.
func (s *Service) Forks(ctx context.Context, a auth.Actor, ref string, in ListInput, page model.Page) ([]model.Project, model.PageInfo, error) {
	p, _, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	in.ForkedFromID = p.ID
	return s.List(ctx, a, in, page)
}

// Languages returns a project's language shares (percent).
func (s *Service) Languages(ctx context.Context, a auth.Actor, ref string) (map[string]float64, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return nil, err
	}
	if !can(a, auth.ReadCode, &p, acc) {
		return nil, model.Forbidden("")
	}
	return s.db.ProjectLanguages(ctx, p.ID)
}

// GroupResolver finds a group the actor may read (the groups service).
type GroupResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// SetGroupResolver wires the groups service in (composition root).
func (s *Service) SetGroupResolver(g GroupResolver) { s.groups = g }

// GroupProjectsInput selects a group's projects.
type GroupProjectsInput struct {
	ListInput
	IncludeSubgroups bool
	WithShared       bool
	OnlyShared       bool
}

// GroupProjects lists the projects of a group (with subgroups, with or only
// the projects shared with it) that the actor may see.
func (s *Service) GroupProjects(ctx context.Context, a auth.Actor, ref string, in GroupProjectsInput, page model.Page) ([]model.Project, model.PageInfo, error) {
	g, _, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	f := &in.ListInput.ProjectFilter
	switch {
	case in.OnlyShared:
		f.SharedWithGroup = g.ID
	case in.IncludeSubgroups:
		f.NamespaceID, f.IncludeSubtree, f.WithShared = g.ID, g.Traversal, in.WithShared
	default:
		f.NamespaceID, f.WithShared = g.ID, in.WithShared
	}
	if f.OrderBy == "similarity" && f.Search == "" {
		f.OrderBy, f.Desc = "name", false
	}
	return s.List(ctx, a, in.ListInput, page)
}

// StarredBy lists the projects a user starred that the actor may see.
func (s *Service) StarredBy(ctx context.Context, a auth.Actor, userRef string, in ListInput, page model.Page) ([]model.Project, model.PageInfo, error) {
	u, err := s.userByRef(ctx, userRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if u.PrivateProfile && !a.Admin() && !a.Is(u.ID) {
		return nil, model.PageInfo{}, model.NotFound("User")
	}
	in.StarredBy = u.ID
	return s.List(ctx, a, in, page)
}

// FirstGroupProject is the project GitLab renders a group's badges with
// on the group's own badge list (API::Helpers::BadgesHelpers: the first of
// GroupProjectsFinder, whose default order is newest first): the newest
// project of the group, or shared with it, that the actor may see; ok
// false when there is none.
func (s *Service) FirstGroupProject(ctx context.Context, a auth.Actor, groupID int64) (model.Project, bool, error) {
	in := ListInput{ProjectFilter: store.ProjectFilter{NamespaceID: groupID, WithShared: true, OrderBy: "id", Desc: true}}
	list, _, err := s.List(ctx, a, in, model.Page{Number: 1, PerPage: 1})
	if err != nil || len(list) == 0 {
		return model.Project{}, false, err
	}
	return list[0], true, nil
}
