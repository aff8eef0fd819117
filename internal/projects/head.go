package projects

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Rows keeps decoded rows by the versions the database moves on every
// write to them (the entity cache): a project's row with its namespace,
// a user's summary.
type Rows interface {
	Project(id int64, created time.Time, version, nsID, nsVersion int64) (model.Project, bool)
	PutProject(p *model.Project)
	UserBasic(id int64, created time.Time, version int64) (model.User, bool)
	PutUserBasic(u *model.User)
}

// ResolveView is Resolve and ViewsWithoutTopics of the one project (a
// page of one view, as the entity renderer takes it) for a signed-in
// caller (not a CI job), reading its head (store.ProjectHead: versions
// and the caller's levels, one statement) and taking the wide
// row, the owner's summary and the group links from rows when their
// versions match, else reading them (and keeping the rows). What the
// caller is allowed is always decided on what the head just read.
func (s *Service) ResolveView(ctx context.Context, a auth.Actor, ref string, rows Rows) ([]View, error) {
	if !a.SignedIn() || a.Job != nil {
		p, acc, err := s.Resolve(ctx, a, ref)
		if err != nil {
			return nil, err
		}
		return s.ViewsWithoutTopics(ctx, a, []model.Project{p}, map[int64]model.AccessLevel{p.ID: acc}, false)
	}
	h, err := s.head(ctx, ref, a.UserID())
	if errors.Is(err, model.ErrNotFound) {
		return nil, model.NotFound("Project")
	}
	if err != nil {
		return nil, err
	}
	// The project is read into its view in place: a project's row is
	// large, and every copy of it would be an allocation per request.
	vs := make([]View, 1)
	p := &vs[0].Project
	var ok bool
	if *p, ok = rows.Project(h.ID, h.CreatedAt, h.EntityVersion, h.NamespaceID, h.NamespaceVersion); !ok {
		if *p, err = s.db.ProjectByID(ctx, h.ID); errors.Is(err, model.ErrNotFound) {
			return nil, model.NotFound("Project")
		} else if err != nil {
			return nil, err
		}
		rows.PutProject(p)
	}
	if p.PendingDelete || !can(a, auth.ReadProject, p, h.Access) {
		return nil, model.NotFound("Project")
	}
	if err := s.completeViews(ctx, a, vs, map[int64]store.ProjectHead{p.ID: h}, rows); err != nil {
		return nil, err
	}
	return vs, nil
}

// headCacheFor is how long a project's head read for a caller answers
// from memory (gencache). The cache is on only where this process is the
// database's one server (SQLite): every transaction this process commits
// forgets every head at once (store.DB.OnCommit), whatever it wrote — a
// head joins the project, its namespace, its owner, the caller's
// authorizations, memberships and group links, so no narrower rule would
// be safe; the bound covers a write by another command on the same file
// (quarry admin). On PostgreSQL every request reads the head.
const headCacheFor = time.Second

// maxCachedHeads bounds the remembered heads; past it they start afresh.
const maxCachedHeads = 10000

// head reads the head of the project ref for userID as of today, from
// the head cache when it holds it.
func (s *Service) head(ctx context.Context, ref string, userID int64) (store.ProjectHead, error) {
	now, today := s.now(), s.today()
	key := strconv.FormatInt(userID, 10) + "/" + today + "/" + ref
	if h, _, ok := s.heads.Get(key, now); ok {
		return h, nil
	}
	gen := s.heads.Generation()
	h, err := s.db.ProjectHeadByRef(ctx, ref, userID, today)
	if err == nil {
		s.heads.Put(key, h, gen, now)
	}
	return h, err
}

// maxResolved bounds the projects Resolve remembers (a project's row is
// a couple of KiB); past it they start afresh.
const maxResolved = 2000

// resolvedProject is a project's row as Resolve read it, with a user's
// access to it.
type resolvedProject struct {
	p   model.Project
	acc model.AccessLevel
}

// lookup reads the project ref (by id or path) and the actor's access
// to it as of today, from memory on SQLite as heads are (headCacheFor):
// what the actor is allowed is decided on them by the caller, every
// time. CI jobs' reads are not kept.
func (s *Service) lookup(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error) {
	var key string
	var gen uint64
	now := s.now()
	if s.resolved != nil && a.Job == nil {
		key = strconv.FormatInt(a.UserID(), 10) + "/" + now.UTC().Format(model.DateLayout) + "/" + ref
		if e, _, ok := s.resolved.Get(key, now); ok {
			return e.p, e.acc, nil
		}
		gen = s.resolved.Generation()
	}
	p, err := s.db.ProjectByRef(ctx, ref)
	if err != nil {
		return p, 0, err
	}
	acc, err := s.Access(ctx, a, p.ID)
	if err != nil {
		return p, 0, err
	}
	if key != "" {
		s.resolved.Put(key, resolvedProject{p, acc}, gen, now)
	}
	return p, acc, nil
}

// ForgetCachedReads empties the heads and the resolved projects kept in
// memory (tests that count statements).
func (s *Service) ForgetCachedReads() {
	s.heads.Invalidate()
	s.resolved.Invalidate()
}

// CachedViews is ViewsWithoutTopics for the entity cache: the caller's
// levels, the group links' presence and the owners' versions of the page
// in one statement (store.ProjectHeads), the links read only for the
// projects shared with groups, the owners' summaries taken from rows at
// their versions (the misses read in one statement).
func (s *Service) CachedViews(ctx context.Context, a auth.Actor, ps []model.Project, rows Rows) ([]View, error) {
	if !a.SignedIn() || a.Job != nil {
		return s.ViewsWithoutTopics(ctx, a, ps, nil, false)
	}
	ids := make([]int64, len(ps))
	for i := range ps {
		ids[i] = ps[i].ID
	}
	heads, err := s.db.ProjectHeads(ctx, ids, a.UserID(), s.today())
	if err != nil {
		return nil, err
	}
	vs := make([]View, len(ps))
	for i := range ps {
		vs[i].Project = ps[i]
	}
	return vs, s.completeViews(ctx, a, vs, heads, rows)
}

// CachedList is List and CachedViews in one for a signed-in caller (not a
// CI job): the page's heads in one statement with its count
// (store.ListProjectHeads), the wide rows taken from rows at the heads'
// versions, the misses read in one statement (and kept). Other callers
// get List and ViewsWithoutTopics.
func (s *Service) CachedList(ctx context.Context, a auth.Actor, in ListInput, page model.Page, rows Rows) ([]View, model.PageInfo, error) {
	if !a.SignedIn() || a.Job != nil {
		ps, info, err := s.List(ctx, a, in, page)
		if err != nil {
			return nil, info, err
		}
		vs, err := s.ViewsWithoutTopics(ctx, a, ps, nil, false)
		return vs, info, err
	}
	f, err := s.listFilter(ctx, a, in, page)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	hs, info, err := s.db.ListProjectHeads(ctx, f, page, a.UserID(), s.today())
	if err != nil {
		return nil, info, err
	}
	// The rows go straight into the views (a project row is large).
	vs := make([]View, len(hs))
	heads := make(map[int64]store.ProjectHead, len(hs))
	var missing []int64
	for i, h := range hs {
		heads[h.ID] = h
		p, ok := rows.Project(h.ID, h.CreatedAt, h.EntityVersion, h.NamespaceID, h.NamespaceVersion)
		if !ok {
			missing = append(missing, h.ID)
			continue
		}
		vs[i].Project = p
	}
	if len(missing) > 0 {
		read, err := s.db.ProjectsByIDs(ctx, missing)
		if err != nil {
			return nil, info, err
		}
		out := vs[:0]
		for i, h := range hs {
			if vs[i].Project.ID == 0 {
				p, ok := read[h.ID]
				if !ok {
					continue // deleted since the heads were read
				}
				rows.PutProject(&p)
				vs[i].Project = p
			}
			out = append(out, vs[i])
		}
		vs = out
	}
	if err := s.completeViews(ctx, a, vs, heads, rows); err != nil {
		return nil, info, err
	}
	return vs, info, nil
}

// completeViews completes views holding their projects only from their
// heads, in place.
func (s *Service) completeViews(ctx context.Context, a auth.Actor, vs []View, heads map[int64]store.ProjectHead, rows Rows) error {
	var shared, forkIDs, missing []int64
	owners := map[int64]*model.User{}
	for i := range vs {
		p := &vs[i].Project
		h := heads[p.ID]
		if h.Shared {
			shared = append(shared, p.ID)
		}
		if p.ForkedFromID != nil {
			forkIDs = append(forkIDs, *p.ForkedFromID)
		}
		if p.Namespace.Kind != model.NamespaceUser || h.OwnerID == 0 || h.OwnerID != p.Namespace.OwnerID {
			continue
		}
		if _, ok := owners[h.OwnerID]; ok {
			continue
		}
		if o, ok := rows.UserBasic(h.OwnerID, h.OwnerCreatedAt, h.OwnerVersion); ok {
			owners[h.OwnerID] = &o
		} else if !slices.Contains(missing, h.OwnerID) {
			missing = append(missing, h.OwnerID)
		}
	}
	var links map[int64][]model.GroupLink
	if len(shared) > 0 {
		var err error
		if links, err = s.db.GroupLinksOf(ctx, shared); err != nil {
			return err
		}
	}
	sources, srcAccess, err := s.forkSources(ctx, a, forkIDs)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		read, err := s.db.UserBasicsByIDs(ctx, missing)
		if err != nil {
			return err
		}
		for id, o := range read {
			rows.PutUserBasic(&o)
			owners[id] = &o
		}
	}
	for i := range vs {
		v := &vs[i]
		p := &v.Project
		h := heads[p.ID]
		var owner *model.User // shared by the views of one owner's projects, read only
		if o, ok := owners[h.OwnerID]; ok && p.Namespace.Kind == model.NamespaceUser && h.OwnerID == p.Namespace.OwnerID {
			owner = o
		}
		var group model.AccessLevel
		if p.Namespace.Kind == model.NamespaceGroup {
			group = h.GroupAccess
		}
		v.fill(a, h.Access, h.ProjectAccess, group, links[p.ID], sources, srcAccess, owner, false)
	}
	return nil
}
