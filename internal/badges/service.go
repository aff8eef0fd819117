// Package badges keeps the badges of projects and groups (GitLab's
// ProjectBadge and GroupBadge): a link URL and an image URL, both with
// placeholders rendered per project when read. A project's list holds its
// own badges and those of its ancestor groups.
package badges

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access and lists a group's
// projects the caller sees (the projects service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	// FirstGroupProject is the project group badges are rendered with on
	// the group's own list; ok false when the caller sees none.
	FirstGroupProject(ctx context.Context, a auth.Actor, groupID int64) (p model.Project, ok bool, err error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Repos reads what placeholders need of a project's repository (the
// repository files service).
type Repos interface {
	DefaultBranchTip(ctx context.Context, p model.Project) (string, error)
	LatestTag(ctx context.Context, p model.Project) (string, error)
}

// Service answers every badge question.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
	repos    Repos
	server   string // the host of the external URL, %{gitlab_server}
}

// New returns the badges service; externalURL gives %{gitlab_server}.
func New(db *store.DB, projects Projects, groups Groups, repos Repos, externalURL string) *Service {
	s := &Service{db: db, projects: projects, groups: groups, repos: repos}
	if u, err := url.Parse(externalURL); err == nil {
		s.server = u.Hostname()
	}
	return s
}

// View is a badge with its URLs rendered.
type View struct {
	model.Badge
	RenderedLinkURL  string
	RenderedImageURL string
}

// owner is a resolved owner with the caller's access, the badges it lists
// and the project they render with (nil: none, URLs stay as written).
type owner struct {
	project *model.Project
	group   *model.Group
	access  model.AccessLevel
	filter  store.BadgeFilter
	render  *model.Project
}

func (o *owner) resource() auth.Resource {
	return auth.Resource{Project: o.project, Group: o.group, Access: o.access}
}

// errNotFound is GitLab's answer for a badge the owner does not list.
var errNotFound = model.NotFound("Badge")

// open resolves the owner (404 when the caller may not see it); admin
// asks for admin_group / admin_project (403), GitLab's
// authorize_adm_source!.
func (s *Service) open(ctx context.Context, a auth.Actor, o model.OwnerRef, admin bool) (*owner, error) {
	if admin && !a.SignedIn() {
		return nil, model.Unauthorized("")
	}
	w := &owner{}
	if o.Group {
		g, acc, err := s.groups.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		w.group, w.access = &g, acc
		w.filter.GroupIDs = []int64{g.ID}
	} else {
		p, acc, err := s.projects.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		w.project, w.access, w.render = &p, acc, &p
		w.filter.ProjectID = p.ID
		if p.Namespace.Kind == model.NamespaceGroup {
			w.filter.GroupIDs = traversalIDs(p.Namespace.Traversal)
		}
	}
	if admin {
		action := auth.UpdateProject
		if o.Group {
			action = auth.AdminGroup
		}
		if !auth.Can(a, action, w.resource()) {
			return nil, model.Forbidden("")
		}
	}
	return w, nil
}

// renderer picks the project w's badges render with: the project itself,
// or on a group the project GitLab's badge helpers pick (its first
// project the caller sees); nil when there is none.
func (s *Service) renderer(ctx context.Context, a auth.Actor, w *owner) error {
	if w.render != nil || w.group == nil {
		return nil
	}
	p, ok, err := s.projects.FirstGroupProject(ctx, a, w.group.ID)
	if err != nil || !ok {
		return err
	}
	w.render = &p
	return nil
}

// traversalIDs parses "1/5/9/" into its ids.
func traversalIDs(t string) []int64 {
	var out []int64
	start := 0
	for i := 0; i <= len(t); i++ {
		if i == len(t) || t[i] == '/' {
			if id, err := strconv.ParseInt(t[start:i], 10, 64); err == nil && id > 0 {
				out = append(out, id)
			}
			start = i + 1
		}
	}
	return out
}

// values computes placeholder values of one project, each at most once
// and only when a URL holds it.
type values struct {
	s    *Service
	ctx  context.Context
	p    *model.Project
	memo map[string]*string
	err  error
}

func (s *Service) values(ctx context.Context, p *model.Project) *values {
	return &values{s: s, ctx: ctx, p: p, memo: map[string]*string{}}
}

func (v *values) get(name string) (string, bool) {
	if got, ok := v.memo[name]; ok {
		if got == nil {
			return "", false
		}
		return *got, true
	}
	val, ok, err := v.compute(name)
	if err != nil && v.err == nil {
		v.err = err
	}
	if !ok || err != nil {
		v.memo[name] = nil
		return "", false
	}
	v.memo[name] = &val
	return val, true
}

// compute is GitLab's Badge::PLACEHOLDERS for one project; ok false
// leaves the placeholder as written (GitLab's nil).
func (v *values) compute(name string) (string, bool, error) {
	p := v.p
	switch name {
	case "project_path":
		return p.FullPath(), true, nil
	case "project_title":
		return p.Name, true, nil
	case "project_name":
		return p.Path, true, nil
	case "project_id":
		return strconv.FormatInt(p.ID, 10), true, nil
	case "project_namespace":
		// GitLab renders project.project_namespace.to_param: the
		// project's own namespace, whose full path is the project's.
		return p.FullPath(), true, nil
	case "group_name":
		// project.group&.to_param: the full path of the project's
		// group; nothing for a personal project.
		if p.Namespace.Kind != model.NamespaceGroup {
			return "", false, nil
		}
		return p.Namespace.FullPath, true, nil
	case "gitlab_server":
		return v.s.server, v.s.server != "", nil
	case "default_branch":
		if p.EmptyRepo || p.DefaultBranch == "" {
			return "", false, nil
		}
		return p.DefaultBranch, true, nil
	case "commit_sha":
		tip, err := v.s.repos.DefaultBranchTip(v.ctx, *p)
		return tip, tip != "", err
	case "latest_tag":
		tag, err := v.s.repos.LatestTag(v.ctx, *p)
		return tag, tag != "", err
	}
	// gitlab_pages_domain: Quarry serves no Pages.
	return "", false, nil
}

func (s *Service) view(b model.Badge, v *values) View {
	out := View{Badge: b, RenderedLinkURL: b.LinkURL, RenderedImageURL: b.ImageURL}
	if v != nil {
		out.RenderedLinkURL = Render(b.LinkURL, v.get)
		out.RenderedImageURL = Render(b.ImageURL, v.get)
	}
	return out
}

func (s *Service) valuesOf(ctx context.Context, w *owner) *values {
	if w.render == nil {
		return nil
	}
	return s.values(ctx, w.render)
}

// List returns one page of the owner's badges, oldest first, optionally
// only those named name.
func (s *Service) List(ctx context.Context, a auth.Actor, o model.OwnerRef, name *string, page model.Page) ([]View, model.PageInfo, error) {
	w, err := s.open(ctx, a, o, false)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	f := w.filter
	f.Name = name
	if name != nil && utf8.RuneCountInString(*name) > MaxNameLength {
		// No stored badge has a longer name.
		return []View{}, model.PageInfo{TotalKnown: true}, nil
	}
	list, info, err := s.db.ListBadges(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	if err := s.renderer(ctx, a, w); err != nil {
		return nil, info, err
	}
	v := s.valuesOf(ctx, w)
	out := make([]View, len(list))
	for i := range list {
		out[i] = s.view(list[i], v)
	}
	if v != nil && v.err != nil {
		return nil, info, fmt.Errorf("render badges: %w", v.err)
	}
	return out, info, nil
}

// Get returns one badge the owner lists (a project lists its groups').
func (s *Service) Get(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) (View, error) {
	w, err := s.open(ctx, a, o, false)
	if err != nil {
		return View{}, err
	}
	return s.get(ctx, a, w, id)
}

func (s *Service) get(ctx context.Context, a auth.Actor, w *owner, id int64) (View, error) {
	b, err := s.db.BadgeIn(ctx, w.filter, id)
	if errors.Is(err, model.ErrNotFound) {
		return View{}, errNotFound
	}
	if err != nil {
		return View{}, err
	}
	return s.rendered(ctx, a, w, b)
}

func (s *Service) rendered(ctx context.Context, a auth.Actor, w *owner, b model.Badge) (View, error) {
	if err := s.renderer(ctx, a, w); err != nil {
		return View{}, err
	}
	v := s.valuesOf(ctx, w)
	out := s.view(b, v)
	if v != nil && v.err != nil {
		return View{}, fmt.Errorf("render badge: %w", v.err)
	}
	return out, nil
}

// Preview renders URLs as a badge of the owner would show them, without
// storing anything (GitLab's render endpoint; admin only).
func (s *Service) Preview(ctx context.Context, a auth.Actor, o model.OwnerRef, linkURL, imageURL string) (View, error) {
	w, err := s.open(ctx, a, o, true)
	if err != nil {
		return View{}, err
	}
	b := model.Badge{}
	if err := (Input{LinkURL: &linkURL, ImageURL: &imageURL}).apply(&b); err != nil {
		return View{}, err
	}
	return s.rendered(ctx, a, w, b)
}

// Create adds a badge to the owner.
func (s *Service) Create(ctx context.Context, a auth.Actor, o model.OwnerRef, in Input) (View, error) {
	w, err := s.open(ctx, a, o, true)
	if err != nil {
		return View{}, err
	}
	var b model.Badge
	if err := in.apply(&b); err != nil {
		return View{}, err
	}
	if w.project != nil {
		b.ProjectID = w.project.ID
	} else {
		b.GroupID = w.group.ID
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateBadge(ctx, &b) }); err != nil {
		return View{}, fmt.Errorf("create badge: %w", err)
	}
	return s.rendered(ctx, a, w, b)
}

// own finds a badge the owner holds itself: a project cannot change its
// groups' badges (404, as GitLab's find_badge on source.badges would
// find it but the write goes to the group's).
func (s *Service) own(ctx context.Context, w *owner, id int64) (model.Badge, error) {
	f := store.BadgeFilter{GroupIDs: w.filter.GroupIDs}
	if w.project != nil {
		f = store.BadgeFilter{ProjectID: w.project.ID}
	}
	b, err := s.db.BadgeIn(ctx, f, id)
	if errors.Is(err, model.ErrNotFound) {
		return b, errNotFound
	}
	return b, err
}

// Update changes a badge of the owner; a concurrent change of the same
// badge is a 409.
func (s *Service) Update(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64, in Input) (View, error) {
	w, err := s.open(ctx, a, o, true)
	if err != nil {
		return View{}, err
	}
	b, err := s.own(ctx, w, id)
	if err != nil {
		return View{}, err
	}
	if err := in.apply(&b); err != nil {
		return View{}, err
	}
	var ok bool
	if err := s.db.InTx(ctx, func(tx *store.Tx) (err error) { ok, err = tx.UpdateBadge(ctx, &b); return err }); err != nil {
		return View{}, fmt.Errorf("update badge: %w", err)
	}
	if !ok {
		return View{}, model.Conflict("Badge was changed by another request")
	}
	return s.rendered(ctx, a, w, b)
}

// Delete removes a badge of the owner.
func (s *Service) Delete(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) error {
	w, err := s.open(ctx, a, o, true)
	if err != nil {
		return err
	}
	if _, err := s.own(ctx, w, id); err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteBadge(ctx, id) })
	if errors.Is(err, model.ErrNotFound) {
		return errNotFound
	}
	return err
}

// GroupBadges lists every badge a group holds itself, oldest first, for
// a group export (no permission check: the caller has).
func (s *Service) GroupBadges(ctx context.Context, groupID int64) ([]model.Badge, error) {
	var out []model.Badge
	page := model.Page{Keyset: true, PerPage: 100}
	for {
		list, info, err := s.db.ListBadges(ctx, store.BadgeFilter{GroupIDs: []int64{groupID}}, page)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
		if !info.HasMore {
			return out, nil
		}
		page.Cursor = info.NextCursor
	}
}
