// Package labels keeps projects' and groups' labels: their titles,
// colours and descriptions, projects' priorities of labels, users'
// subscriptions, and the promotion of a project label to its group.
//
// A project sees its own labels and those of its ancestor groups; a group
// its own and its ancestors' (and, when asked, its descendants'). Labels
// are read by whoever reads the project or group and written by
// Reporters up (GitLab's admin_label).
package labels

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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

// Service manages labels.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
}

// New returns the service.
func New(db *store.DB, projects Projects, groups Groups) *Service {
	return &Service{db: db, projects: projects, groups: groups}
}

// Bounds of a label (GitLab's).
const (
	MaxTitleLength       = 255
	MaxDescriptionLength = 512 * 1024
	// MaxRefLength bounds a :label_id (an id or a title).
	MaxRefLength = MaxTitleLength
)

// View is a label as one caller sees it from a project or a group.
type View struct {
	model.Label
	Subscribed bool
	// Priority is the project's priority of the label (project views only).
	Priority *int
	// FromProject: seen from a project (the entity carries priority and
	// is_project_label).
	FromProject bool
	// Counts are set when asked for (with_counts).
	Counts *Counts
}

// Counts are the label's open and closed issues and open merge requests
// of its project, or of its group's projects, as far as the caller sees
// the issues.
type Counts struct {
	OpenIssues, ClosedIssues, OpenMergeRequests int
}

// owner is the project or group the caller addresses, with its access.
type owner struct {
	project *model.Project
	group   *model.Group
	acc     model.AccessLevel
	// groupIDs are the ancestor groups (the group itself included), root
	// first.
	groupIDs []int64
}

func (o owner) labels(includeAncestors bool) store.LabelOwners {
	var lo store.LabelOwners
	if o.project != nil {
		lo.ProjectID = o.project.ID
		if includeAncestors {
			lo.GroupIDs = o.groupIDs
		}
		return lo
	}
	lo.GroupIDs = []int64{o.group.ID}
	if includeAncestors {
		lo.GroupIDs = o.groupIDs
	}
	return lo
}

// traversalIDs parses "1/5/9/" into [1 5 9].
func traversalIDs(t string) []int64 {
	var out []int64
	for _, s := range strings.Split(strings.TrimSuffix(t, "/"), "/") {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

func (s *Service) project(ctx context.Context, a auth.Actor, ref string) (owner, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return owner{}, err
	}
	o := owner{project: &p, acc: acc}
	if p.Namespace.Kind == model.NamespaceGroup {
		o.groupIDs = traversalIDs(p.Namespace.Traversal)
	}
	return o, nil
}

func (s *Service) group(ctx context.Context, a auth.Actor, ref string) (owner, error) {
	g, acc, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return owner{}, err
	}
	return owner{group: &g, acc: acc, groupIDs: traversalIDs(g.Traversal)}, nil
}

func (s *Service) resolve(ctx context.Context, a auth.Actor, r model.OwnerRef) (owner, error) {
	if !r.Group {
		return s.project(ctx, a, r.Ref)
	}
	return s.group(ctx, a, r.Ref)
}

// mayAdmin: Reporters up (and administrators) write labels.
func mayAdmin(a auth.Actor, o owner) bool { return a.Admin() || o.acc >= model.Reporter }

// ListOptions are a list's filters.
type ListOptions struct {
	WithCounts              bool
	IncludeAncestorGroups   bool
	IncludeDescendantGroups bool // groups only
	// OnlyGroupLabels false adds, to a group's list, the labels of its
	// projects (of its subgroups' too with IncludeDescendantGroups).
	OnlyGroupLabels bool
	Search          string
}

// List returns a page of the labels a project or group sees, by title.
func (s *Service) List(ctx context.Context, a auth.Actor, r model.OwnerRef, opt ListOptions, page model.Page) ([]View, model.PageInfo, error) {
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	lo := o.labels(opt.IncludeAncestorGroups)
	if o.group != nil {
		// Members (and administrators) see every subgroup and project of
		// the tree; others those their visibility lets them see.
		var vis []model.Visibility
		if !a.Admin() && o.acc < model.Guest {
			vis = []model.Visibility{model.Public}
			if a.SignedIn() && !a.User.External {
				vis = append(vis, model.Internal)
			}
		}
		if opt.IncludeDescendantGroups {
			lo.DescendantsOf, lo.DescendantVisibilities = o.group.Traversal, vis
		}
		if !opt.OnlyGroupLabels {
			lo.ProjectsOf, lo.ProjectVisibilities = o.group.ID, vis
			if opt.IncludeDescendantGroups {
				lo.ProjectsUnder = o.group.Traversal
			}
		}
	}
	list, info, err := s.db.Labels(ctx, lo, opt.Search, page)
	if err != nil {
		return nil, info, err
	}
	views, err := s.views(ctx, a, o, list, opt.WithCounts)
	return views, info, err
}

// views decorates labels with the caller's subscriptions, the project's
// priorities and, when asked, counts.
func (s *Service) views(ctx context.Context, a auth.Actor, o owner, list []model.Label, counts bool) ([]View, error) {
	ids := make([]int64, len(list))
	for i, l := range list {
		ids[i] = l.ID
	}
	subs, err := s.db.LabelSubscriptions(ctx, a.UserID(), ids)
	if err != nil {
		return nil, err
	}
	var prios map[int64]int
	if o.project != nil {
		if prios, err = s.db.LabelPriorities(ctx, o.project.ID, ids); err != nil {
			return nil, err
		}
	}
	out := make([]View, len(list))
	for i, l := range list {
		v := View{Label: l, Subscribed: subs[l.ID], FromProject: o.project != nil}
		if p, ok := prios[l.ID]; ok {
			v.Priority = &p
		}
		if counts {
			var c Counts
			if o.project != nil {
				c.OpenMergeRequests, err = s.db.OpenMergeRequestsLabelled(ctx, o.project.ID, "", l.Title)
			} else {
				c.OpenMergeRequests, err = s.db.OpenMergeRequestsLabelled(ctx, 0, o.group.Traversal, l.Title)
			}
			if err != nil {
				return nil, err
			}
			if c.OpenIssues, c.ClosedIssues, err = s.issueCounts(ctx, a, o, l.Title); err != nil {
				return nil, err
			}
			v.Counts = &c
		}
		out[i] = v
	}
	return out, nil
}

// find looks a label up by id or title among the labels the owner sees
// (its ancestors' too when includeAncestors): 404 Label Not Found.
func (s *Service) find(ctx context.Context, o owner, labelRef string, includeAncestors bool) (model.Label, error) {
	if labelRef == "" || len(labelRef) > MaxRefLength*4 {
		return model.Label{}, model.NotFound("Label")
	}
	id, _ := strconv.ParseInt(labelRef, 10, 64)
	l, err := s.db.FindLabel(ctx, o.labels(includeAncestors), id, labelRef)
	if errors.Is(err, model.ErrNotFound) {
		return l, model.NotFound("Label")
	}
	return l, err
}

func (s *Service) view(ctx context.Context, a auth.Actor, o owner, l model.Label) (View, error) {
	vs, err := s.views(ctx, a, o, []model.Label{l}, false)
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// Get returns one label by id or title.
func (s *Service) Get(ctx context.Context, a auth.Actor, r model.OwnerRef, labelRef string, includeAncestors bool) (View, error) {
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return View{}, err
	}
	l, err := s.find(ctx, o, labelRef, includeAncestors)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, o, l)
}

// Input carries a label's attributes; nil means "not given".
type Input struct {
	Title, Color, Description *string
	// Priority (projects only): SetPriority says it was given, a nil
	// Priority then removes it.
	SetPriority bool
	Priority    *int
}

// validate checks and normalises in (the colour to hex), GitLab's
// messages by field.
func validate(in *Input) error {
	var f model.FieldErrors
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		in.Title = &t
		switch {
		case t == "":
			f.Add("title", "can't be blank")
		case utf8.RuneCountInString(t) > MaxTitleLength:
			f.Add("title", fmt.Sprintf("is too long (maximum is %d characters)", MaxTitleLength))
		case strings.Contains(t, ","):
			f.Add("title", "is invalid")
		}
	}
	if in.Color != nil {
		c, ok := Color(strings.TrimSpace(*in.Color))
		if !ok {
			f.Add("color", "must be a valid color code")
		}
		in.Color = &c
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescriptionLength {
		f.Add("description", fmt.Sprintf("is too long (maximum is %d characters)", MaxDescriptionLength))
	}
	if in.Priority != nil && *in.Priority < 0 {
		f.Add("priority", "must be greater than or equal to 0")
	}
	return f.Err()
}

// errExists is GitLab's answer to a title taken in the project or group.
func errExists() error { return model.Conflict("Label already exists") }

// Create adds a label to a project or group (Reporters up). A title the
// project or group already has is 409 Label already exists.
func (s *Service) Create(ctx context.Context, a auth.Actor, r model.OwnerRef, in Input) (View, error) {
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return View{}, err
	}
	if !mayAdmin(a, o) {
		return View{}, model.Forbidden("")
	}
	if in.Title == nil || in.Color == nil {
		return View{}, model.Invalid("title", "can't be blank")
	}
	if err := validate(&in); err != nil {
		return View{}, err
	}
	l := model.Label{Title: *in.Title, Color: *in.Color}
	if in.Description != nil {
		l.Description = *in.Description
	}
	if o.project != nil {
		l.ProjectID = o.project.ID
	} else {
		l.GroupID = o.group.ID
	}
	// As GitLab: a title any label the owner sees (its groups' too) has
	// is taken.
	if _, err := s.db.FindLabel(ctx, o.labels(true), 0, l.Title); err == nil {
		return View{}, errExists()
	} else if !errors.Is(err, model.ErrNotFound) {
		return View{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateLabel(ctx, &l); err != nil {
			return err
		}
		if o.project != nil && in.Priority != nil {
			return tx.SetLabelPriority(ctx, o.project.ID, l.ID, in.Priority)
		}
		return nil
	})
	if errors.Is(err, model.ErrConflict) {
		return View{}, errExists()
	}
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, o, l)
}

// Update changes a project's or group's own label (Reporters up): title,
// colour, description and (projects) priority.
func (s *Service) Update(ctx context.Context, a auth.Actor, r model.OwnerRef, labelRef string, in Input) (View, error) {
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return View{}, err
	}
	if !mayAdmin(a, o) {
		return View{}, model.Forbidden("")
	}
	l, err := s.find(ctx, o, labelRef, false)
	if err != nil {
		return View{}, err
	}
	if err := validate(&in); err != nil {
		return View{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateLabel(ctx, &l, in.Title, in.Color, in.Description); err != nil {
			return err
		}
		if o.project != nil && in.SetPriority {
			return tx.SetLabelPriority(ctx, o.project.ID, l.ID, in.Priority)
		}
		return nil
	})
	var taken *store.UniqueError
	switch {
	case errors.As(err, &taken):
		return View{}, model.Invalid("title", "has already been taken")
	case errors.Is(err, model.ErrNotFound), errors.Is(err, model.ErrConflict): // removed meanwhile
		return View{}, model.NotFound("Label")
	case err != nil:
		return View{}, err
	}
	return s.view(ctx, a, o, l)
}

// Delete removes a project's or group's own label (Reporters up).
func (s *Service) Delete(ctx context.Context, a auth.Actor, r model.OwnerRef, labelRef string) error {
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return err
	}
	if !mayAdmin(a, o) {
		return model.Forbidden("")
	}
	l, err := s.find(ctx, o, labelRef, false)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteLabel(ctx, l.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Label")
	}
	return err
}

// Subscribe subscribes (on) or unsubscribes the caller to a label the
// project or group sees; 304 when that changes nothing, 401 for
// anonymous callers.
func (s *Service) Subscribe(ctx context.Context, a auth.Actor, r model.OwnerRef, labelRef string, on bool) (View, error) {
	if !a.SignedIn() {
		return View{}, model.Unauthorized("")
	}
	o, err := s.resolve(ctx, a, r)
	if err != nil {
		return View{}, err
	}
	l, err := s.find(ctx, o, labelRef, true)
	if err != nil {
		return View{}, err
	}
	var changed bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		changed, err = tx.SetLabelSubscription(ctx, l.ID, a.UserID(), on)
		return err
	})
	if errors.Is(err, model.ErrConflict) { // the label went away meanwhile
		return View{}, model.NotFound("Label")
	}
	if err != nil {
		return View{}, err
	}
	if !changed {
		return View{}, model.NotModified()
	}
	return s.view(ctx, a, o, l)
}

// Promote turns a project label into a label of the project's group
// (Reporters up in the project who may also write the group's labels):
// the group's label of that title when there is one, a new one
// otherwise; the same-titled labels of the group's projects merge into
// it, their priorities and subscriptions moving along. The result is the
// group label.
func (s *Service) Promote(ctx context.Context, a auth.Actor, projectRef, labelRef string) (View, error) {
	o, err := s.project(ctx, a, projectRef)
	if err != nil {
		return View{}, err
	}
	if !mayAdmin(a, o) {
		return View{}, model.Forbidden("")
	}
	l, err := s.find(ctx, o, labelRef, false)
	if err != nil {
		return View{}, err
	}
	if o.project.Namespace.Kind != model.NamespaceGroup {
		return View{}, model.BadRequest("Failed to promote project label to group label")
	}
	g, err := s.group(ctx, a, strconv.FormatInt(o.project.Namespace.ID, 10))
	if err != nil {
		return View{}, err
	}
	if !mayAdmin(a, g) {
		return View{}, model.Forbidden("")
	}
	var gl model.Label
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		gl, err = tx.FindLabel(ctx, store.LabelOwners{GroupIDs: []int64{g.group.ID}}, 0, l.Title)
		if errors.Is(err, model.ErrNotFound) {
			gl = model.Label{Title: l.Title, Color: l.Color, Description: l.Description, GroupID: g.group.ID}
			err = tx.CreateLabel(ctx, &gl)
		}
		if err != nil {
			return err
		}
		same, err := tx.ProjectLabelsTitled(ctx, g.group.ID, l.Title)
		if err != nil {
			return err
		}
		ids := []int64{l.ID}
		for _, x := range same {
			if x.ID != l.ID {
				ids = append(ids, x.ID)
			}
		}
		return tx.MergeLabelsInto(ctx, gl.ID, ids)
	})
	if errors.Is(err, model.ErrConflict) {
		return View{}, model.Conflict("")
	}
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, g, gl)
}

// issueCounts counts the open and closed issues carrying a label title
// that a sees: of the project (its issues readable by a; confidential
// ones for reporters up, their authors and assignees), or of the group
// tree's projects (for reporters of the group and administrators all of
// them, else those of the projects a sees whose issues are enabled,
// confidential ones only a's own or assigned to a).
func (s *Service) issueCounts(ctx context.Context, a auth.Actor, o owner, title string) (open, closed int, err error) {
	f := store.IssueFilter{Labels: []string{title}}
	if o.project != nil {
		res := auth.Resource{Project: o.project, Access: o.acc}
		if !auth.Can(a, auth.ReadIssue, res) {
			return 0, 0, nil
		}
		f.ProjectIDs = []int64{o.project.ID}
		if !auth.Can(a, auth.ReadConfidentialIssues, res) {
			f.Visibility = &store.IssueVisibility{UserID: a.UserID()}
		}
	} else {
		f.Under = o.group.Traversal
		if !a.Admin() && o.acc < model.Reporter {
			v := &store.Viewer{UserID: a.UserID(), Today: s.db.Now().UTC().Format(model.DateLayout)}
			if a.User != nil {
				v.External = a.User.External
			}
			f.Viewer, f.Visibility = v, &store.IssueVisibility{UserID: a.UserID()}
		}
	}
	c, err := s.db.IssueCountsWhere(ctx, f)
	return c.Opened, c.Closed, err
}
