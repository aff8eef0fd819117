package projects

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// DefaultBranchProtection is GitLab's default default_branch_protection:
// 2, fully protected. Projects outside groups follow the instance's
// setting; new groups start with it.
const DefaultBranchProtection = 2

// defaultProtection builds the rule that protects a new project's default
// branch for a default_branch_protection level (0 leaves it open).
func defaultProtection(projectID int64, branch string, level int) *model.ProtectedBranch {
	lvl := func(l model.AccessLevel) []model.BranchAccess { return []model.BranchAccess{{AccessLevel: &l}} }
	b := &model.ProtectedBranch{ProjectID: projectID, Name: branch, Unprotect: lvl(model.Maintainer)}
	switch level {
	case 0:
		return nil
	case 1: // partial: developers push, maintainers merge
		b.Push, b.Merge = lvl(model.Developer), lvl(model.Maintainer)
	case 3: // protected against pushes: maintainers push, developers merge
		b.Push, b.Merge = lvl(model.Maintainer), lvl(model.Developer)
	default: // 2 full, 4 full after the initial push
		b.Push, b.Merge = lvl(model.Maintainer), lvl(model.Maintainer)
	}
	return b
}

// protectDefaultBranch applies the protection of the project's group (or
// the instance default) to a new project.
func (s *Service) protectDefaultBranch(ctx context.Context, tx *store.Tx, p *model.Project) error {
	st, err := s.instance(ctx)
	if err != nil {
		return err
	}
	level := int(st.DefaultBranchProtection)
	if p.Namespace.Kind == model.NamespaceGroup {
		g, err := tx.GroupByID(ctx, p.NamespaceID)
		if err != nil {
			return err
		}
		level = g.Settings.DefaultBranchProtection
	}
	rule := defaultProtection(p.ID, p.DefaultBranch, level)
	if rule == nil {
		return nil
	}
	existing, err := tx.ProtectedBranches(ctx, p.ID, "")
	if err != nil {
		return err
	}
	for _, r := range existing {
		if model.MatchesBranch(r.Name, p.DefaultBranch) {
			return nil
		}
	}
	return tx.CreateProtectedBranch(ctx, rule)
}

// ProtectedBranches lists one page of a project's protected branch rules (developers
// and up).
func (s *Service) ProtectedBranches(ctx context.Context, a auth.Actor, ref, search string, page model.Page) ([]model.ProtectedBranch, model.PageInfo, error) {
	list, err := s.protectedBranches(ctx, a, ref, search)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info := model.PageOf(list, page)
	return list, info, nil
}

func (s *Service) protectedBranches(ctx context.Context, a auth.Actor, ref, search string) ([]model.ProtectedBranch, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return nil, err
	}
	if !can(a, auth.ReadProtectedBranches, &p, acc) {
		return nil, model.Forbidden("")
	}
	return s.db.ProtectedBranches(ctx, p.ID, search)
}

// ProtectedBranch returns one rule by exact name, or 404 Not found.
func (s *Service) ProtectedBranch(ctx context.Context, a auth.Actor, ref, name string) (model.ProtectedBranch, error) {
	rules, err := s.protectedBranches(ctx, a, ref, "")
	if err != nil {
		return model.ProtectedBranch{}, err
	}
	for _, r := range rules {
		if r.Name == name {
			return r, nil
		}
	}
	return model.ProtectedBranch{}, model.RecordNotFound()
}

// ProtectInput describes a protection: levels for push, merge and
// unprotect (nil keeps or defaults to maintainers), and extra grants.
type ProtectInput struct {
	Name                      string
	PushAccessLevel           *model.AccessLevel
	MergeAccessLevel          *model.AccessLevel
	UnprotectAccessLevel      *model.AccessLevel
	AllowForcePush            *bool
	CodeOwnerApprovalRequired *bool
	AllowedToPush             []model.BranchAccess
	AllowedToMerge            []model.BranchAccess
	AllowedToUnprotect        []model.BranchAccess
}

// Protect adds a protected branch rule (maintainers).
func (s *Service) Protect(ctx context.Context, a auth.Actor, ref string, in ProtectInput) (model.ProtectedBranch, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return model.ProtectedBranch{}, err
	}
	if !can(a, auth.AdminProtectedBranches, &p, acc) {
		return model.ProtectedBranch{}, model.Forbidden("")
	}
	if in.Name == "" {
		return model.ProtectedBranch{}, model.Invalid("name", "can't be blank")
	}
	m := model.Maintainer
	pick := func(l *model.AccessLevel, extra []model.BranchAccess) []model.BranchAccess {
		if l == nil {
			l = &m
		}
		lv := *l
		return append([]model.BranchAccess{{AccessLevel: &lv}}, extra...)
	}
	b := model.ProtectedBranch{ProjectID: p.ID, Name: in.Name, Push: pick(in.PushAccessLevel, in.AllowedToPush),
		Merge: pick(in.MergeAccessLevel, in.AllowedToMerge), Unprotect: pick(in.UnprotectAccessLevel, in.AllowedToUnprotect)}
	if in.AllowForcePush != nil {
		b.AllowForcePush = *in.AllowForcePush
	}
	if in.CodeOwnerApprovalRequired != nil {
		b.CodeOwnerApprovalRequired = *in.CodeOwnerApprovalRequired
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateProtectedBranch(ctx, &b) })
	if store.IsUnique(err, store.UniqueProtectedBranch) {
		return b, model.Conflict(fmt.Sprintf("Protected branch '%s' already exists", in.Name))
	}
	return b, err
}

// UpdateProtection changes a rule's flags and, for each kind whose level
// or grants are given, replaces that kind's grants.
func (s *Service) UpdateProtection(ctx context.Context, a auth.Actor, ref, name string, in ProtectInput) (model.ProtectedBranch, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return model.ProtectedBranch{}, err
	}
	if !can(a, auth.AdminProtectedBranches, &p, acc) {
		return model.ProtectedBranch{}, model.Forbidden("")
	}
	b, err := s.ProtectedBranch(ctx, a, ref, name)
	if err != nil {
		return b, err
	}
	if in.AllowForcePush != nil {
		b.AllowForcePush = *in.AllowForcePush
	}
	if in.CodeOwnerApprovalRequired != nil {
		b.CodeOwnerApprovalRequired = *in.CodeOwnerApprovalRequired
	}
	replace := func(dst *[]model.BranchAccess, l *model.AccessLevel, extra []model.BranchAccess) {
		if l == nil && extra == nil {
			return
		}
		var next []model.BranchAccess
		if l != nil {
			lv := *l
			next = append(next, model.BranchAccess{AccessLevel: &lv})
		}
		*dst = append(next, extra...)
	}
	replace(&b.Push, in.PushAccessLevel, in.AllowedToPush)
	replace(&b.Merge, in.MergeAccessLevel, in.AllowedToMerge)
	replace(&b.Unprotect, in.UnprotectAccessLevel, in.AllowedToUnprotect)
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProtectedBranch(ctx, &b) })
	return b, err
}

// Unprotect removes a rule (maintainers; a rule whose unprotect grant is
// stricter needs that level).
func (s *Service) Unprotect(ctx context.Context, a auth.Actor, ref, name string) error {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if !can(a, auth.AdminProtectedBranches, &p, acc) {
		return model.Forbidden("")
	}
	b, err := s.ProtectedBranch(ctx, a, ref, name)
	if err != nil {
		return err
	}
	allowed := a.Admin()
	for _, g := range b.Unprotect {
		if g.AccessLevel != nil && *g.AccessLevel != model.AdminAccess && acc >= *g.AccessLevel {
			allowed = true
		}
	}
	if !allowed {
		return model.Forbidden("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProtectedBranch(ctx, b.ID) })
}

// CanPush reports whether the actor may write to branch of a resolved
// project, following its protected branch rules.
func (s *Service) CanPush(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, branch string) (bool, error) {
	rules, err := s.db.ProtectedBranches(ctx, p.ID, "")
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return false, err
	}
	return auth.Can(a, auth.PushCode, auth.Resource{Project: p, Access: acc, Branch: &auth.Branch{Name: branch, Rules: rules}}), nil
}

// ProtectedRules returns a project's protected branch rules without
// permission checks (for the push path, which already authorized).
func (s *Service) ProtectedRules(ctx context.Context, projectID int64) ([]model.ProtectedBranch, error) {
	return s.db.ProtectedBranches(ctx, projectID, "")
}

// RepositoryLocation is where a project's repository lives.
func (s *Service) RepositoryLocation(p model.Project) (root, rel string, err error) {
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return "", "", err
	}
	return repo.Root(), repo.Rel, nil
}
