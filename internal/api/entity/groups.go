package entity

import (
	"quarry/internal/model"
)

type Group struct {
	ID                             int64              `json:"id"`
	WebURL                         string             `json:"web_url"`
	Name                           string             `json:"name"`
	Path                           string             `json:"path"`
	Description                    string             `json:"description"`
	Visibility                     string             `json:"visibility"`
	ShareWithGroupLock             bool               `json:"share_with_group_lock"`
	RequireTwoFactorAuthentication bool               `json:"require_two_factor_authentication"`
	TwoFactorGracePeriod           int                `json:"two_factor_grace_period"`
	ProjectCreationLevel           string             `json:"project_creation_level"`
	AutoDevopsEnabled              *bool              `json:"auto_devops_enabled"`
	SubgroupCreationLevel          string             `json:"subgroup_creation_level"`
	EmailsDisabled                 *bool              `json:"emails_disabled"`
	EmailsEnabled                  *bool              `json:"emails_enabled"`
	MentionsDisabled               *bool              `json:"mentions_disabled"`
	LFSEnabled                     bool               `json:"lfs_enabled"`
	DefaultBranch                  *string            `json:"default_branch"`
	DefaultBranchProtection        int                `json:"default_branch_protection"`
	AvatarURL                      *string            `json:"avatar_url"`
	RequestAccessEnabled           bool               `json:"request_access_enabled"`
	FullName                       string             `json:"full_name"`
	FullPath                       string             `json:"full_path"`
	CreatedAt                      Time               `json:"created_at"`
	ParentID                       *int64             `json:"parent_id"`
	FileTemplateProjectID          *int64             `json:"file_template_project_id"`
	MarkedForDeletionOn            *string            `json:"marked_for_deletion_on"`
	Statistics                     *Statistics        `json:"statistics,omitempty"`
	CustomAttributes               *[]CustomAttribute `json:"custom_attributes,omitempty"`
}

type GroupDetail struct {
	Group
	SharedWithGroups []SharedGroup `json:"shared_with_groups"`
	RunnersToken     *string       `json:"runners_token,omitempty"`
	Projects         *[]Project    `json:"projects,omitempty"`
	SharedProjects   *[]Project    `json:"shared_projects,omitempty"`
	// ImportStatus, ImportError and ImportStatistics are Quarry's own:
	// how the group import that made the group went (GitLab shows no
	// state of a file-based group import).
	ImportStatus     string                 `json:"import_status"`
	ImportError      *string                `json:"import_error"`
	ImportStatistics *GroupImportStatistics `json:"import_statistics,omitempty"`
}

// GroupImportStatistics counts what a group import brought (groups, and
// records by relation) and what it left out.
type GroupImportStatistics struct {
	Groups   int            `json:"groups"`
	Imported map[string]int `json:"imported"`
	Skipped  map[string]int `json:"skipped"`
}

func (r *Renderer) Group(g *model.Group) Group {
	st := g.Settings
	j := Group{ID: g.ID, WebURL: r.NamespaceWebURL(&g.Namespace), Name: g.Name, Path: g.Path, Description: g.Description,
		Visibility: string(g.Visibility), ShareWithGroupLock: st.ShareWithGroupLock,
		RequireTwoFactorAuthentication: st.RequireTwoFactorAuthentication, TwoFactorGracePeriod: st.TwoFactorGracePeriod,
		ProjectCreationLevel: st.ProjectCreationLevel, AutoDevopsEnabled: st.AutoDevopsEnabled,
		SubgroupCreationLevel: st.SubgroupCreationLevel, EmailsDisabled: st.EmailsDisabled, MentionsDisabled: st.MentionsDisabled,
		LFSEnabled: st.LFSEnabled, DefaultBranch: StrPtr(st.DefaultBranch), DefaultBranchProtection: st.DefaultBranchProtection,
		AvatarURL: r.AvatarURL(g.Avatar), RequestAccessEnabled: st.RequestAccessEnabled, FullName: g.FullName, FullPath: g.FullPath,
		CreatedAt: Time(g.CreatedAt), FileTemplateProjectID: st.FileTemplateProjectID, MarkedForDeletionOn: StrPtr(g.MarkedForDeletionOn)}
	if st.EmailsDisabled != nil {
		e := !*st.EmailsDisabled
		j.EmailsEnabled = &e
	}
	if g.ParentID != 0 {
		j.ParentID = &g.ParentID
	}
	return j
}

type Topic struct {
	ID                 int64   `json:"id"`
	Name               string  `json:"name"`
	Title              string  `json:"title"`
	Description        *string `json:"description"`
	TotalProjectsCount int     `json:"total_projects_count"`
	AvatarURL          *string `json:"avatar_url"`
}

func (r *Renderer) Topic(t *model.Topic) Topic {
	return Topic{ID: t.ID, Name: t.Name, Title: t.Title, Description: StrPtr(t.Description),
		TotalProjectsCount: t.TotalProjectsCount, AvatarURL: r.AvatarURL(t.Avatar)}
}

type FullNamespace struct {
	Namespace
	MembersCountWithDescendants *int   `json:"members_count_with_descendants,omitempty"`
	BillableMembersCount        *int   `json:"billable_members_count,omitempty"`
	Plan                        string `json:"plan,omitempty"`
}
