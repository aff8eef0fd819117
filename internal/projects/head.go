package projects

import (
	"context"
	"errors"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Rows keeps decoded rows by the versions the database moves on every
// write to them (the entity cache): a project's row with its namespace,
// a user's summary.
type Rows interface {
	Project(h *store.ProjectHead) (model.Project, bool)
	PutProject(p *model.Project)
	UserBasic(id int64, created time.Time, version int64) (model.User, bool)
	PutUserBasic(u *model.User)
}

// ResolveView is Resolve and ViewsWithoutTopics of the one project for
// a signed-in caller (not a CI job), reading its head (store.ProjectHead:
// versions and the caller's levels, one statement) and taking the wide
// row, the owner's summary and the group links from rows when their
// versions match, else reading them (and keeping the rows). What the
// caller is allowed is always decided on what the head just read.
func (s *Service) ResolveView(ctx context.Context, a auth.Actor, ref string, rows Rows) (View, error) {
	if !a.SignedIn() || a.Job != nil {
		p, acc, err := s.Resolve(ctx, a, ref)
		if err != nil {
			return View{}, err
		}
		vs, err := s.ViewsWithoutTopics(ctx, a, []model.Project{p}, map[int64]model.AccessLevel{p.ID: acc}, false)
		if err != nil {
			return View{}, err
		}
		return vs[0], nil
	}
	h, err := s.db.ProjectHeadByRef(ctx, ref, a.UserID(), s.today())
	if errors.Is(err, model.ErrNotFound) {
		return View{}, model.NotFound("Project")
	}
	if err != nil {
		return View{}, err
	}
	p, ok := rows.Project(&h)
	if !ok {
		if p, err = s.db.ProjectByID(ctx, h.ID); errors.Is(err, model.ErrNotFound) {
			return View{}, model.NotFound("Project")
		} else if err != nil {
			return View{}, err
		}
		rows.PutProject(&p)
	}
	if p.PendingDelete || !can(a, auth.ReadProject, &p, h.Access) {
		return View{}, model.NotFound("Project")
	}
	var links []model.GroupLink
	if h.Shared {
		byProject, err := s.db.GroupLinksOf(ctx, []int64{p.ID})
		if err != nil {
			return View{}, err
		}
		links = byProject[p.ID]
	}
	var forkIDs []int64
	if p.ForkedFromID != nil {
		forkIDs = []int64{*p.ForkedFromID}
	}
	sources, srcAccess, err := s.forkSources(ctx, a, forkIDs)
	if err != nil {
		return View{}, err
	}
	var owner *model.User
	if p.Namespace.Kind == model.NamespaceUser && h.OwnerID != 0 && h.OwnerID == p.Namespace.OwnerID {
		o, ok := rows.UserBasic(h.OwnerID, h.OwnerCreatedAt, h.OwnerVersion)
		if !ok {
			us, err := s.db.UserBasicsByIDs(ctx, []int64{h.OwnerID})
			if err != nil {
				return View{}, err
			}
			if o, ok = us[h.OwnerID]; ok {
				rows.PutUserBasic(&o)
			}
		}
		if ok {
			owner = &o
		}
	}
	var group model.AccessLevel
	if p.Namespace.Kind == model.NamespaceGroup {
		group = h.GroupAccess
	}
	return newView(a, &p, h.Access, h.ProjectAccess, group, links, sources, srcAccess, owner, false), nil
}
