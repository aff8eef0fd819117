package model

import "time"

// Member is a user's membership of a project or group.
type Member struct {
	ID           int64
	SourceType   string
	SourceID     int64
	UserID       int64
	AccessLevel  AccessLevel
	ExpiresAt    string // YYYY-MM-DD, "" for never
	CreatedByID  *int64
	Pending      bool
	Override     bool
	InviteSource string
	CreatedAt    time.Time
	UpdatedAt    time.Time

	User User // loaded with the member
}

// Active reports whether the membership grants access on the given day.
func (m *Member) Active(today string) bool {
	return !m.Pending && (m.ExpiresAt == "" || m.ExpiresAt > today)
}

// ValidMemberLevels are the levels a membership may have; Owner only for
// groups.
func ValidMemberLevel(sourceType string, l AccessLevel) bool {
	switch l {
	case Guest, Reporter, Developer, Maintainer:
		return true
	case Owner:
		return sourceType == SourceNamespace
	}
	return false
}

// RoleName is the human name of an access level.
func RoleName(l AccessLevel) string {
	switch l {
	case MinimalAccess:
		return "Minimal Access"
	case Guest:
		return "Guest"
	case Reporter:
		return "Reporter"
	case Developer:
		return "Developer"
	case Maintainer:
		return "Maintainer"
	case Owner:
		return "Owner"
	}
	return "No access"
}

// Branch access levels of protected branches.
const (
	NoOneAccess AccessLevel = 0
	AdminAccess AccessLevel = 60
)

// BranchAccess is one grant on a protected branch: a role, a user or a group.
type BranchAccess struct {
	ID          int64
	AccessLevel *AccessLevel
	UserID      *int64
	GroupID     *int64
}

// ProtectedBranch guards branches matching Name (which may hold `*`).
type ProtectedBranch struct {
	ID                        int64
	ProjectID                 int64
	Name                      string
	AllowForcePush            bool
	CodeOwnerApprovalRequired bool
	Push, Merge, Unprotect    []BranchAccess
	CreatedAt                 time.Time
}

// BranchAccessDescription names a protected branch access level.
func BranchAccessDescription(l AccessLevel) string {
	switch l {
	case NoOneAccess:
		return "No one"
	case Developer:
		return "Developers + Maintainers"
	case Maintainer:
		return "Maintainers"
	case AdminAccess:
		return "Administrators"
	}
	return RoleName(l)
}

// MatchesBranch reports whether a protected branch rule (exact, or with
// `*` wildcards matching any run of characters) covers branch.
func MatchesBranch(rule, branch string) bool {
	if rule == branch {
		return true
	}
	return wildcardMatch(rule, branch)
}

func wildcardMatch(pattern, s string) bool {
	// Iterative glob with only '*': backtrack to the last star.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
