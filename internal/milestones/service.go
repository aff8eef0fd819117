// Package milestones holds the rules for project and group milestones:
// who reads and writes them, GitLab's validations (titles unique across a
// group hierarchy and its projects, due date after start date), the
// active/closed state and the lists with their filters.
package milestones

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Service answers every milestone question.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
	now      func() time.Time
}

// New returns the milestones service.
func New(db *store.DB, projects Projects, groups Groups) *Service {
	return &Service{db: db, projects: projects, groups: groups, now: db.Now}
}

// Limits on what a caller sends.
const (
	MaxTitle       = 255
	MaxDescription = 1 << 20
	MaxIIDs        = 100
)

// parent is a resolved project or group with the caller's access.
type parent struct {
	project *model.Project
	group   *model.Group
	access  model.AccessLevel
}

func (p *parent) resource() auth.Resource {
	return auth.Resource{Project: p.project, Group: p.group, Access: p.access}
}

// open resolves o (404 when the caller does not see it) and checks action
// (403).
func (s *Service) open(ctx context.Context, a auth.Actor, o model.OwnerRef, action auth.Action) (*parent, error) {
	p := &parent{}
	if o.Group {
		g, acc, err := s.groups.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		p.group, p.access = &g, acc
	} else {
		pr, acc, err := s.projects.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		p.project, p.access = &pr, acc
	}
	if !auth.Can(a, action, p.resource()) {
		return nil, model.Forbidden("")
	}
	return p, nil
}

// Today is the date milestones expire against (UTC, the service's
// clock).
func (s *Service) Today() string { return s.now().UTC().Format(model.DateLayout) }

// ancestors are the group ids of a traversal ("1/5/9/") before its own.
func ancestors(traversal string) []int64 {
	var ids []int64
	for _, f := range strings.Split(strings.TrimSuffix(traversal, "/"), "/") {
		if n, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, n)
		}
	}
	if len(ids) > 0 {
		ids = ids[:len(ids)-1]
	}
	return ids
}

// ListInput are a list's filters; zero values do not filter.
type ListInput struct {
	IIDs               []int64
	State              string // active, closed ("" or "all": both)
	Title              string
	Search             string
	SearchTitle        string
	IncludeAncestors   bool
	IncludeDescendants bool // groups only
	UpdatedBefore      *time.Time
	UpdatedAfter       *time.Time
	// ContainingDate keeps milestones whose dates contain it;
	// StartDate and EndDate (both or neither) those overlapping them.
	ContainingDate     string
	StartDate, EndDate string
}

// List returns a project's or a group's milestones, with the ancestor
// groups' (include_ancestors) and, for a group, its descendants'.
func (s *Service) List(ctx context.Context, a auth.Actor, o model.OwnerRef, in ListInput, page model.Page) ([]model.Milestone, model.PageInfo, error) {
	p, err := s.open(ctx, a, o, auth.ReadMilestone)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	f := store.MilestoneFilter{IIDs: in.IIDs, Title: in.Title, Search: in.Search, SearchTitle: in.SearchTitle,
		UpdatedBefore: in.UpdatedBefore, UpdatedAfter: in.UpdatedAfter}
	if in.State == model.MilestoneActive || in.State == model.MilestoneClosed {
		f.State = in.State
	}
	switch {
	case in.ContainingDate != "":
		f.TimeframeStart, f.TimeframeEnd = in.ContainingDate, in.ContainingDate
	case in.StartDate != "" && in.EndDate != "":
		f.TimeframeStart, f.TimeframeEnd = in.StartDate, in.EndDate
	}
	if p.project != nil {
		f.ProjectID = p.project.ID
		// A project's groups are its readers' to list (GitLab's
		// project_group_ids: no visibility check).
		if in.IncludeAncestors && p.project.Namespace.Kind == model.NamespaceGroup {
			f.GroupIDs = append(ancestors(p.project.Namespace.Traversal), p.project.NamespaceID)
		}
	} else {
		f.GroupIDs = []int64{p.group.ID}
		if in.IncludeAncestors || in.IncludeDescendants {
			// Other groups of the hierarchy count only where the caller
			// sees them.
			f.OtherGroupsVisibleTo = &store.Viewer{UserID: a.UserID(), Admin: a.Admin(), Today: s.Today(),
				External: a.SignedIn() && a.User.External}
		}
		if in.IncludeAncestors {
			f.OtherGroupIDs = ancestors(p.group.Traversal)
		}
		if in.IncludeDescendants {
			f.GroupsUnder = p.group.Traversal
		}
	}
	return s.db.ListMilestones(ctx, f, page)
}

// Get returns one milestone of a project or group by its id.
func (s *Service) Get(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) (model.Milestone, error) {
	p, err := s.open(ctx, a, o, auth.ReadMilestone)
	if err != nil {
		return model.Milestone{}, err
	}
	return s.find(ctx, p, id)
}

// find loads milestone id of p: 404 Not found when p has no such one.
func (s *Service) find(ctx context.Context, p *parent, id int64) (model.Milestone, error) {
	m, err := s.db.MilestoneByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return m, model.RecordNotFound()
	}
	if err != nil {
		return m, err
	}
	if (p.project != nil && m.ProjectID != p.project.ID) || (p.group != nil && m.GroupID != p.group.ID) {
		return model.Milestone{}, model.RecordNotFound()
	}
	return m, nil
}

// Input carries milestone attributes; nil means "not given". Dates are
// YYYY-MM-DD, "" to clear.
type Input struct {
	Title, Description *string
	DueDate, StartDate *string
	StateEvent         string // close, activate
}

// Create makes a milestone (reporters up).
func (s *Service) Create(ctx context.Context, a auth.Actor, o model.OwnerRef, in Input) (model.Milestone, error) {
	p, err := s.open(ctx, a, o, auth.AdminMilestone)
	if err != nil {
		return model.Milestone{}, err
	}
	m := model.Milestone{State: model.MilestoneActive}
	if p.project != nil {
		m.ProjectID, m.ParentPath = p.project.ID, p.project.FullPath()
	} else {
		m.GroupID, m.ParentPath = p.group.ID, p.group.FullPath
	}
	apply(&m, in)
	err = s.save(ctx, p, &m, in.Title != nil, func(tx *store.Tx) error { return tx.CreateMilestone(ctx, &m) })
	return m, failed("create", err)
}

// Update changes a milestone (reporters up). A lost race with another
// writer is a 409.
func (s *Service) Update(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64, in Input) (model.Milestone, error) {
	p, err := s.open(ctx, a, o, auth.AdminMilestone)
	if err != nil {
		return model.Milestone{}, err
	}
	m, err := s.find(ctx, p, id)
	if err != nil {
		return m, err
	}
	oldTitle := m.Title
	apply(&m, in)
	switch {
	case in.StateEvent == "close" && m.State == model.MilestoneActive:
		m.State = model.MilestoneClosed
	case in.StateEvent == "activate" && m.State == model.MilestoneClosed:
		m.State = model.MilestoneActive
	}
	err = s.save(ctx, p, &m, m.Title != oldTitle, func(tx *store.Tx) error {
		ok, err := tx.UpdateMilestone(ctx, &m)
		if err == nil && !ok {
			err = model.Conflict("the milestone was changed by another request; try again")
		}
		return err
	})
	return m, failed("update", err)
}

// apply sets what in gives. A blank title is not taken, as GitLab's
// title= does (a new milestone then has none); another is sanitized (and
// may come out blank: "can't be blank").
func apply(m *model.Milestone, in Input) {
	if in.Title != nil {
		if strings.TrimSpace(*in.Title) != "" {
			m.Title = SanitizeTitle(*in.Title)
		}
	}
	if in.Description != nil {
		d := *in.Description
		m.Description = &d
	}
	if in.DueDate != nil {
		m.DueDate = *in.DueDate
	}
	if in.StartDate != nil {
		m.StartDate = *in.StartDate
	}
}

// save validates m and, in one transaction, checks its title against the
// hierarchy and writes it.
func (s *Service) save(ctx context.Context, p *parent, m *model.Milestone, checkTitle bool, write func(*store.Tx) error) error {
	errs := Validate(m)
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if checkTitle && m.Title != "" {
			var taken bool
			var err error
			if p.project != nil {
				var groups []int64
				if p.project.Namespace.Kind == model.NamespaceGroup {
					groups = append(ancestors(p.project.Namespace.Traversal), p.project.NamespaceID)
				}
				taken, err = tx.MilestoneTitleInProjectScope(ctx, p.project.ID, groups, m.Title, m.ID)
			} else {
				taken, err = tx.MilestoneTitleInGroupScope(ctx, p.group.Traversal, ancestors(p.group.Traversal), m.Title, m.ID)
			}
			if err != nil {
				return err
			}
			if taken {
				errs = errs.add("title", titleTaken)
			}
		}
		if len(errs) > 0 {
			return errs
		}
		err := write(tx)
		if store.IsUnique(err, store.UniqueMilestoneProjectTitle) || store.IsUnique(err, store.UniqueMilestoneGroupTitle) {
			return Errors{{"title", []string{titleTaken}}}
		}
		return err
	})
}

const titleTaken = "already being used for another group or project milestone."

// failed turns validation errors into GitLab's 400 "Failed to create
// milestone {…}".
func failed(verb string, err error) error {
	var e Errors
	if errors.As(err, &e) {
		return model.BadRequestRaw(fmt.Sprintf("Failed to %s milestone %s", verb, e.Ruby()))
	}
	return err
}

// Delete removes a milestone (reporters up).
func (s *Service) Delete(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) error {
	p, err := s.open(ctx, a, o, auth.AdminMilestone)
	if err != nil {
		return err
	}
	m, err := s.find(ctx, p, id)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteMilestone(ctx, m.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return model.RecordNotFound()
	}
	return err
}

// Issuables checks that milestone id of o is there for the caller, for
// the lists of its issues and merge requests. Quarry has no issues, and
// its merge requests carry no milestone, so both lists are empty.
func (s *Service) Issuables(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) error {
	_, err := s.Get(ctx, a, o, id)
	return err
}

// GroupMilestones returns every milestone of a group by id, for exports:
// the ids to remap on import.
func (s *Service) GroupMilestones(ctx context.Context, groupID int64) ([]model.Milestone, error) {
	return s.db.GroupMilestones(ctx, groupID, 0, 1<<30)
}
