package entity

import "quarry/internal/model"

// ProtectedTag is GitLab's ProtectedTag entity (with EE's grant fields).
type ProtectedTag struct {
	Name               string         `json:"name"`
	CreateAccessLevels []BranchAccess `json:"create_access_levels"`
}

// ProtectedTag renders a protected tag.
func (r *Renderer) ProtectedTag(t model.ProtectedTag) ProtectedTag {
	return ProtectedTag{Name: t.Name, CreateAccessLevels: branchAccess(t.Create)}
}

// EnvironmentAccess is one deploy access level or approval rule of a
// protected environment.
type EnvironmentAccess struct {
	ID                     int64  `json:"id"`
	AccessLevel            *int   `json:"access_level"`
	AccessLevelDescription string `json:"access_level_description"`
	UserID                 *int64 `json:"user_id"`
	GroupID                *int64 `json:"group_id"`
	GroupInheritanceType   int    `json:"group_inheritance_type"`
	RequiredApprovals      *int   `json:"required_approvals,omitempty"`
}

// ProtectedEnvironment is GitLab's ProtectedEnvironment entity.
type ProtectedEnvironment struct {
	Name                  string              `json:"name"`
	DeployAccessLevels    []EnvironmentAccess `json:"deploy_access_levels"`
	RequiredApprovalCount int                 `json:"required_approval_count"`
	ApprovalRules         []EnvironmentAccess `json:"approval_rules"`
}

func environmentAccess(list []model.EnvironmentAccess, approvals bool) []EnvironmentAccess {
	out := make([]EnvironmentAccess, len(list))
	for i, a := range list {
		j := EnvironmentAccess{ID: a.ID, UserID: a.UserID, GroupID: a.GroupID, GroupInheritanceType: a.GroupInheritanceType,
			AccessLevelDescription: model.EnvironmentAccessDescription(a)}
		if a.AccessLevel != nil {
			l := int(*a.AccessLevel)
			j.AccessLevel = &l
		}
		if approvals {
			n := a.RequiredApprovals
			j.RequiredApprovals = &n
		}
		out[i] = j
	}
	return out
}

// ProtectedEnvironment renders a protected environment.
func (r *Renderer) ProtectedEnvironment(e model.ProtectedEnvironment) ProtectedEnvironment {
	return ProtectedEnvironment{Name: e.Name, DeployAccessLevels: environmentAccess(e.Deploy, false),
		RequiredApprovalCount: e.RequiredApprovalCount, ApprovalRules: environmentAccess(e.ApprovalRules, true)}
}
