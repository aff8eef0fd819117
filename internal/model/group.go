package model

import "time"

// Namespace kinds.
const (
	NamespaceUser  = "user"
	NamespaceGroup = "group"
)

// Namespace is where projects live: a user's personal namespace or a group.
type Namespace struct {
	ID         int64
	Name       string
	Path       string
	Kind       string
	OwnerID    int64 // user namespaces
	ParentID   int64 // 0 for top level
	FullPath   string
	FullName   string
	Traversal  string // ancestor ids and own id, "1/5/9/"
	Visibility Visibility
	Avatar     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// EntityVersion moves on every write to the row (a trigger): the
	// entity cache's key.
	EntityVersion int64
}

// Group is a namespace of kind group with its settings.
type Group struct {
	Namespace
	Description         string
	Settings            GroupSettings
	RunnersToken        string
	MarkedForDeletionOn string
	Version             int64
	// RepositoryStorage is the storage of the group's wiki;
	// RepositoryReadOnly is set while a storage move holds it.
	RepositoryStorage  string
	RepositoryReadOnly bool
}

// GroupSettings are the group's plain settings, stored as one document.
type GroupSettings struct {
	ShareWithGroupLock             bool   `json:"share_with_group_lock"`
	RequireTwoFactorAuthentication bool   `json:"require_two_factor_authentication"`
	TwoFactorGracePeriod           int    `json:"two_factor_grace_period"`
	ProjectCreationLevel           string `json:"project_creation_level"`
	SubgroupCreationLevel          string `json:"subgroup_creation_level"`
	AutoDevopsEnabled              *bool  `json:"auto_devops_enabled"`
	EmailsDisabled                 *bool  `json:"emails_disabled"`
	MentionsDisabled               *bool  `json:"mentions_disabled"`
	LFSEnabled                     bool   `json:"lfs_enabled"`
	DefaultBranchProtection        int    `json:"default_branch_protection"`
	RequestAccessEnabled           bool   `json:"request_access_enabled"`
	FileTemplateProjectID          *int64 `json:"file_template_project_id"`
	DefaultBranch                  string `json:"default_branch"`
}

// DefaultGroupSettings are a new group's settings.
func DefaultGroupSettings() GroupSettings {
	return GroupSettings{TwoFactorGracePeriod: 48, ProjectCreationLevel: "developer", SubgroupCreationLevel: "owner",
		LFSEnabled: true, DefaultBranchProtection: 2, RequestAccessEnabled: true}
}

// VisibilityRank orders visibility levels: private < internal < public.
func VisibilityRank(v Visibility) int {
	switch v {
	case Public:
		return 20
	case Internal:
		return 10
	}
	return 0
}

// ValidVisibility reports a known visibility level.
func ValidVisibility(v string) bool {
	return v == string(Private) || v == string(Internal) || v == string(Public)
}

// OwnerRef names the project or group that owns what a request reaches
// (labels, milestones, boards, badges, wikis), as the request names it:
// Ref is the path's :id, an integer id or a full path.
type OwnerRef struct {
	Group bool
	Ref   string
}
