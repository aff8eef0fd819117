// Package activity keeps the contributions feed (GitLab's events): it
// reads a project's, a user's and the caller's own events with GitLab's
// filters and visibility, and records push events from refs-changed
// events. Other events (a project created, a merge request opened,
// closed, reopened, merged or approved) are recorded by the services
// that make those changes, in their transactions.
package activity

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	WithAccess(ctx context.Context, a auth.Actor, ids []int64) (map[int64]model.Project, map[int64]model.AccessLevel, error)
}

// Users resolves users the caller may see (the users service).
type Users interface {
	ByIDOrUsername(ctx context.Context, actor auth.Actor, ref string) (model.User, error)
}

// Service answers the feeds and records pushes.
type Service struct {
	db       *store.DB
	projects Projects
	users    Users
	storages *gitrepo.Storages
}

// New returns the activity service.
func New(db *store.DB, projects Projects, users Users, storages *gitrepo.Storages) *Service {
	return &Service{db: db, projects: projects, users: users, storages: storages}
}

// Filter is a feed's filters, as the API reads them.
type Filter struct {
	Action     model.EventAction // "" for any
	TargetType string            // the API's spelling ("merge_request"); "" for any
	// Before and After are dates (YYYY-MM-DD): events created before the
	// day Before starts, after the day After ends (GitLab's exclusive
	// bounds).
	Before, After string
	Asc           bool
}

// storeFilter turns f into the store's filter.
func (s *Service) storeFilter(f Filter) (store.EventFilter, error) {
	sf := store.EventFilter{Action: f.Action, Asc: f.Asc}
	if f.TargetType != "" {
		t, ok := model.EventTargetTypes[f.TargetType]
		if !ok {
			return sf, model.Param("target_type does not have a valid value")
		}
		sf.TargetType = t
	}
	if f.Before != "" {
		d, err := time.Parse(model.DateLayout, f.Before)
		if err != nil {
			return sf, model.Param("before is invalid")
		}
		sf.Before = &d
	}
	if f.After != "" {
		d, err := time.Parse(model.DateLayout, f.After)
		if err != nil {
			return sf, model.Param("after is invalid")
		}
		end := d.AddDate(0, 0, 1).Add(-time.Microsecond)
		sf.After = &end
	}
	return sf, nil
}

func (s *Service) viewer(a auth.Actor) *store.Viewer {
	v := &store.Viewer{UserID: a.UserID(), Admin: a.Admin(), Today: s.db.Now().UTC().Format(model.DateLayout)}
	if a.User != nil {
		v.External = a.User.External
	}
	return v
}

// Page is one page of a feed with the authors of its events.
type Page struct {
	Events []model.Event
	Info   model.PageInfo
}

// ProjectEvents returns a page of the events of project ref, which the
// caller must be able to see (else not found). Events of a feature the
// caller may not read (pushes without code access, merge requests) are
// left out.
func (s *Service) ProjectEvents(ctx context.Context, a auth.Actor, ref string, f Filter, pg model.Page) (Page, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return Page{}, err
	}
	sf, err := s.storeFilter(f)
	if err != nil {
		return Page{}, err
	}
	sf.ProjectID = p.ID
	res := auth.Resource{Project: &p, Access: acc}
	if !auth.Can(a, auth.ReadCode, res) {
		sf.ExcludeActions = append(sf.ExcludeActions, model.EventPushed)
	}
	if !auth.Can(a, auth.ReadMergeRequest, res) {
		sf.ExcludeTargetTypes = append(sf.ExcludeTargetTypes, model.EventTargetMergeRequest)
	}
	if !auth.Can(a, auth.ReadIssue, res) {
		sf.ExcludeTargetTypes = append(sf.ExcludeTargetTypes, model.EventTargetIssue)
	} else if !auth.Can(a, auth.ReadConfidentialIssues, res) {
		sf.HideConfidentialIssues, sf.ConfidentialViewer = true, a.UserID()
	}
	return s.list(ctx, sf, pg)
}

// UserEvents returns a page of the events user ref authored in projects
// the caller may see; none when the user's profile is private to the
// caller.
func (s *Service) UserEvents(ctx context.Context, a auth.Actor, ref string, f Filter, pg model.Page) (Page, error) {
	u, err := s.users.ByIDOrUsername(ctx, a, ref)
	if err != nil {
		return Page{}, err
	}
	sf, err := s.storeFilter(f)
	if err != nil {
		return Page{}, err
	}
	if !auth.Can(a, auth.ReadUserProfile, auth.Resource{User: &u}) {
		return Page{Events: []model.Event{}, Info: model.PageInfo{TotalKnown: true}}, nil
	}
	sf.AuthorID, sf.Viewer = u.ID, s.viewer(a)
	return s.visibleList(ctx, a, sf, pg)
}

// OwnEvents returns a page of the caller's own events (in projects the
// caller may still see).
func (s *Service) OwnEvents(ctx context.Context, a auth.Actor, f Filter, pg model.Page) (Page, error) {
	if !a.SignedIn() {
		return Page{}, model.Unauthorized("")
	}
	sf, err := s.storeFilter(f)
	if err != nil {
		return Page{}, err
	}
	sf.AuthorID, sf.Viewer = a.UserID(), s.viewer(a)
	return s.visibleList(ctx, a, sf, pg)
}

// visibleList is a page of a feed across projects (a user's), each event
// kept only when the caller may read what it is about: a push needs the
// project's code, a merge request's event its merge requests — GitLab's
// Event#visible_to_user?, applied to the page after paging as GitLab's
// EventsFinder does (the total counts the events of visible projects).
func (s *Service) visibleList(ctx context.Context, a auth.Actor, f store.EventFilter, pg model.Page) (Page, error) {
	page, err := s.list(ctx, f, pg)
	if err != nil || len(page.Events) == 0 {
		return page, err
	}
	ids := make([]int64, 0, len(page.Events))
	for _, e := range page.Events {
		if e.ProjectID != 0 && !slices.Contains(ids, e.ProjectID) {
			ids = append(ids, e.ProjectID)
		}
	}
	projects, access, err := s.projects.WithAccess(ctx, a, ids)
	if err != nil {
		return Page{}, err
	}
	var issueIDs []int64
	for _, e := range page.Events {
		if e.TargetType == model.EventTargetIssue && !slices.Contains(issueIDs, e.TargetID) {
			issueIDs = append(issueIDs, e.TargetID)
		}
	}
	issues, err := s.db.IssuesByIDs(ctx, issueIDs)
	if err != nil {
		return Page{}, err
	}
	kept := page.Events[:0]
	for _, e := range page.Events {
		if visibleTo(a, e, projects, access, issues) {
			kept = append(kept, e)
		}
	}
	page.Events = kept
	return page, nil
}

// visibleTo reports whether a may read what e is about; issues has the
// issues of the page's issue events (a confidential issue's events are
// for reporters up, its author and its assignees).
func visibleTo(a auth.Actor, e model.Event, projects map[int64]model.Project, access map[int64]model.AccessLevel,
	issues map[int64]model.Issue) bool {
	if e.ProjectID == 0 {
		return true
	}
	p, ok := projects[e.ProjectID]
	if !ok {
		return false
	}
	res := auth.Resource{Project: &p, Access: access[e.ProjectID]}
	switch {
	case !auth.Can(a, auth.ReadProject, res):
		return false
	case e.Action == model.EventPushed:
		return auth.Can(a, auth.ReadCode, res)
	case e.TargetType == model.EventTargetMergeRequest:
		return auth.Can(a, auth.ReadMergeRequest, res)
	case e.TargetType == model.EventTargetIssue:
		if !auth.Can(a, auth.ReadIssue, res) {
			return false
		}
		i, ok := issues[e.TargetID]
		if !ok || !i.Confidential || auth.Can(a, auth.ReadConfidentialIssues, res) {
			return true
		}
		return a.SignedIn() && (a.Is(i.AuthorID) || i.Assigned(a.UserID()))
	}
	return true
}

func (s *Service) list(ctx context.Context, f store.EventFilter, pg model.Page) (Page, error) {
	list, info, err := s.db.ListEvents(ctx, f, pg)
	if err != nil {
		return Page{}, err
	}
	ids := make([]int64, 0, len(list))
	for _, e := range list {
		ids = append(ids, e.AuthorID)
	}
	users, err := s.db.UserBasicsByIDs(ctx, ids)
	if err != nil {
		return Page{}, err
	}
	for i := range list {
		list[i].Author = users[list[i].AuthorID]
	}
	return Page{Events: list, Info: info}, nil
}

// BulkPushLimit is the number of refs of one type moved alike in one push
// above which the push is one event (GitLab's push_event_activities_limit
// default).
const BulkPushLimit = 3

// maxTitle bounds a push event's commit title (GitLab's PushEventPayload).
const maxTitle = 70

var objectID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// OnRefsChanged records the push events of e: one per branch or tag
// moved, or one per kind (ref type and action) when more than
// BulkPushLimit refs of the kind moved. A system write (no actor) and
// refs outside branches and tags record nothing. A delivery seen again
// records nothing again.
func (s *Service) OnRefsChanged(ctx context.Context, e model.RefsChanged) error {
	if e.ActorID == 0 {
		return nil
	}
	type kind struct{ refType, action string }
	var order []kind
	byKind := map[kind][]model.RefUpdate{}
	for _, u := range e.Updates {
		k := kind{action: model.PushPushed}
		switch {
		case strings.HasPrefix(u.Ref, "refs/heads/"):
			k.refType = model.RefBranch
		case strings.HasPrefix(u.Ref, "refs/tags/"):
			k.refType = model.RefTag
		default:
			continue
		}
		if !objectID.MatchString(u.Old) || !objectID.MatchString(u.New) {
			continue
		}
		switch {
		case u.Old == model.ZeroRef:
			k.action = model.PushCreated
		case u.New == model.ZeroRef:
			k.action = model.PushRemoved
		}
		if _, seen := byKind[k]; !seen {
			order = append(order, k)
		}
		byKind[k] = append(byKind[k], u)
	}
	if len(order) == 0 {
		return nil
	}
	p, err := s.db.ProjectByID(ctx, e.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // removed since
	}
	if err != nil {
		return err
	}
	var events []model.Event
	for _, k := range order {
		ups := byKind[k]
		if len(ups) > BulkPushLimit {
			events = append(events, model.Event{Push: &model.PushData{Action: k.action, RefType: k.refType, RefCount: int64(len(ups))}})
			continue
		}
		for _, u := range ups {
			d, err := s.pushData(ctx, p, k.refType, k.action, u)
			if err != nil {
				return err
			}
			events = append(events, model.Event{Push: &d})
		}
	}
	at := e.At
	if at.IsZero() {
		at = s.db.Now()
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if done, err := tx.PushEventsRecorded(ctx, p.ID, e.ActorID, at); err != nil || done {
			return err
		}
		for i := range events {
			ev := &events[i]
			ev.ProjectID, ev.AuthorID, ev.Action, ev.CreatedAt = p.ID, e.ActorID, model.EventPushed, at
			if err := tx.AddEvent(ctx, ev); err != nil {
				return fmt.Errorf("record push event: %w", err)
			}
		}
		return nil
	})
}

// pushData is the payload of one ref's push, as GitLab counts it: a new
// branch counts its commits not on the default branch (all of them when
// it is, or there is none yet), a moved branch the commits between its
// tips, a tag its commit; the title is the newest commit's.
func (s *Service) pushData(ctx context.Context, p model.Project, refType, action string, u model.RefUpdate) (model.PushData, error) {
	name := strings.TrimPrefix(strings.TrimPrefix(u.Ref, "refs/heads/"), "refs/tags/")
	d := model.PushData{Action: action, RefType: refType, Ref: name}
	if action != model.PushCreated {
		d.CommitFrom = u.Old
	}
	if action == model.PushRemoved {
		return d, nil
	}
	d.CommitTo = u.New
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return d, err
	}
	c, err := repo.ReadCommit(ctx, u.New)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return d, nil // not a commit (a tag of a tree or blob), or gone
	}
	if err != nil {
		return d, fmt.Errorf("read pushed commit %s: %w", u.New, err)
	}
	d.CommitTitle = truncate(c.Title(), maxTitle)
	if refType == model.RefTag {
		d.CommitCount = 1
		return d, nil
	}
	rev := u.Old + ".." + u.New
	if action == model.PushCreated {
		rev = u.New
		if p.DefaultBranch != "" && p.DefaultBranch != name {
			def, ok, err := repo.ResolveCommit(ctx, "refs/heads/"+p.DefaultBranch)
			if err != nil {
				return d, err
			}
			if ok {
				rev = string(def) + ".." + u.New
			}
		}
	}
	n, err := repo.CountCommits(ctx, gitrepo.LogOptions{Rev: rev})
	var ge *git.Error
	if errors.As(err, &ge) {
		return d, nil // an old tip pruned since: no count
	}
	if err != nil {
		return d, err
	}
	d.CommitCount = int64(n)
	return d, nil
}

// truncate cuts s to n characters, ending in "..." when cut (Rails'
// String#truncate).
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}
