package model

import "time"

// ProtectedTag guards the tags matching Name (exact, or with `*`
// wildcards as protected branches): only the grants of Create may make
// them; nobody may move them, and only maintainers may delete them, from
// the API only.
type ProtectedTag struct {
	ID        int64
	ProjectID int64
	Name      string
	Create    []BranchAccess
	CreatedAt time.Time
}

// TagAccessLevels are the create_access_level values GitLab takes for a
// protected tag: no one, developers, maintainers.
var TagAccessLevels = []AccessLevel{NoOneAccess, Developer, Maintainer}

// ProtectedTagsMatching returns the rules covering tag.
func ProtectedTagsMatching(rules []ProtectedTag, tag string) []ProtectedTag {
	var out []ProtectedTag
	for _, r := range rules {
		if MatchesBranch(r.Name, tag) {
			out = append(out, r)
		}
	}
	return out
}

// Group inheritance types of protected environment grants.
const (
	GroupInheritDirect = 0 // direct members of the group only
	GroupInheritAll    = 1 // members of the group and of its ancestors
)

// EnvironmentAccess is one grant of a protected environment: exactly one
// of a role, a user or a group. RequiredApprovals is used by approval
// rules only.
type EnvironmentAccess struct {
	ID                   int64
	AccessLevel          *AccessLevel
	UserID               *int64
	GroupID              *int64
	GroupInheritanceType int
	RequiredApprovals    int
	// Name is the user's or group's name, for the entity's description
	// (filled by the service that reads the grant).
	Name string
}

// ProtectedEnvironment guards the environment called Name of a project
// (which need not exist yet): only the Deploy grants may deploy to it.
type ProtectedEnvironment struct {
	ID                    int64
	ProjectID             int64
	Name                  string
	RequiredApprovalCount int
	Deploy                []EnvironmentAccess
	ApprovalRules         []EnvironmentAccess
	CreatedAt             time.Time
}

// EnvironmentAccessLevels are the access levels GitLab takes for deploy
// access levels and approval rules.
var EnvironmentAccessLevels = []AccessLevel{Reporter, Developer, Maintainer, AdminAccess}

// EnvironmentAccessDescription names an environment grant the way
// GitLab's entity does.
func EnvironmentAccessDescription(a EnvironmentAccess) string {
	switch {
	case a.AccessLevel != nil:
		switch *a.AccessLevel {
		case Maintainer:
			return "Maintainers"
		case Developer:
			return "Developers + Maintainers"
		}
		return RoleName(*a.AccessLevel)
	case a.UserID != nil, a.GroupID != nil:
		return a.Name
	}
	return ""
}
