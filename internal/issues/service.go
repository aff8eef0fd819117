// Package issues holds a project's issues: opening, listing (per
// project, per group tree, the caller's across projects, a milestone's),
// reading, editing, closing and reopening, and deleting them, with
// GitLab's permissions: the project's issues feature, reporters'
// metadata (labels, milestone, assignees, confidentiality), the
// author's own edits, confidential issues seen only by reporters up,
// their author and their assignees.
package issues

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
	WithAccess(ctx context.Context, a auth.Actor, ids []int64) (map[int64]model.Project, map[int64]model.AccessLevel, error)
	// UsersWhoCan keeps of ids the users who may do action on p.
	UsersWhoCan(ctx context.Context, p model.Project, action auth.Action, ids []int64) ([]int64, error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Milestones finds a project's or a group's milestone for the caller
// (the milestones service): 404 when it is not there for them.
type Milestones interface {
	Get(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) (model.Milestone, error)
}

// Service is the issues service.
type Service struct {
	db         *store.DB
	projects   Projects
	groups     Groups
	milestones Milestones
}

// New returns the issues service.
func New(db *store.DB, projects Projects, groups Groups, milestones Milestones) *Service {
	return &Service{db: db, projects: projects, groups: groups, milestones: milestones}
}

// View is an issue with what its JSON shows besides its row.
type View struct {
	model.Issue
	// Project is the issue's project (its web_url and references).
	Project model.Project
	// Users are the author, the closer and the assignees, by id (a user
	// since deleted is missing).
	Users map[int64]model.User
	// Milestone is the issue's milestone (nil: none).
	Milestone *model.Milestone
	// LabelDetails are the labels the issue's label names stand for (the
	// project's, else its nearest group's), read only when a list asks
	// (Filter.WithLabelsDetails; nil otherwise). A name whose label was
	// since removed has none.
	LabelDetails []model.Label
	// UserNotesCount counts the issue's non-system notes the caller
	// sees; Upvotes and Downvotes its thumbsup and thumbsdown emoji.
	UserNotesCount, Upvotes, Downvotes int
}

// Filter filters a list of issues, as the API's parameters say.
type Filter struct {
	// State: "opened", "closed", "" or "all".
	State string
	// Scope: "created_by_me", "assigned_to_me", "all" (""). A scope of
	// the caller's needs a signed-in caller (401 otherwise).
	Scope string
	// AuthorID is a user's id (0: any); AuthorUsername a username.
	AuthorID       int64
	AuthorUsername string
	// AssigneeID is a user's id, NoOne or AnyOne (0: any);
	// AssigneeUsername a username.
	AssigneeID       int64
	AssigneeUsername string
	// Labels must all be carried; a single "None" (no label) or "Any"
	// (some label) instead.
	Labels []string
	// Milestone is a title, "None" or "Any" ("": any).
	Milestone string
	// ReleaseTag keeps the issues of the milestones of the project's
	// release of that tag; "None" those of no release, "Any" those of
	// one ("": all).
	ReleaseTag string
	// Search looks in titles and descriptions; In ("title",
	// "description" or "title,description") narrows where.
	Search string
	In     string
	IIDs   []int64
	// Confidential keeps only (true) or leaves out (false) confidential
	// issues; nil: both.
	Confidential *bool
	// ClosedByID keeps the issues a user closed (0: any).
	ClosedByID int64
	// DueDate is GitLab's due date filter: "0" (none), "any", "today",
	// "tomorrow", "overdue", "week", "month",
	// "next_month_and_previous_two_weeks" ("": any).
	DueDate string
	// IssueType is GitLab's issue type filter: "issue" keeps every
	// issue, the other types none ("": any).
	IssueType string
	// IncludeArchived keeps the issues of archived projects in the group
	// and cross-project lists (GitLab's non_archived=false).
	IncludeArchived bool
	// WithLabelsDetails reads the labels behind the page\'s label names
	// (View.LabelDetails), in one more statement.
	WithLabelsDetails                                        bool
	CreatedAfter, CreatedBefore, UpdatedAfter, UpdatedBefore *time.Time
	// OrderBy: created_at (default), updated_at, due_date, title.
	OrderBy string
	Asc     bool
}

// Filter's AssigneeID takes a user's id or one of these.
const (
	NoOne  = store.FilterNone
	AnyOne = store.FilterAny
)

// Limits on what a list's filters may hold.
const (
	MaxIIDs   = 100
	MaxLabels = 50
)

// CreateInput opens an issue. Labels, milestone and assignees are
// applied only for the project's members and administrators (GitLab
// drops them silently for others); CreatedAt only for administrators and
// project owners.
type CreateInput struct {
	Title        string
	Description  string
	Labels       []string
	AssigneeIDs  []int64
	MilestoneID  int64
	Confidential bool
	// DiscussionLocked is applied for reporters up.
	DiscussionLocked bool
	// DueDate is YYYY-MM-DD or "".
	DueDate   string
	CreatedAt *time.Time
}

// UpdateInput edits an issue; nil means "not given". The author who is
// not a reporter may change the title, the description and the state
// only (the rest is dropped).
type UpdateInput struct {
	Title, Description *string
	// StateEvent is "close" or "reopen".
	StateEvent              *string
	Labels                  *[]string
	AddLabels, RemoveLabels []string
	AssigneeIDs             *[]int64
	// MilestoneID 0 clears the milestone.
	MilestoneID      *int64
	Confidential     *bool
	DiscussionLocked *bool
	// DueDate "" clears it.
	DueDate *string
}

// maxRetries bounds the retries of an edit that lost a race with another
// writer of the same issue.
const maxRetries = 5

// defaultLabelColor is the colour of a label an issue's labels create
// (GitLab's Label::DEFAULT_COLOR).
const defaultLabelColor = "#6699cc"

// project resolves a project whose issues the actor reads (404 when the
// project or its issues are closed to them).
func (s *Service) project(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, acc, err
	}
	if !auth.Can(a, auth.ReadIssue, auth.Resource{Project: &p, Access: acc}) {
		return p, acc, model.NotFound("")
	}
	return p, acc, nil
}

// visible reports whether a may see issue i of p (confidential issues:
// reporters up, the author, the assignees).
func visible(a auth.Actor, p model.Project, acc model.AccessLevel, i model.Issue) bool {
	if !i.Confidential {
		return true
	}
	if auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: acc}) {
		return true
	}
	return a.SignedIn() && (a.Is(i.AuthorID) || i.Assigned(a.UserID()))
}

// load reads a project's issue by iid that a may see (404 Issue Not
// Found).
func (s *Service) load(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, iid int64) (model.Issue, error) {
	i, err := s.db.Issue(ctx, p.ID, iid)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !visible(a, p, acc, i)) {
		return i, model.NotFound("Issue")
	}
	return i, err
}

// ByID returns any issue by its global id, for administrators (GitLab's
// GET /issues/:id); 403 for others, 404 when there is none.
func (s *Service) ByID(ctx context.Context, a auth.Actor, id int64) (View, error) {
	if !a.Admin() {
		return View{}, model.Forbidden("")
	}
	found, err := s.db.IssuesByIDs(ctx, []int64{id})
	if err != nil {
		return View{}, err
	}
	i, ok := found[id]
	if !ok {
		return View{}, model.NotFound("")
	}
	p, err := s.db.ProjectByID(ctx, i.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return View{}, model.NotFound("")
	}
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, p, 0, i) // an administrator's: every note counts
}

// Get returns a project's issue the caller may see.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef string, iid int64) (View, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return View{}, err
	}
	i, err := s.load(ctx, a, p, acc, iid)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, p, acc, i)
}

// Resolve returns a project's issue the caller may see, with the
// project and the caller's access to it (the notes service's lookup):
// 404 Project Not Found, 404 Issue Not Found.
func (s *Service) Resolve(ctx context.Context, a auth.Actor, projectRef string, iid int64) (model.Project, model.AccessLevel, model.Issue, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return p, acc, model.Issue{}, err
	}
	i, err := s.load(ctx, a, p, acc, iid)
	return p, acc, i, err
}

// view loads what an issue's JSON shows besides its row.
func (s *Service) view(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, i model.Issue) (View, error) {
	vs, err := s.views(ctx, a, map[int64]model.Project{p.ID: p}, map[int64]model.AccessLevel{p.ID: acc}, []model.Issue{i})
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// views loads the people, milestones, note counts and votes of a page of
// issues in four statements, whatever its size; internal notes count
// for whoever sees them (reporters up).
func (s *Service) views(ctx context.Context, a auth.Actor, projects map[int64]model.Project, access map[int64]model.AccessLevel,
	list []model.Issue) ([]View, error) {
	var uids, mids []int64
	for _, i := range list {
		for _, id := range append([]int64{i.AuthorID, i.ClosedByID}, i.AssigneeIDs...) {
			if id != 0 && !slices.Contains(uids, id) {
				uids = append(uids, id)
			}
		}
		if i.MilestoneID != 0 && !slices.Contains(mids, i.MilestoneID) {
			mids = append(mids, i.MilestoneID)
		}
	}
	users, err := s.db.UserBasicsByIDs(ctx, uids)
	if err != nil {
		return nil, err
	}
	ms, err := s.db.MilestonesByIDs(ctx, mids)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for n, i := range list {
		ids[n] = i.ID
	}
	counts, err := s.db.NoteCountsOf(ctx, model.NoteableIssue, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(list))
	for n, i := range list {
		p := projects[i.ProjectID]
		c := counts[i.ID]
		out[n] = View{Issue: i, Project: p, Users: users, UserNotesCount: c.UserNotes, Upvotes: c.Upvotes, Downvotes: c.Downvotes}
		if auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: access[i.ProjectID]}) {
			out[n].UserNotesCount += c.InternalNotes
		}
		if m, ok := ms[i.MilestoneID]; ok {
			out[n].Milestone = &m
		}
	}
	return out, nil
}

// List lists a project's issues (projectRef), a group tree's (groupRef),
// or, with neither, those of every project the caller reads (a
// signed-in caller: 401 otherwise). Confidential issues the caller may
// not see are left out.
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef, groupRef string, f Filter, page model.Page) ([]View, model.PageInfo, error) {
	var projects map[int64]model.Project
	var access map[int64]model.AccessLevel
	var err error
	switch {
	case projectRef != "":
		p, acc, err := s.project(ctx, a, projectRef)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		projects, access = map[int64]model.Project{p.ID: p}, map[int64]model.AccessLevel{p.ID: acc}
	default:
		if groupRef == "" && !a.SignedIn() && f.Scope != "all" {
			// GET /issues: anonymous callers list scope=all only.
			return nil, model.PageInfo{}, model.Unauthorized("")
		}
		// Archived projects' issues are left out unless asked (GitLab's
		// non_archived, default true).
		if projects, access, err = s.readable(ctx, a, groupRef, f.IncludeArchived); err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	return s.list(ctx, a, projects, access, f, 0, page)
}

// ProjectIssues is List for one project, for the web's issue pages: the
// project (which the caller reads, its issues open to them) with a page
// of its issues the caller may see.
func (s *Service) ProjectIssues(ctx context.Context, a auth.Actor, projectRef string, f Filter, page model.Page) (model.Project, []View, model.PageInfo, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return p, nil, model.PageInfo{}, err
	}
	list, info, err := s.list(ctx, a, map[int64]model.Project{p.ID: p}, map[int64]model.AccessLevel{p.ID: acc}, f, 0, page)
	return p, list, info, err
}

// MilestoneIssues lists the issues of a project's or a group's milestone
// (o) the caller may see: a project milestone's in its project, a group
// milestone's in the group tree's projects the caller reads.
func (s *Service) MilestoneIssues(ctx context.Context, a auth.Actor, o model.OwnerRef, milestoneID int64, page model.Page) ([]View, model.PageInfo, error) {
	m, err := s.milestones.Get(ctx, a, o, milestoneID)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	var projects map[int64]model.Project
	var access map[int64]model.AccessLevel
	if o.Group {
		if projects, access, err = s.readable(ctx, a, o.Ref, true); err != nil {
			return nil, model.PageInfo{}, err
		}
	} else {
		p, acc, err := s.projects.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		projects, access = map[int64]model.Project{}, map[int64]model.AccessLevel{}
		if auth.Can(a, auth.ReadIssue, auth.Resource{Project: &p, Access: acc}) {
			projects[p.ID], access[p.ID] = p, acc
		}
	}
	return s.list(ctx, a, projects, access, Filter{}, m.ID, page)
}

// list is one page of the issues of projects (whose issues the caller
// reads) matching f.
func (s *Service) list(ctx context.Context, a auth.Actor, projects map[int64]model.Project, access map[int64]model.AccessLevel,
	f Filter, milestoneID int64, page model.Page) ([]View, model.PageInfo, error) {
	sf, err := s.filterFor(ctx, a, projects, access, f)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	sf.MilestoneID = milestoneID
	list, info, err := s.db.Issues(ctx, sf, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.views(ctx, a, projects, access, list)
	if err == nil && f.WithLabelsDetails {
		err = s.labelDetails(ctx, out)
	}
	return out, info, err
}

// labelDetails sets the labels behind the label names of a page of
// issues (one statement): a project's label of the name, else the one of
// its nearest group.
func (s *Service) labelDetails(ctx context.Context, page []View) error {
	var projectIDs, groupIDs []int64
	var titles []string
	for _, v := range page {
		if !slices.Contains(projectIDs, v.ProjectID) {
			projectIDs = append(projectIDs, v.ProjectID)
			if v.Project.Namespace.Kind == model.NamespaceGroup {
				for _, g := range traversalIDs(v.Project.Namespace.Traversal) {
					if !slices.Contains(groupIDs, g) {
						groupIDs = append(groupIDs, g)
					}
				}
			}
		}
		for _, l := range v.Labels {
			if !slices.Contains(titles, l) {
				titles = append(titles, l)
			}
		}
	}
	found, err := s.db.LabelsTitled(ctx, projectIDs, groupIDs, titles)
	if err != nil {
		return err
	}
	for n := range page {
		v := &page[n]
		v.LabelDetails = []model.Label{}
		var ancestors []int64
		if v.Project.Namespace.Kind == model.NamespaceGroup {
			ancestors = traversalIDs(v.Project.Namespace.Traversal)
		}
		for _, title := range v.Labels {
			best, depth := -1, -1
			for k, l := range found {
				if l.Title != title {
					continue
				}
				d := -1
				switch {
				case l.ProjectID == v.ProjectID:
					d = len(ancestors) // the project's own wins
				case l.GroupID != 0:
					d = slices.Index(ancestors, l.GroupID)
				}
				if d > depth {
					best, depth = k, d
				}
			}
			if best >= 0 {
				v.LabelDetails = append(v.LabelDetails, found[best])
			}
		}
	}
	return nil
}

// filterFor is the store's filter of f over projects (whose issues the
// caller reads), hiding the confidential issues the caller may not see.
func (s *Service) filterFor(ctx context.Context, a auth.Actor, projects map[int64]model.Project, access map[int64]model.AccessLevel,
	f Filter) (store.IssueFilter, error) {
	sf, err := s.storeFilter(ctx, a, f)
	if err != nil {
		return sf, err
	}
	sf.ProjectIDs = make([]int64, 0, len(projects))
	vis := &store.IssueVisibility{UserID: a.UserID()}
	for id, p := range projects {
		sf.ProjectIDs = append(sf.ProjectIDs, id)
		if auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: access[id]}) {
			vis.AllIn = append(vis.AllIn, id)
		}
	}
	slices.Sort(sf.ProjectIDs)
	slices.Sort(vis.AllIn)
	if len(vis.AllIn) < len(sf.ProjectIDs) {
		sf.Visibility = vis
	}
	return sf, nil
}

// Statistics counts the opened and closed issues matching f (its State
// and order aside) that the caller sees: of a project (projectRef), of a
// group tree (groupRef), or of every project the caller reads (GitLab's
// issues_statistics; anonymous callers with scope=all only), in two
// statements besides the projects'.
func (s *Service) Statistics(ctx context.Context, a auth.Actor, projectRef, groupRef string, f Filter) (opened, closed int, err error) {
	var projects map[int64]model.Project
	var access map[int64]model.AccessLevel
	switch {
	case projectRef != "":
		p, acc, err := s.project(ctx, a, projectRef)
		if err != nil {
			return 0, 0, err
		}
		projects, access = map[int64]model.Project{p.ID: p}, map[int64]model.AccessLevel{p.ID: acc}
	default:
		if groupRef == "" && !a.SignedIn() && f.Scope != "all" {
			return 0, 0, model.Unauthorized("")
		}
		if projects, access, err = s.readable(ctx, a, groupRef, f.IncludeArchived); err != nil {
			return 0, 0, err
		}
	}
	f.State = ""
	sf, err := s.filterFor(ctx, a, projects, access, f)
	if err != nil {
		return 0, 0, err
	}
	c, err := s.db.IssueCountsWhere(ctx, sf)
	return c.Opened, c.Closed, err
}

// maxParticipants bounds the commenters an issue's participants name.
const maxParticipants = 1000

// Participants are an issue's author, assignees and the authors of the
// comments the caller sees, once each (GitLab's participants, mentions
// aside).
func (s *Service) Participants(ctx context.Context, a auth.Actor, projectRef string, iid int64) ([]model.User, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return nil, err
	}
	i, err := s.load(ctx, a, p, acc, iid)
	if err != nil {
		return nil, err
	}
	internal := auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: acc})
	commenters, err := s.db.NoteAuthorIDs(ctx, model.NoteableIssue, i.ID, internal, maxParticipants)
	if err != nil {
		return nil, err
	}
	ids := append(append([]int64{i.AuthorID}, i.AssigneeIDs...), commenters...)
	users, err := s.db.UserBasicsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []model.User
	for _, id := range ids {
		if u, ok := users[id]; ok && !slices.ContainsFunc(out, func(x model.User) bool { return x.ID == id }) {
			out = append(out, u)
		}
	}
	return out, nil
}

// storeFilter turns f into the store's filter: the caller's scope, users
// named by username.
func (s *Service) storeFilter(ctx context.Context, a auth.Actor, f Filter) (store.IssueFilter, error) {
	sf := store.IssueFilter{State: f.State, AuthorID: f.AuthorID, AssigneeID: f.AssigneeID, Milestone: f.Milestone, ReleaseTag: f.ReleaseTag, Search: f.Search,
		IIDs: f.IIDs, Confidential: f.Confidential, CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
		UpdatedAfter: f.UpdatedAfter, UpdatedBefore: f.UpdatedBefore, OrderBy: f.OrderBy, Asc: f.Asc}
	sf.ClosedByID = f.ClosedByID
	if err := s.dueFilter(&sf, f.DueDate); err != nil {
		return sf, err
	}
	switch f.IssueType {
	case "", "issue":
	case "incident", "test_case", "requirement", "task", "objective", "key_result", "epic", "ticket":
		sf.Nothing = true // Quarry's issues are all of type issue
	default:
		return sf, model.Param("issue_type does not have a valid value")
	}
	if len(f.IIDs) > MaxIIDs {
		return sf, model.Param("iids has too many values")
	}
	labels := model.CleanList(f.Labels)
	if len(labels) > MaxLabels {
		return sf, model.Param("labels has too many values")
	}
	switch {
	case len(labels) == 1 && strings.EqualFold(labels[0], "none"):
		sf.LabelsNone = true
	case len(labels) == 1 && strings.EqualFold(labels[0], "any"):
		sf.LabelsAny = true
	default:
		sf.Labels = labels
	}
	for _, w := range strings.Split(f.In, ",") {
		switch strings.TrimSpace(w) {
		case "title":
			sf.SearchTitle = true
		case "description":
			sf.SearchDescription = true
		}
	}
	switch f.Scope {
	case "created_by_me", "created-by-me":
		if !a.SignedIn() {
			return sf, model.Unauthorized("")
		}
		sf.AuthorID = a.UserID()
	case "assigned_to_me", "assigned-to-me":
		if !a.SignedIn() {
			return sf, model.Unauthorized("")
		}
		sf.AssigneeID = a.UserID()
	}
	for _, u := range []struct {
		name string
		id   *int64
	}{{f.AuthorUsername, &sf.AuthorID}, {f.AssigneeUsername, &sf.AssigneeID}} {
		if u.name == "" {
			continue
		}
		user, err := s.db.UserByUsername(ctx, u.name)
		switch {
		case errors.Is(err, model.ErrNotFound):
			*u.id = -3 // no one has that name: nothing matches
		case err != nil:
			return sf, err
		default:
			*u.id = user.ID
		}
	}
	return sf, nil
}

// readable lists the projects (of a group tree, or all with issues)
// whose issues the caller reads, with the caller's access, in a fixed
// number of statements; archived ones only with archived.
func (s *Service) readable(ctx context.Context, a auth.Actor, groupRef string, archived bool) (map[int64]model.Project, map[int64]model.AccessLevel, error) {
	var candidates []model.Project
	if groupRef != "" {
		g, _, err := s.groups.Resolve(ctx, a, groupRef)
		if err != nil {
			return nil, nil, err
		}
		if candidates, err = s.db.ProjectsUnderNamespace(ctx, g.Traversal); err != nil {
			return nil, nil, err
		}
	} else {
		var err error
		if candidates, err = s.db.ProjectsWithIssues(ctx); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]int64, 0, len(candidates))
	for _, p := range candidates {
		if !p.PendingDelete && (archived || !p.Archived) {
			ids = append(ids, p.ID)
		}
	}
	found, access, err := s.projects.WithAccess(ctx, a, ids)
	if err != nil {
		return nil, nil, err
	}
	projects := map[int64]model.Project{}
	for id, p := range found {
		if auth.Can(a, auth.ReadIssue, auth.Resource{Project: &p, Access: access[id]}) {
			projects[id] = p
		}
	}
	return projects, access, nil
}

// checkText applies GitLab's limits to a title and a description.
func checkText(title, description *string) error {
	if title != nil {
		t := strings.TrimSpace(*title)
		if t == "" {
			return model.Invalid("title", "can't be blank")
		}
		if utf8.RuneCountInString(t) > model.IssueTitleMax {
			return model.Invalid("title", fmt.Sprintf("is too long (maximum is %d characters)", model.IssueTitleMax))
		}
		*title = t
	}
	if description != nil && utf8.RuneCountInString(*description) > model.IssueDescriptionMax {
		return model.Invalid("description", fmt.Sprintf("is too long (maximum is %d characters)", model.IssueDescriptionMax))
	}
	return nil
}

// checkDate accepts YYYY-MM-DD or "".
func checkDate(name, v string) error {
	if v == "" {
		return nil
	}
	if _, err := time.Parse(model.DateLayout, v); err != nil {
		return model.Param(name + " is invalid")
	}
	return nil
}

// Create opens an issue in a project whose issues the caller reads (any
// signed-in reader; members' fields dropped for others).
func (s *Service) Create(ctx context.Context, a auth.Actor, projectRef string, in CreateInput) (View, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return View{}, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	if !auth.Can(a, auth.CreateIssue, res) {
		return View{}, model.Forbidden("")
	}
	if err := checkText(&in.Title, &in.Description); err != nil {
		return View{}, err
	}
	if err := checkDate("due_date", in.DueDate); err != nil {
		return View{}, err
	}
	i := model.Issue{ProjectID: p.ID, Title: in.Title, Description: in.Description, State: model.IssueOpened, AuthorID: a.UserID(),
		DueDate: in.DueDate, Labels: []string{}}
	if in.CreatedAt != nil && (a.Admin() || acc >= model.Owner) {
		i.CreatedAt = in.CreatedAt.UTC()
	}
	// GitLab's issue policy: whoever opens an issue may make it
	// confidential; its labels, milestone and assignees are set by
	// reporters up and, on creation, by any member (set_issue_metadata);
	// those of others are dropped.
	i.Confidential = in.Confidential
	if auth.Can(a, auth.AdminIssue, res) || acc >= model.Guest {
		if i.AssigneeIDs, err = s.assignees(ctx, p, in.AssigneeIDs); err != nil {
			return View{}, err
		}
		if in.MilestoneID != 0 {
			if i.MilestoneID, err = s.milestone(ctx, p, in.MilestoneID); err != nil {
				return View{}, err
			}
		}
		i.Labels = model.CleanList(in.Labels)
		if err := checkLabels(i.Labels); err != nil {
			return View{}, err
		}
	}
	manage := auth.Can(a, auth.AdminIssue, res)
	i.DiscussionLocked = manage && in.DiscussionLocked
	err = s.db.InTx(ctx, func(tx *store.Tx) (err error) {
		if i.Labels, err = s.ensureLabels(ctx, tx, p, i.Labels, manage); err != nil {
			return err
		}
		if err := tx.CreateIssue(ctx, &i); err != nil {
			return err
		}
		return tx.AddIssueEvent(ctx, i.ID, a.UserID(), model.EventCreated)
	})
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, p, acc, i)
}

// checkLabels bounds an issue's labels: their number, each title's
// length, no comma (GitLab's label title rules).
func checkLabels(labels []string) error {
	if len(labels) > MaxLabels {
		return model.Param("labels has too many values")
	}
	for _, l := range labels {
		if utf8.RuneCountInString(l) > 255 {
			return model.Invalid("labels", "is too long (maximum is 255 characters)")
		}
	}
	return nil
}

// ensureLabels creates, as project labels, the labels of titles neither
// the project nor its groups have, when create (the caller manages
// labels: reporters up); else it keeps only the titles that exist
// (GitLab's Labels::FindOrCreateService).
func (s *Service) ensureLabels(ctx context.Context, tx *store.Tx, p model.Project, titles []string, create bool) ([]string, error) {
	kept := []string{}
	if len(titles) == 0 {
		return kept, nil
	}
	owners := store.LabelOwners{ProjectID: p.ID}
	if p.Namespace.Kind == model.NamespaceGroup {
		owners.GroupIDs = traversalIDs(p.Namespace.Traversal)
	}
	for _, t := range titles {
		_, err := tx.FindLabel(ctx, owners, 0, t)
		switch {
		case err == nil:
		case !errors.Is(err, model.ErrNotFound):
			return nil, err
		case !create:
			continue
		default:
			if err := tx.CreateLabel(ctx, &model.Label{Title: t, Color: defaultLabelColor, ProjectID: p.ID}); err != nil {
				return nil, err
			}
		}
		kept = append(kept, t)
	}
	return kept, nil
}

// traversalIDs parses "1/5/9/" into [1 5 9].
func traversalIDs(t string) []int64 {
	var out []int64
	for _, part := range strings.Split(strings.TrimSuffix(t, "/"), "/") {
		var id int64
		if _, err := fmt.Sscan(part, &id); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// milestone is milestone id when it is the project's or one of its
// groups', else 0: GitLab's IssuableBaseService#filter_milestone sets
// a milestone it does not find to none.
func (s *Service) milestone(ctx context.Context, p model.Project, id int64) (int64, error) {
	m, err := s.db.MilestoneByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if m.ProjectID == p.ID {
		return m.ID, nil
	}
	if m.GroupID != 0 && p.Namespace.Kind == model.NamespaceGroup && slices.Contains(traversalIDs(p.Namespace.Traversal), m.GroupID) {
		return m.ID, nil
	}
	return 0, nil
}

// maxAssignees bounds an issue's assignees.
const maxAssignees = 100

// assignees keeps the users who exist and read the project's issues, in
// order, once each (GitLab drops the others).
func (s *Service) assignees(ctx context.Context, p model.Project, ids []int64) ([]int64, error) {
	if len(ids) > maxAssignees {
		return nil, model.Param("assignee_ids has too many values")
	}
	return s.projects.UsersWhoCan(ctx, p, auth.ReadIssue, ids)
}

// Update edits an issue (reporters up, or its author for the title, the
// description and the state); each change applies to the issue as it is
// when written (a racing edit is retried).
func (s *Service) Update(ctx context.Context, a auth.Actor, projectRef string, iid int64, in UpdateInput) (View, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return View{}, err
	}
	if err := checkText(in.Title, in.Description); err != nil {
		return View{}, err
	}
	if in.DueDate != nil {
		if err := checkDate("due_date", *in.DueDate); err != nil {
			return View{}, err
		}
	}
	if in.StateEvent != nil && *in.StateEvent != "close" && *in.StateEvent != "reopen" {
		return View{}, model.Param("state_event does not have a valid value")
	}
	var i model.Issue
	for attempt := 0; ; attempt++ {
		if i, err = s.load(ctx, a, p, acc, iid); err != nil {
			return View{}, err
		}
		res := auth.Resource{Project: &p, Access: acc, User: &model.User{ID: i.AuthorID}}
		if !auth.Can(a, auth.UpdateIssue, res) {
			return View{}, model.Forbidden("")
		}
		res.User = nil
		was := i.State
		admin := auth.Can(a, auth.AdminIssue, res)
		if err := s.apply(ctx, a, p, admin, &i, in); err != nil {
			return View{}, err
		}
		// Labels given are created when missing (the issue's other
		// labels stay as they are, a label since deleted too).
		added := admin && (in.Labels != nil || len(in.AddLabels) > 0)
		err = s.db.InTx(ctx, func(tx *store.Tx) (err error) {
			if added {
				if i.Labels, err = s.ensureLabels(ctx, tx, p, i.Labels, true); err != nil {
					return err
				}
			}
			if err := tx.UpdateIssue(ctx, &i); err != nil {
				return err
			}
			switch {
			case i.State == was:
			case i.State == model.IssueClosed:
				return tx.AddIssueEvent(ctx, i.ID, a.UserID(), model.EventClosed)
			default:
				return tx.AddIssueEvent(ctx, i.ID, a.UserID(), model.EventReopened)
			}
			return nil
		})
		if !errors.Is(err, model.ErrConflict) || attempt >= maxRetries {
			break
		}
	}
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, p, acc, i)
}

// SetState closes (close true) or reopens an issue, for the web's
// buttons: Update with that state event alone.
func (s *Service) SetState(ctx context.Context, a auth.Actor, projectRef string, iid int64, close bool) (View, error) {
	ev := "reopen"
	if close {
		ev = "close"
	}
	return s.Update(ctx, a, projectRef, iid, UpdateInput{StateEvent: &ev})
}

// apply makes the edits of in to i; admin says whether the caller may
// change more than the title, description and state.
func (s *Service) apply(ctx context.Context, a auth.Actor, p model.Project, admin bool, i *model.Issue, in UpdateInput) error {
	if in.Title != nil {
		i.Title = *in.Title
	}
	if in.Description != nil {
		i.Description = *in.Description
	}
	if in.StateEvent != nil {
		switch *in.StateEvent {
		case "close":
			if i.State == model.IssueOpened {
				now := s.db.Now()
				i.State, i.ClosedByID, i.ClosedAt = model.IssueClosed, a.UserID(), &now
			}
		case "reopen":
			if i.State == model.IssueClosed {
				i.State, i.ClosedByID, i.ClosedAt = model.IssueOpened, 0, nil
			}
		}
	}
	if !admin {
		return nil
	}
	var err error
	if in.AssigneeIDs != nil {
		if i.AssigneeIDs, err = s.assignees(ctx, p, *in.AssigneeIDs); err != nil {
			return err
		}
	}
	if in.MilestoneID != nil {
		i.MilestoneID = 0
		if *in.MilestoneID > 0 {
			if i.MilestoneID, err = s.milestone(ctx, p, *in.MilestoneID); err != nil {
				return err
			}
		}
	}
	if in.Labels != nil {
		i.Labels = model.CleanList(*in.Labels)
	}
	if len(in.AddLabels) > 0 {
		i.Labels = model.CleanList(append(slices.Clone(i.Labels), in.AddLabels...))
	}
	if len(in.RemoveLabels) > 0 {
		remove := model.CleanList(in.RemoveLabels)
		i.Labels = slices.DeleteFunc(slices.Clone(i.Labels), func(l string) bool { return slices.Contains(remove, l) })
	}
	if i.Labels == nil {
		i.Labels = []string{}
	}
	if err := checkLabels(i.Labels); err != nil {
		return err
	}
	if in.Confidential != nil {
		i.Confidential = *in.Confidential
	}
	if in.DiscussionLocked != nil {
		i.DiscussionLocked = *in.DiscussionLocked
	}
	if in.DueDate != nil {
		i.DueDate = *in.DueDate
	}
	return nil
}

// Delete removes an issue (project owners and administrators: 403 for
// others who see it).
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef string, iid int64) error {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return err
	}
	i, err := s.load(ctx, a, p, acc, iid)
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.DeleteIssue, auth.Resource{Project: &p, Access: acc}) {
		return model.Forbidden("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteIssue(ctx, i)
		if err == nil && !ok {
			err = model.NotFound("Issue")
		}
		return err
	})
}

// Stats counts the open and closed issues of a milestone that a may see
// (a release's issue_stats), in two statements.
func (s *Service) Stats(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, milestoneID int64) (store.IssueCounts, error) {
	if !auth.Can(a, auth.ReadIssue, auth.Resource{Project: &p, Access: acc}) {
		return store.IssueCounts{}, nil
	}
	f := store.IssueFilter{ProjectIDs: []int64{p.ID}, MilestoneID: milestoneID}
	if !auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: acc}) {
		f.Visibility = &store.IssueVisibility{UserID: a.UserID()}
	}
	return s.db.IssueCountsWhere(ctx, f)
}

// StateCounts counts a project's opened and closed issues matching f
// (its State aside) that the caller sees, for the web's list tabs.
func (s *Service) StateCounts(ctx context.Context, a auth.Actor, projectRef string, f Filter) (opened, closed int, err error) {
	return s.Statistics(ctx, a, projectRef, "", f)
}

// dueFilter applies GitLab's due_date filter, against today's UTC date.
func (s *Service) dueFilter(sf *store.IssueFilter, v string) error {
	today := s.db.Now().UTC()
	day := func(t time.Time) string { return t.Format(model.DateLayout) }
	switch v {
	case "":
	case "0":
		sf.DueNone = true
	case "any":
		sf.DueAny = true
	case "today":
		sf.DueFrom, sf.DueTo = day(today), day(today)
	case "tomorrow":
		t := today.AddDate(0, 0, 1)
		sf.DueFrom, sf.DueTo = day(t), day(t)
	case "overdue":
		sf.DueTo = day(today.AddDate(0, 0, -1))
	case "week":
		// Monday to Sunday (Rails' beginning_of_week).
		monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
		sf.DueFrom, sf.DueTo = day(monday), day(monday.AddDate(0, 0, 6))
	case "month":
		first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
		sf.DueFrom, sf.DueTo = day(first), day(first.AddDate(0, 1, -1))
	case "next_month_and_previous_two_weeks":
		sf.DueFrom, sf.DueTo = day(today.AddDate(0, 0, -14)), day(today.AddDate(0, 1, 0))
	default:
		return model.Param("due_date does not have a valid value")
	}
	return nil
}
