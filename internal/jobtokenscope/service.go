// Package jobtokenscope keeps each project's CI job token scope (GitLab's
// "Limit access to this project"): whether the project admits the job
// tokens of other projects only from its allowlists, and those
// allowlists — projects, and groups whose projects (at any depth) it
// admits. Allowed is the check the job token authenticator makes.
package jobtokenscope

import (
	"context"
	"errors"
	"strconv"

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

// Service manages job token scopes.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
}

// New returns the service.
func New(db *store.DB, projects Projects, groups Groups) *Service {
	return &Service{db: db, projects: projects, groups: groups}
}

// MaxLinks bounds each allowlist of a project (GitLab's limit).
const MaxLinks = 200

// GitLab's words for what the allowlists refuse.
const (
	msgPermission       = "Insufficient permissions to modify the job token scope"
	msgProjectUnseen    = "The target_project that you are attempting to access does not exist or you don't have permission to perform this action"
	msgGroupUnseen      = "The target_group that you are attempting to access does not exist or you don't have permission to perform this action"
	msgProjectListed    = "Target project is already in the job token scope"
	msgGroupListed      = "Target group is already in the job token scope"
	msgProjectNotListed = "Target project is not in the job token scope"
	msgGroupNotListed   = "Target group is not in the job token scope"
	msgSelf             = "Validation failed: Target project can't be the same as the source project"
	msgSelfRemove       = "Source project cannot be removed from the job token scope"
	msgProjectLimit     = "Validation failed: Source project exceeds the allowable number of project links"
	msgGroupLimit       = "Validation failed: Source project exceeds the allowable number of group links"
)

// Allowed reports whether a CI job of sourceProjectID may use its token
// on targetProjectID: the same project, a target whose inbound limit is
// off, a source on the target's allowlist, or a source anywhere under a
// group on the target's groups allowlist. One query, nothing cached.
func (s *Service) Allowed(ctx context.Context, sourceProjectID, targetProjectID int64) (bool, error) {
	return s.db.JobTokenAllowed(ctx, sourceProjectID, targetProjectID)
}

// Scope is a project's job token access settings. Outbound limits are
// gone from GitLab (16.0); Quarry never had them.
type Scope struct {
	InboundEnabled  bool
	OutboundEnabled bool
}

// project resolves the project whose scope is read or changed: maintainers
// up (others who see it get 403).
func (s *Service) project(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !auth.Can(a, auth.UpdateProject, auth.Resource{Project: &p, Access: acc}) {
		return p, model.Forbidden("")
	}
	return p, nil
}

// Scope returns a project's settings (maintainers up).
func (s *Service) Scope(ctx context.Context, a auth.Actor, projectRef string) (Scope, error) {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return Scope{}, err
	}
	on, err := s.db.JobTokenInboundEnabled(ctx, p.ID)
	return Scope{InboundEnabled: on}, err
}

// SetInbound turns a project's inbound limit on or off (maintainers up).
func (s *Service) SetInbound(ctx context.Context, a auth.Actor, projectRef string, enabled bool) error {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetJobTokenInbound(ctx, p.ID, enabled) })
}

// Allowlist returns a page of a project's allowlist: the project itself
// first, then the projects added, in the order added (maintainers up).
func (s *Service) Allowlist(ctx context.Context, a auth.Actor, projectRef string, page model.Page) ([]model.Project, model.PageInfo, error) {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.JobTokenProjects(ctx, p.ID, page)
}

// GroupsAllowlist returns a page of a project's groups allowlist, in the
// order the groups were added (maintainers up).
func (s *Service) GroupsAllowlist(ctx context.Context, a auth.Actor, projectRef string, page model.Page) ([]model.Namespace, model.PageInfo, error) {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	links, info, err := s.db.JobTokenGroups(ctx, p.ID, page)
	if err != nil {
		return nil, info, err
	}
	out := make([]model.Namespace, len(links))
	for i, l := range links {
		out[i] = l.Group
	}
	return out, info, nil
}

// targetProject finds a project to add to or take off an allowlist: 404
// "target_project_id not found" when no project has the id; seen is
// whether the caller may read it.
func (s *Service) targetProject(ctx context.Context, a auth.Actor, id int64) (p model.Project, seen bool, err error) {
	p, err = s.db.ProjectByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && p.PendingDelete) {
		return p, false, model.NotFound("target_project_id not found")
	}
	if err != nil {
		return p, false, err
	}
	_, _, err = s.projects.Resolve(ctx, a, strconv.FormatInt(id, 10))
	if errors.Is(err, model.ErrNotFound) {
		return p, false, nil
	}
	return p, err == nil, err
}

// targetGroup is targetProject for groups.
func (s *Service) targetGroup(ctx context.Context, a auth.Actor, id int64) (g model.Namespace, seen bool, err error) {
	g, err = s.db.NamespaceByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && g.Kind != model.NamespaceGroup) {
		return g, false, model.NotFound("target_group_id not found")
	}
	if err != nil {
		return g, false, err
	}
	_, _, err = s.groups.Resolve(ctx, a, strconv.FormatInt(id, 10))
	if errors.Is(err, model.ErrNotFound) {
		return g, false, nil
	}
	return g, err == nil, err
}

// AddProject puts a project the caller may read on a project's allowlist
// (maintainers up). An unknown target is 404; one the caller cannot see,
// the project itself, one already listed, or a full allowlist are 400s
// in GitLab's words.
func (s *Service) AddProject(ctx context.Context, a auth.Actor, projectRef string, targetID int64) (store.JobTokenProjectLink, error) {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return store.JobTokenProjectLink{}, err
	}
	target, seen, err := s.targetProject(ctx, a, targetID)
	if err != nil {
		return store.JobTokenProjectLink{}, err
	}
	if !seen {
		return store.JobTokenProjectLink{}, model.BadRequest(msgProjectUnseen)
	}
	if target.ID == p.ID {
		return store.JobTokenProjectLink{}, model.BadRequest(msgSelf)
	}
	l := store.JobTokenProjectLink{SourceProjectID: p.ID, TargetProjectID: target.ID, AddedByID: a.UserID()}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		listed, err := tx.JobTokenProjectLinked(ctx, p.ID, target.ID)
		if err != nil {
			return err
		}
		if listed {
			return model.BadRequest(msgProjectListed)
		}
		n, err := tx.JobTokenProjectLinks(ctx, p.ID)
		if err != nil {
			return err
		}
		if n >= MaxLinks {
			return model.BadRequest(msgProjectLimit)
		}
		return tx.CreateJobTokenProjectLink(ctx, &l)
	})
	if store.IsJobTokenProjectLinked(err) {
		return l, model.BadRequest(msgProjectListed)
	}
	return l, err
}

// RemoveProject takes a project off a project's allowlist. As in GitLab,
// the target is found first (404 Project Not Found when the caller cannot
// see it), then the caller's role checked (403 with GitLab's reason).
func (s *Service) RemoveProject(ctx context.Context, a auth.Actor, projectRef string, targetID int64) error {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return err
	}
	target, _, err := s.projects.Resolve(ctx, a, strconv.FormatInt(targetID, 10))
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.UpdateProject, auth.Resource{Project: &p, Access: acc}) {
		return model.Forbidden(msgPermission)
	}
	if target.ID == p.ID {
		return model.BadRequest(msgSelfRemove)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteJobTokenProjectLink(ctx, p.ID, target.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return model.BadRequest(msgProjectNotListed)
	}
	return err
}

// AddGroup puts a group the caller may read on a project's groups
// allowlist (maintainers up), with the same answers as AddProject.
func (s *Service) AddGroup(ctx context.Context, a auth.Actor, projectRef string, groupID int64) (store.JobTokenGroupLink, error) {
	p, err := s.project(ctx, a, projectRef)
	if err != nil {
		return store.JobTokenGroupLink{}, err
	}
	g, seen, err := s.targetGroup(ctx, a, groupID)
	if err != nil {
		return store.JobTokenGroupLink{}, err
	}
	if !seen {
		return store.JobTokenGroupLink{}, model.BadRequest(msgGroupUnseen)
	}
	l := store.JobTokenGroupLink{SourceProjectID: p.ID, TargetGroupID: g.ID, AddedByID: a.UserID(), Group: g}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		listed, err := tx.JobTokenGroupLinked(ctx, p.ID, g.ID)
		if err != nil {
			return err
		}
		if listed {
			return model.BadRequest(msgGroupListed)
		}
		n, err := tx.JobTokenGroupLinks(ctx, p.ID)
		if err != nil {
			return err
		}
		if n >= MaxLinks {
			return model.BadRequest(msgGroupLimit)
		}
		return tx.CreateJobTokenGroupLink(ctx, &l)
	})
	if store.IsJobTokenGroupLinked(err) {
		return l, model.BadRequest(msgGroupListed)
	}
	return l, err
}

// RemoveGroup takes a group off a project's groups allowlist: an unknown
// group is 404, a caller below maintainer 403, a group not listed 400.
func (s *Service) RemoveGroup(ctx context.Context, a auth.Actor, projectRef string, groupID int64) error {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return err
	}
	g, err := s.db.NamespaceByID(ctx, groupID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && g.Kind != model.NamespaceGroup) {
		return model.NotFound("target_group_id not found")
	}
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.UpdateProject, auth.Resource{Project: &p, Access: acc}) {
		return model.Forbidden(msgPermission)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteJobTokenGroupLink(ctx, p.ID, g.ID) })
	if errors.Is(err, model.ErrNotFound) {
		return model.BadRequest(msgGroupNotListed)
	}
	return err
}
