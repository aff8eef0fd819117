// Package releases keeps the releases of projects (GitLab's Release):
// one per tag, with asset links and milestones. A release names its tag;
// creating one for a tag that does not exist makes the tag from a ref
// through the repository files service, and removing a release keeps the
// tag.
package releases

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/repofiles"
	"quarry/internal/store"
)

// Bounds of a release's fields.
const (
	MaxTagName       = 255
	MaxName          = 255
	MaxDescription   = 1_000_000
	MaxMilestones    = 100
	MaxMilestoneName = 255
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Groups resolves groups with the caller's access and lists the projects
// of a group's tree the caller sees (the groups and projects services).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Repos reads and makes the tags releases name (the repository files
// service; it checks no permission, the releases service has).
type Repos interface {
	ReleaseTag(ctx context.Context, p model.Project, name string) (repofiles.Tag, bool, error)
	CreateReleaseTag(ctx context.Context, a auth.Actor, p model.Project, name, ref, message string) (repofiles.Tag, error)
	ReleaseCommit(ctx context.Context, p model.Project, sha string) (repofiles.Commit, bool, error)
}

// Service answers every release question.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
	repos    Repos
}

// New returns the releases service.
func New(db *store.DB, projects Projects, groups Groups, repos Repos) *Service {
	return &Service{db: db, projects: projects, groups: groups, repos: repos}
}

// View is a release with what its entity shows.
type View struct {
	model.Release
	Project model.Project
	Author  *model.User
	// Commit is the commit the release was made at (GitLab's
	// release.commit: by its sha, so a removed tag leaves it); nil when
	// the repository no longer holds it.
	Commit     *repofiles.Commit
	Links      []model.ReleaseLink
	Milestones []model.Milestone
	// IssueStats counts the issues of each milestone, by its id.
	IssueStats map[int64]store.IssueCounts
	// CanReadMilestones tells whether the caller sees the project's
	// milestones (GitLab's read_milestone).
	CanReadMilestones bool
	// Editable tells whether the caller may update the release (the
	// entity's _links.edit_url).
	Editable bool
}

var errNotFound = model.NotFound("")

// open resolves the project and checks action; a job token reaches only
// its own project's releases.
func (s *Service) open(ctx context.Context, a auth.Actor, projectRef string, action auth.Action) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return p, acc, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	if a.Job != nil && a.Job.ProjectID != p.ID {
		return p, acc, model.Forbidden("")
	}
	if !auth.Can(a, action, res) {
		if action != auth.ReadRelease && !auth.Can(a, auth.ReadRelease, res) && !a.SignedIn() {
			return p, acc, model.Unauthorized("")
		}
		return p, acc, model.Forbidden("")
	}
	return p, acc, nil
}

// ListInput orders a list.
type ListInput struct {
	OrderBy string // released_at (default) or created_at
	Asc     bool
}

// List returns one page of a project's releases.
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef string, in ListInput, page model.Page) ([]View, model.PageInfo, error) {
	p, acc, err := s.open(ctx, a, projectRef, auth.ReadRelease)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info, err := s.db.ListReleases(ctx, store.ReleaseFilter{ProjectIDs: []int64{p.ID}, OrderBy: in.OrderBy, Asc: in.Asc}, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.views(ctx, a, map[int64]projectAccess{p.ID: {p, acc}}, list)
	return out, info, err
}

type projectAccess struct {
	p   model.Project
	acc model.AccessLevel
}

// GroupList returns one page of the releases of the projects of a group
// and its subgroups that the caller may read releases of, newest release
// first (or oldest with asc).
func (s *Service) GroupList(ctx context.Context, a auth.Actor, groupRef string, asc bool, page model.Page) ([]View, model.PageInfo, error) {
	g, _, err := s.groups.Resolve(ctx, a, groupRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	tree, err := s.db.ProjectsInTree(ctx, g.Traversal)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	seen := map[int64]projectAccess{}
	var readable []int64
	for _, tp := range tree {
		id := tp.ID
		p, acc, err := s.projects.Resolve(ctx, a, strconv.FormatInt(id, 10))
		if errors.Is(err, model.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		if auth.Can(a, auth.ReadRelease, auth.Resource{Project: &p, Access: acc}) {
			seen[id] = projectAccess{p, acc}
			readable = append(readable, id)
		}
	}
	list, info, err := s.db.ListReleases(ctx, store.ReleaseFilter{ProjectIDs: readable, Asc: asc}, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.views(ctx, a, seen, list)
	return out, info, err
}

// views completes releases with their authors, tags, links and
// milestones.
func (s *Service) views(ctx context.Context, a auth.Actor, projects map[int64]projectAccess, list []model.Release) ([]View, error) {
	ids := make([]int64, len(list))
	for i, r := range list {
		ids[i] = r.ID
	}
	links, err := s.db.ReleaseLinks(ctx, ids)
	if err != nil {
		return nil, err
	}
	milestones, err := s.db.ReleaseMilestones(ctx, ids)
	if err != nil {
		return nil, err
	}
	var mids []int64
	for _, ms := range milestones {
		for _, m := range ms {
			mids = append(mids, m.ID)
		}
	}
	stats, err := s.db.MilestoneIssueCounts(ctx, mids)
	if err != nil {
		return nil, err
	}
	authors := map[int64]*model.User{}
	out := make([]View, len(list))
	for i, r := range list {
		pa := projects[r.ProjectID]
		res := auth.Resource{Project: &pa.p, Access: pa.acc}
		v := View{Release: r, Project: pa.p, Links: links[r.ID], Milestones: milestones[r.ID], IssueStats: stats,
			CanReadMilestones: auth.Can(a, auth.ReadMilestone, res), Editable: auth.Can(a, auth.UpdateRelease, res)}
		if r.AuthorID != 0 {
			u, ok := authors[r.AuthorID]
			if !ok {
				got, err := s.db.UserByID(ctx, r.AuthorID)
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return nil, err
				}
				if err == nil {
					u = &got
				}
				authors[r.AuthorID] = u
			}
			v.Author = u
		}
		c, ok, err := s.repos.ReleaseCommit(ctx, pa.p, r.SHA)
		if err != nil {
			return nil, fmt.Errorf("read commit of release %q: %w", r.Tag, err)
		}
		if ok {
			v.Commit = &c
		}
		out[i] = v
	}
	return out, nil
}

func (s *Service) view(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, r model.Release) (View, error) {
	list, err := s.views(ctx, a, map[int64]projectAccess{p.ID: {p, acc}}, []model.Release{r})
	if err != nil {
		return View{}, err
	}
	return list[0], nil
}

func (s *Service) byTag(ctx context.Context, p model.Project, tag string) (model.Release, error) {
	r, err := s.db.ReleaseByTag(ctx, p.ID, tag)
	if errors.Is(err, model.ErrNotFound) {
		return r, errNotFound
	}
	return r, err
}

// Get returns the release of a tag.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef, tag string) (View, error) {
	p, acc, err := s.open(ctx, a, projectRef, auth.ReadRelease)
	if err != nil {
		return View{}, err
	}
	r, err := s.byTag(ctx, p, tag)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, a, p, acc, r)
}

// Latest returns the tag of the project's latest release (the newest
// released_at), for the permalink.
func (s *Service) Latest(ctx context.Context, a auth.Actor, projectRef string) (model.Project, string, error) {
	p, _, err := s.open(ctx, a, projectRef, auth.ReadRelease)
	if err != nil {
		return p, "", err
	}
	list, _, err := s.db.ListReleases(ctx, store.ReleaseFilter{ProjectIDs: []int64{p.ID}}, model.Page{Keyset: true, PerPage: 1})
	if err != nil {
		return p, "", err
	}
	if len(list) == 0 {
		return p, "", errNotFound
	}
	return p, list[0].Tag, nil
}

// Input is a release's writable fields; nil leaves a field as it is.
type Input struct {
	Tag         string
	TagMessage  string
	Ref         string
	Name        *string
	Description *string
	ReleasedAt  *time.Time
	Milestones  *[]string
	Links       []LinkInput
}

func checkInput(in Input) error {
	if in.Name != nil && utf8.RuneCountInString(*in.Name) > MaxName {
		return model.BadRequestRaw("Validation failed: Name is too long (maximum is 255 characters)")
	}
	if in.Description != nil && len(*in.Description) > MaxDescription {
		return model.BadRequestRaw("Validation failed: Description is too long (maximum is 1000000 characters)")
	}
	if in.Milestones != nil && len(*in.Milestones) > MaxMilestones {
		return model.Param("milestones has too many items")
	}
	if len(in.Links) > MaxLinksPerCall {
		return model.Param("assets[links] has too many items")
	}
	return nil
}

// milestoneIDs finds the milestones titled titles in the project or its
// groups; GitLab's "Milestone(s) not found" names the missing ones.
func (s *Service) milestoneIDs(ctx context.Context, p model.Project, titles []string) ([]int64, error) {
	var groupIDs []int64
	if p.Namespace.Kind == model.NamespaceGroup {
		groupIDs = traversalIDs(p.Namespace.Traversal)
	}
	found, err := s.db.MilestoneIDsByTitle(ctx, p.ID, groupIDs, titles)
	if err != nil {
		return nil, err
	}
	var ids []int64
	var missing []string
	seen := map[int64]bool{}
	for _, t := range titles {
		id, ok := found[t]
		if !ok {
			missing = append(missing, t)
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(missing) > 0 {
		return nil, model.BadRequestRaw("Milestone(s) not found: " + strings.Join(missing, ", "))
	}
	return ids, nil
}

// Create makes a release of a tag, making the tag from in.Ref when it
// does not exist.
func (s *Service) Create(ctx context.Context, a auth.Actor, projectRef string, in Input) (View, error) {
	p, acc, err := s.open(ctx, a, projectRef, auth.CreateRelease)
	if err != nil {
		return View{}, err
	}
	if err := checkInput(in); err != nil {
		return View{}, err
	}
	if _, err := s.db.ReleaseByTag(ctx, p.ID, in.Tag); err == nil {
		return View{}, model.Conflict("Release already exists")
	} else if !errors.Is(err, model.ErrNotFound) {
		return View{}, err
	}
	var milestones []int64
	if in.Milestones != nil {
		if milestones, err = s.milestoneIDs(ctx, p, *in.Milestones); err != nil {
			return View{}, err
		}
	}
	links := make([]model.ReleaseLink, 0, len(in.Links))
	for _, li := range in.Links {
		var l model.ReleaseLink
		li.apply(&l)
		if msg, param := CheckLink(l); msg != "" {
			if param {
				return View{}, model.Param("assets[links][" + msg)
			}
			return View{}, model.BadRequestRaw("Validation failed: Links " + lowerFirst(msg))
		}
		if field := duplicate(l, links); field != "" {
			return View{}, model.BadRequestRaw("Validation failed: Links " + strings.ToLower(field) + " has already been taken")
		}
		links = append(links, l)
	}
	tag, ok, err := s.repos.ReleaseTag(ctx, p, in.Tag)
	if err != nil {
		return View{}, err
	}
	if !ok {
		if in.Ref == "" {
			return View{}, model.Unprocessable("Ref is not specified")
		}
		if tag, err = s.repos.CreateReleaseTag(ctx, a, p, in.Tag, in.Ref, in.TagMessage); err != nil {
			// Another request may have made the tag meanwhile (two
			// releases of one new tag racing): take its tag, and let the
			// unique index answer 409 to the later release.
			var raced bool
			if tag, raced, _ = s.repos.ReleaseTag(ctx, p, in.Tag); !raced {
				return View{}, err
			}
		}
	}
	r := model.Release{ProjectID: p.ID, Tag: in.Tag, Name: in.Tag, SHA: string(tag.Commit.ID)}
	if a.User != nil {
		r.AuthorID = a.User.ID
	}
	if in.Name != nil && *in.Name != "" {
		r.Name = *in.Name
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.ReleasedAt != nil {
		r.ReleasedAt = *in.ReleasedAt
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateRelease(ctx, &r); err != nil {
			return err
		}
		for i := range links {
			links[i].ReleaseID = r.ID
			if err := tx.CreateReleaseLink(ctx, &links[i]); err != nil {
				return err
			}
		}
		return tx.SetReleaseMilestones(ctx, r.ID, milestones)
	})
	if store.IsUnique(err, store.UniqueReleaseTag) || errors.Is(err, model.ErrConflict) {
		return View{}, model.Conflict("Release already exists")
	}
	if err != nil {
		return View{}, fmt.Errorf("create release: %w", err)
	}
	return s.view(ctx, a, p, acc, r)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// Update changes a release's name, description, release time and
// milestones; the tag must still exist (GitLab's "Tag does not exist").
func (s *Service) Update(ctx context.Context, a auth.Actor, projectRef, tag string, in Input) (View, error) {
	p, acc, err := s.open(ctx, a, projectRef, auth.UpdateRelease)
	if err != nil {
		return View{}, err
	}
	if err := checkInput(in); err != nil {
		return View{}, err
	}
	if _, ok, err := s.repos.ReleaseTag(ctx, p, tag); err != nil {
		return View{}, err
	} else if !ok {
		return View{}, model.NotFoundRaw("Tag does not exist")
	}
	r, err := s.byTag(ctx, p, tag)
	if err != nil {
		return View{}, err
	}
	var milestones []int64
	if in.Milestones != nil {
		if milestones, err = s.milestoneIDs(ctx, p, *in.Milestones); err != nil {
			return View{}, err
		}
	}
	if in.Name != nil {
		r.Name = *in.Name
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.ReleasedAt != nil {
		r.ReleasedAt = *in.ReleasedAt
	}
	var ok bool
	err = s.db.InTx(ctx, func(tx *store.Tx) (err error) {
		if ok, err = tx.UpdateRelease(ctx, &r); err != nil || !ok {
			return err
		}
		if in.Milestones != nil {
			return tx.SetReleaseMilestones(ctx, r.ID, milestones)
		}
		return nil
	})
	if err != nil {
		return View{}, fmt.Errorf("update release: %w", err)
	}
	if !ok {
		return View{}, model.Conflict("Release was changed by another request")
	}
	return s.view(ctx, a, p, acc, r)
}

// Delete removes a release (not its tag) and returns it as it was.
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef, tag string) (View, error) {
	p, acc, err := s.open(ctx, a, projectRef, auth.DestroyRelease)
	if err != nil {
		return View{}, err
	}
	r, err := s.byTag(ctx, p, tag)
	if err != nil {
		return View{}, err
	}
	v, err := s.view(ctx, a, p, acc, r)
	if err != nil {
		return View{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteRelease(ctx, r.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return View{}, errNotFound
	}
	return v, err
}

// traversalIDs parses "1/5/9/" into its ids.
func traversalIDs(t string) []int64 {
	var out []int64
	for _, part := range strings.Split(t, "/") {
		if id, err := strconv.ParseInt(part, 10, 64); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	return out
}
