package projects

import (
	"context"
	"errors"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// MaxTagGrants bounds the grants one protected tag takes.
const MaxTagGrants = 100

// manageTags resolves a project whose protected tags the actor manages
// (GitLab's admin_project: maintainers).
func (s *Service) manageTags(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.AdminProtectedBranches, &p, acc) {
		return p, model.Forbidden("")
	}
	return p, nil
}

// ProtectedTags lists one page of a project's protected tags, by name
// (maintainers).
func (s *Service) ProtectedTags(ctx context.Context, a auth.Actor, ref string, page model.Page) ([]model.ProtectedTag, model.PageInfo, error) {
	p, err := s.manageTags(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, err := s.db.ProtectedTags(ctx, p.ID)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info := model.PageOf(list, page)
	return list, info, nil
}

// ProtectedTag returns the rule named exactly name, or 404 Not found.
func (s *Service) ProtectedTag(ctx context.Context, a auth.Actor, ref, name string) (model.ProtectedTag, error) {
	p, err := s.manageTags(ctx, a, ref)
	if err != nil {
		return model.ProtectedTag{}, err
	}
	return s.protectedTag(ctx, p.ID, name)
}

func (s *Service) protectedTag(ctx context.Context, projectID int64, name string) (model.ProtectedTag, error) {
	list, err := s.db.ProtectedTags(ctx, projectID)
	if err != nil {
		return model.ProtectedTag{}, err
	}
	for _, t := range list {
		if t.Name == name {
			return t, nil
		}
	}
	return model.ProtectedTag{}, model.RecordNotFound()
}

// ProtectTagInput describes a protected tag: its name (or wildcard), the
// create access level (nil: maintainers, unless AllowedToCreate names
// grants) and extra grants (roles, users, groups).
type ProtectTagInput struct {
	Name              string
	CreateAccessLevel *model.AccessLevel
	AllowedToCreate   []model.BranchAccess
}

// ProtectTag adds a protected tag (maintainers). A name taken already is
// GitLab's 422 ["Name has already been taken"].
func (s *Service) ProtectTag(ctx context.Context, a auth.Actor, ref string, in ProtectTagInput) (model.ProtectedTag, error) {
	p, err := s.manageTags(ctx, a, ref)
	if err != nil {
		return model.ProtectedTag{}, err
	}
	if in.Name == "" {
		return model.ProtectedTag{}, unprocessable("Name can't be blank")
	}
	if len(in.Name) > 255 {
		return model.ProtectedTag{}, unprocessable("Name is too long (maximum is 255 characters)")
	}
	if len(in.AllowedToCreate) > MaxTagGrants {
		return model.ProtectedTag{}, model.Param("allowed_to_create has too many entries")
	}
	t := model.ProtectedTag{ProjectID: p.ID, Name: in.Name}
	if in.CreateAccessLevel != nil || len(in.AllowedToCreate) == 0 {
		lvl := model.Maintainer
		if in.CreateAccessLevel != nil {
			lvl = *in.CreateAccessLevel
		}
		t.Create = append(t.Create, model.BranchAccess{AccessLevel: &lvl})
	}
	for _, g := range in.AllowedToCreate {
		if err := s.checkGrant(ctx, g); err != nil {
			return model.ProtectedTag{}, err
		}
		t.Create = append(t.Create, g)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateProtectedTag(ctx, &t) })
	if store.IsUnique(err, store.UniqueProtectedTag) {
		return t, unprocessable("Name has already been taken")
	}
	return t, err
}

// unprocessable is GitLab's 422 with the model's full messages.
func unprocessable(msg string) error {
	return &model.Error{Kind: model.KindUnprocessable, Message: msg, Raw: true, List: true}
}

// checkGrant refuses a grant naming an unknown user or group, or a role
// GitLab does not take for tags.
func (s *Service) checkGrant(ctx context.Context, g model.BranchAccess) error {
	switch {
	case g.AccessLevel != nil:
		for _, l := range model.TagAccessLevels {
			if l == *g.AccessLevel {
				return nil
			}
		}
		return unprocessable("Create access levels access level is not included in the list")
	case g.UserID != nil:
		if _, err := s.db.UserByID(ctx, *g.UserID); errors.Is(err, model.ErrNotFound) {
			return unprocessable("Create access levels user can't be blank")
		} else if err != nil {
			return err
		}
	case g.GroupID != nil:
		if _, err := s.db.GroupByID(ctx, *g.GroupID); errors.Is(err, model.ErrNotFound) {
			return unprocessable("Create access levels group can't be blank")
		} else if err != nil {
			return err
		}
	}
	return nil
}

// UnprotectTag removes a protected tag (maintainers).
func (s *Service) UnprotectTag(ctx context.Context, a auth.Actor, ref, name string) error {
	p, err := s.manageTags(ctx, a, ref)
	if err != nil {
		return err
	}
	t, err := s.protectedTag(ctx, p.ID, name)
	if err != nil {
		return err
	}
	var gone bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteProtectedTag(ctx, t.ID)
		gone = !ok
		return err
	})
	if err == nil && gone {
		return model.RecordNotFound()
	}
	return err
}

// ProtectedTagRules returns a project's protected tags without
// permission checks (for the push path and tag writes, which already
// authorized).
func (s *Service) ProtectedTagRules(ctx context.Context, projectID int64) ([]model.ProtectedTag, error) {
	return s.db.ProtectedTags(ctx, projectID)
}

// InGroup returns the group-membership test CanCreateTag takes for a
// user: a member of the group or of one of its ancestors. Errors count
// as no membership.
func (s *Service) InGroup(ctx context.Context, userID int64) func(groupID int64) bool {
	return func(groupID int64) bool {
		ok, err := s.db.UserInGroup(ctx, groupID, userID, true, s.today())
		return err == nil && ok
	}
}
