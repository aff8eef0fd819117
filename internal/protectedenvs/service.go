// Package protectedenvs holds the protected environments of projects:
// who may deploy to an environment (GitLab's deploy access levels: a role,
// a user, or a group the user belongs to), and how many approvals its
// deployments need. An environment is protected by name; it need not
// exist yet. The API's rules (maintainers manage) and the two questions
// the CI engine asks (MayDeploy, Protected) are here.
package protectedenvs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Limits on one protection's input.
const (
	MaxNameLength = 255
	MaxGrants     = 100
	MaxApprovals  = 5000
)

// Projects resolves a project reference for an actor with its access
// (the projects service): model.NotFound when the actor cannot see it.
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Service answers protected environments.
type Service struct {
	db       *store.DB
	projects Projects
}

// New returns the protected environments service.
func New(db *store.DB, projects Projects) *Service {
	return &Service{db: db, projects: projects}
}

func (s *Service) today() string { return s.db.Now().UTC().Format(model.DateLayout) }

// Protected reports whether the named environment of project projectID
// is protected.
func (s *Service) Protected(ctx context.Context, projectID int64, environment string) (bool, error) {
	list, err := s.db.ProtectedEnvironments(ctx, projectID, environment)
	return len(list) > 0, err
}

// MayDeploy reports whether user userID may deploy to the named
// environment of project p (true when no protected environment covers
// it). GitLab's rule: administrators always; otherwise a deploy access
// level the user's access to p reaches, the user named by a grant, or a
// group the user belongs to (directly, or also through the group's
// ancestors when the grant inherits).
func (s *Service) MayDeploy(ctx context.Context, p model.Project, environment string, userID int64) (bool, error) {
	list, err := s.db.ProtectedEnvironments(ctx, p.ID, environment)
	if err != nil || len(list) == 0 {
		return err == nil, err
	}
	if userID == 0 {
		return false, nil
	}
	u, err := s.db.UserByID(ctx, userID)
	if errors.Is(err, model.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if u.State.IsBlocked() {
		return false, nil
	}
	if u.Admin {
		return true, nil
	}
	acc, err := s.db.ProjectAccess(ctx, userID, p.ID, s.today())
	if err != nil {
		return false, err
	}
	inGroup := func(groupID int64, inherit int) (bool, error) {
		return s.db.UserInGroup(ctx, groupID, userID, inherit == model.GroupInheritAll, s.today())
	}
	for _, g := range list[0].Deploy {
		ok, err := Admits(g, userID, false, acc, inGroup)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Admits applies one grant to a user whose access to the project is acc
// (pure but for the group question).
func Admits(g model.EnvironmentAccess, userID int64, admin bool, acc model.AccessLevel, inGroup func(groupID int64, inherit int) (bool, error)) (bool, error) {
	if admin {
		return true, nil
	}
	switch {
	case g.UserID != nil:
		return *g.UserID == userID, nil
	case g.GroupID != nil:
		return inGroup(*g.GroupID, g.GroupInheritanceType)
	case g.AccessLevel != nil:
		return *g.AccessLevel != model.AdminAccess && acc >= *g.AccessLevel, nil
	}
	return false, nil
}

// manage resolves a project whose protected environments the actor
// manages (GitLab's admin_project: maintainers).
func (s *Service) manage(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !auth.Can(a, auth.AdminProtectedBranches, auth.Resource{Project: &p, Access: acc}) {
		return p, model.Forbidden("")
	}
	return p, nil
}

// List returns one page of a project's protected environments, by name.
func (s *Service) List(ctx context.Context, a auth.Actor, ref string, page model.Page) ([]model.ProtectedEnvironment, model.PageInfo, error) {
	p, err := s.manage(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, err := s.db.ProtectedEnvironments(ctx, p.ID, "")
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info := model.PageOf(list, page)
	for i := range list {
		if err := s.describe(ctx, &list[i]); err != nil {
			return nil, info, err
		}
	}
	return list, info, nil
}

// describe names the users and groups of a protection's grants (GitLab's
// access_level_description is the user's or group's name).
func (s *Service) describe(ctx context.Context, e *model.ProtectedEnvironment) error {
	for _, list := range [][]model.EnvironmentAccess{e.Deploy, e.ApprovalRules} {
		for i := range list {
			switch a := &list[i]; {
			case a.UserID != nil:
				u, err := s.db.UserByID(ctx, *a.UserID)
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return err
				}
				a.Name = u.Name
			case a.GroupID != nil:
				g, err := s.db.GroupByID(ctx, *a.GroupID)
				if err != nil && !errors.Is(err, model.ErrNotFound) {
					return err
				}
				a.Name = g.Name
			}
		}
	}
	return nil
}

// Get returns the protection of the environment named name, or 404.
func (s *Service) Get(ctx context.Context, a auth.Actor, ref, name string) (model.ProtectedEnvironment, error) {
	p, err := s.manage(ctx, a, ref)
	if err != nil {
		return model.ProtectedEnvironment{}, err
	}
	e, err := s.get(ctx, p.ID, name)
	if err != nil {
		return e, err
	}
	return e, s.describe(ctx, &e)
}

func (s *Service) get(ctx context.Context, projectID int64, name string) (model.ProtectedEnvironment, error) {
	if name == "" {
		return model.ProtectedEnvironment{}, model.RecordNotFound()
	}
	list, err := s.db.ProtectedEnvironments(ctx, projectID, name)
	if err != nil {
		return model.ProtectedEnvironment{}, err
	}
	if len(list) == 0 {
		return model.ProtectedEnvironment{}, model.RecordNotFound()
	}
	return list[0], nil
}

// Grant is one deploy access level or approval rule as asked: ID names an
// existing one (updates), Destroy removes it.
type Grant struct {
	ID                   *int64
	AccessLevel          *model.AccessLevel
	UserID               *int64
	GroupID              *int64
	GroupInheritanceType *int
	RequiredApprovals    *int
	Destroy              bool
}

// Input is a protection as asked; nil is "not given".
type Input struct {
	Name                  string
	DeployAccessLevels    []Grant
	RequiredApprovalCount *int
	ApprovalRules         []Grant
}

// unprocessable is GitLab's 422 with the model's full messages.
func unprocessable(msg string) error {
	return &model.Error{Kind: model.KindUnprocessable, Message: msg, Raw: true, List: true}
}

// Protect protects an environment (maintainers). A name protected
// already is GitLab's 422 ["Name has already been taken"].
func (s *Service) Protect(ctx context.Context, a auth.Actor, ref string, in Input) (model.ProtectedEnvironment, error) {
	p, err := s.manage(ctx, a, ref)
	if err != nil {
		return model.ProtectedEnvironment{}, err
	}
	e := model.ProtectedEnvironment{ProjectID: p.ID, Name: in.Name}
	if in.RequiredApprovalCount != nil {
		e.RequiredApprovalCount = *in.RequiredApprovalCount
	}
	if e.Deploy, err = s.apply(ctx, nil, in.DeployAccessLevels, "Deploy access levels", false); err != nil {
		return e, err
	}
	if e.ApprovalRules, err = s.apply(ctx, nil, in.ApprovalRules, "Approval rules", true); err != nil {
		return e, err
	}
	if err := validate(e); err != nil {
		return e, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateProtectedEnvironment(ctx, &e) })
	if store.IsUnique(err, store.UniqueProtectedEnvironment) {
		return e, unprocessable("Name has already been taken")
	}
	if err != nil {
		return e, err
	}
	return e, s.describe(ctx, &e)
}

// Update changes a protection (maintainers): grants with an id are
// changed or (with _destroy) removed, grants without one added.
func (s *Service) Update(ctx context.Context, a auth.Actor, ref, name string, in Input) (model.ProtectedEnvironment, error) {
	p, err := s.manage(ctx, a, ref)
	if err != nil {
		return model.ProtectedEnvironment{}, err
	}
	e, err := s.get(ctx, p.ID, name)
	if err != nil {
		return e, err
	}
	if in.RequiredApprovalCount != nil {
		e.RequiredApprovalCount = *in.RequiredApprovalCount
	}
	if e.Deploy, err = s.apply(ctx, e.Deploy, in.DeployAccessLevels, "Deploy access levels", false); err != nil {
		return e, err
	}
	if e.ApprovalRules, err = s.apply(ctx, e.ApprovalRules, in.ApprovalRules, "Approval rules", true); err != nil {
		return e, err
	}
	if err := validate(e); err != nil {
		return e, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProtectedEnvironment(ctx, &e) })
	if err != nil {
		return e, err
	}
	return e, s.describe(ctx, &e)
}

// Unprotect removes a protection (maintainers).
func (s *Service) Unprotect(ctx context.Context, a auth.Actor, ref, name string) error {
	p, err := s.manage(ctx, a, ref)
	if err != nil {
		return err
	}
	e, err := s.get(ctx, p.ID, name)
	if err != nil {
		return err
	}
	var gone bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteProtectedEnvironment(ctx, e.ID)
		gone = !ok
		return err
	})
	if err == nil && gone {
		return model.RecordNotFound()
	}
	return err
}

// validate applies GitLab's model validations to a whole protection.
func validate(e model.ProtectedEnvironment) error {
	switch {
	case e.Name == "":
		return unprocessable("Name can't be blank")
	case len(e.Name) > MaxNameLength:
		return unprocessable(fmt.Sprintf("Name is too long (maximum is %d characters)", MaxNameLength))
	case len(e.Deploy) == 0:
		return unprocessable("Deploy access levels is too short (minimum is 1 character)")
	case e.RequiredApprovalCount < 0 || e.RequiredApprovalCount > MaxApprovals:
		return unprocessable(fmt.Sprintf("Required approval count must be greater than or equal to 0 and less than or equal to %d", MaxApprovals))
	}
	return nil
}

// apply merges asked grants into existing ones and checks each.
func (s *Service) apply(ctx context.Context, existing []model.EnvironmentAccess, asked []Grant, what string, approval bool) ([]model.EnvironmentAccess, error) {
	if len(asked) > MaxGrants {
		return nil, model.Param(fmt.Sprintf("%s has too many entries", what))
	}
	out := slices.Clone(existing)
	for _, g := range asked {
		if g.ID != nil {
			i := slices.IndexFunc(out, func(x model.EnvironmentAccess) bool { return x.ID == *g.ID })
			if i < 0 {
				return nil, unprocessable(what + " is invalid")
			}
			if g.Destroy {
				out = slices.Delete(out, i, i+1)
				continue
			}
			x := out[i]
			if g.AccessLevel != nil || g.UserID != nil || g.GroupID != nil {
				x.AccessLevel, x.UserID, x.GroupID = g.AccessLevel, g.UserID, g.GroupID
			}
			if g.GroupInheritanceType != nil {
				x.GroupInheritanceType = *g.GroupInheritanceType
			}
			if g.RequiredApprovals != nil {
				x.RequiredApprovals = *g.RequiredApprovals
			}
			if err := s.check(ctx, x, what, approval); err != nil {
				return nil, err
			}
			out[i] = x
			continue
		}
		if g.Destroy {
			continue
		}
		x := model.EnvironmentAccess{AccessLevel: g.AccessLevel, UserID: g.UserID, GroupID: g.GroupID, RequiredApprovals: 1}
		if g.GroupInheritanceType != nil {
			x.GroupInheritanceType = *g.GroupInheritanceType
		}
		if g.RequiredApprovals != nil {
			x.RequiredApprovals = *g.RequiredApprovals
		}
		if !approval {
			x.RequiredApprovals = 0
		}
		if err := s.check(ctx, x, what, approval); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// check validates one grant: exactly one of a role, a user, a group; a
// role GitLab takes; a user and group that exist; an inheritance type of
// 0 or 1; at least one required approval for an approval rule.
func (s *Service) check(ctx context.Context, x model.EnvironmentAccess, what string, approval bool) error {
	n := 0
	for _, set := range []bool{x.AccessLevel != nil, x.UserID != nil, x.GroupID != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return unprocessable(what + " base Only one of the Group ID, User ID or Access Level must be specified.")
	}
	if x.AccessLevel != nil && !slices.Contains(model.EnvironmentAccessLevels, *x.AccessLevel) {
		return unprocessable(what + " access level is not included in the list")
	}
	if x.GroupInheritanceType != model.GroupInheritDirect && x.GroupInheritanceType != model.GroupInheritAll {
		return unprocessable(what + " group inheritance type is not included in the list")
	}
	if approval && (x.RequiredApprovals < 1 || x.RequiredApprovals > MaxApprovals) {
		return unprocessable(what + " required approvals must be greater than 0")
	}
	if x.UserID != nil {
		if _, err := s.db.UserByID(ctx, *x.UserID); errors.Is(err, model.ErrNotFound) {
			return unprocessable(what + " user must exist")
		} else if err != nil {
			return err
		}
	}
	if x.GroupID != nil {
		if _, err := s.db.GroupByID(ctx, *x.GroupID); errors.Is(err, model.ErrNotFound) {
			return unprocessable(what + " group must exist")
		} else if err != nil {
			return err
		}
	}
	return nil
}
