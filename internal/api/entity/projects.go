package entity

import (
	"fmt"
	"html"
	"net/url"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
)

type Namespace struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	Path      string  `json:"path"`
	Kind      string  `json:"kind"`
	FullPath  string  `json:"full_path"`
	ParentID  *int64  `json:"parent_id"`
	AvatarURL *string `json:"avatar_url"`
	WebURL    string  `json:"web_url"`
}

func (r *Renderer) Namespace(n *model.Namespace) Namespace {
	j := Namespace{ID: n.ID, Name: n.Name, Path: n.Path, Kind: n.Kind, FullPath: n.FullPath,
		AvatarURL: r.AvatarURL(n.Avatar), WebURL: r.NamespaceWebURL(n)}
	if n.ParentID != 0 {
		j.ParentID = &n.ParentID
	}
	return j
}

func (r *Renderer) NamespaceWebURL(n *model.Namespace) string {
	if n.Kind == model.NamespaceGroup {
		return r.ExternalURL + "/groups/" + n.FullPath
	}
	return r.ExternalURL + "/" + n.FullPath
}

// SSHURL is where git over SSH reaches a repository: git@host:path.git,
// or ssh://git@host:port/path.git on another port than 22.
func (r *Renderer) SSHURL(fullPath string) string {
	host := r.SSHHost
	if host == "" {
		host = r.ExternalURL
		if u, err := url.Parse(r.ExternalURL); err == nil {
			host = u.Hostname()
		}
	}
	return model.SSHCloneURL(host, r.SSHPort, fullPath)
}

type ProjectBasic struct {
	ID                int64              `json:"id"`
	Description       string             `json:"description"`
	Name              string             `json:"name"`
	NameWithNamespace string             `json:"name_with_namespace"`
	Path              string             `json:"path"`
	PathWithNamespace string             `json:"path_with_namespace"`
	CreatedAt         Time               `json:"created_at"`
	DefaultBranch     *string            `json:"default_branch,omitempty"`
	TagList           []string           `json:"tag_list"`
	Topics            []string           `json:"topics"`
	SSHURLToRepo      string             `json:"ssh_url_to_repo"`
	HTTPURLToRepo     string             `json:"http_url_to_repo"`
	WebURL            string             `json:"web_url"`
	ReadmeURL         *string            `json:"readme_url"`
	ForksCount        *int               `json:"forks_count,omitempty"`
	AvatarURL         *string            `json:"avatar_url"`
	StarCount         int                `json:"star_count"`
	LastActivityAt    Time               `json:"last_activity_at"`
	Namespace         Namespace          `json:"namespace"`
	RepositoryStorage string             `json:"repository_storage,omitempty"`
	CustomAttributes  *[]CustomAttribute `json:"custom_attributes,omitempty"`
}

type ProjectLinks struct {
	Self          string `json:"self"`
	Issues        string `json:"issues,omitempty"`
	MergeRequests string `json:"merge_requests,omitempty"`
	RepoBranches  string `json:"repo_branches"`
	Labels        string `json:"labels"`
	Events        string `json:"events"`
	Members       string `json:"members"`
	ClusterAgents string `json:"cluster_agents"`
}

type SharedGroup struct {
	GroupID          int64   `json:"group_id"`
	GroupName        string  `json:"group_name"`
	GroupFullPath    string  `json:"group_full_path"`
	GroupAccessLevel int     `json:"group_access_level"`
	ExpiresAt        *string `json:"expires_at"`
}

type Access struct {
	AccessLevel       int `json:"access_level"`
	NotificationLevel int `json:"notification_level"`
}

type Permissions struct {
	ProjectAccess *Access `json:"project_access"`
	GroupAccess   *Access `json:"group_access"`
}

type Statistics struct {
	CommitCount           int64 `json:"commit_count"`
	StorageSize           int64 `json:"storage_size"`
	RepositorySize        int64 `json:"repository_size"`
	WikiSize              int64 `json:"wiki_size"`
	LFSObjectsSize        int64 `json:"lfs_objects_size"`
	JobArtifactsSize      int64 `json:"job_artifacts_size"`
	PipelineArtifactsSize int64 `json:"pipeline_artifacts_size"`
	PackagesSize          int64 `json:"packages_size"`
	SnippetsSize          int64 `json:"snippets_size"`
	UploadsSize           int64 `json:"uploads_size"`
	ContainerRegistrySize int64 `json:"container_registry_size"`
}

func (r *Renderer) Statistics(st *model.ProjectStatistics) *Statistics {
	if st == nil {
		return nil
	}
	return &Statistics{CommitCount: st.CommitCount, StorageSize: st.StorageSize, RepositorySize: st.RepositorySize,
		WikiSize: st.WikiSize, LFSObjectsSize: st.LFSObjectsSize, JobArtifactsSize: st.JobArtifactsSize,
		PipelineArtifactsSize: st.PipelineArtifactsSize, PackagesSize: st.PackagesSize, SnippetsSize: st.SnippetsSize,
		UploadsSize: st.UploadsSize}
}

// ProjectCI are the settings only maintainers see.
type ProjectCI struct {
	CIDefaultGitDepth             int     `json:"ci_default_git_depth"`
	CIForwardDeploymentEnabled    bool    `json:"ci_forward_deployment_enabled"`
	CIJobTokenScopeEnabled        bool    `json:"ci_job_token_scope_enabled"`
	CISeparatedCaches             bool    `json:"ci_separated_caches"`
	BuildGitStrategy              string  `json:"build_git_strategy"`
	KeepLatestArtifact            bool    `json:"keep_latest_artifact"`
	RestrictUserDefinedVariables  bool    `json:"restrict_user_defined_variables"`
	RunnersToken                  string  `json:"runners_token"`
	RunnerTokenExpirationInterval *int    `json:"runner_token_expiration_interval"`
	GroupRunnersEnabled           bool    `json:"group_runners_enabled"`
	AutoCancelPendingPipelines    string  `json:"auto_cancel_pending_pipelines"`
	BuildTimeout                  int     `json:"build_timeout"`
	AutoDevopsEnabled             bool    `json:"auto_devops_enabled"`
	AutoDevopsDeployStrategy      string  `json:"auto_devops_deploy_strategy"`
	BuildCoverageRegex            *string `json:"build_coverage_regex"`
	ImportURL                     *string `json:"import_url"`
	ImportType                    *string `json:"import_type"`
	ImportError                   *string `json:"import_error"`
}

type Project struct {
	ProjectBasic
	Links                                  ProjectLinks                    `json:"_links"`
	PackagesEnabled                        bool                            `json:"packages_enabled"`
	EmptyRepo                              bool                            `json:"empty_repo"`
	Archived                               bool                            `json:"archived"`
	Visibility                             string                          `json:"visibility"`
	Owner                                  *UserBasic                      `json:"owner,omitempty"`
	ResolveOutdatedDiffDiscussions         bool                            `json:"resolve_outdated_diff_discussions"`
	ContainerExpirationPolicy              model.ContainerExpirationPolicy `json:"container_expiration_policy"`
	RepositoryObjectFormat                 string                          `json:"repository_object_format"`
	IssuesEnabled                          bool                            `json:"issues_enabled"`
	MergeRequestsEnabled                   bool                            `json:"merge_requests_enabled"`
	WikiEnabled                            bool                            `json:"wiki_enabled"`
	JobsEnabled                            bool                            `json:"jobs_enabled"`
	SnippetsEnabled                        bool                            `json:"snippets_enabled"`
	ContainerRegistryEnabled               bool                            `json:"container_registry_enabled"`
	ServiceDeskEnabled                     bool                            `json:"service_desk_enabled"`
	ServiceDeskAddress                     *string                         `json:"service_desk_address"`
	CanCreateMergeRequestIn                bool                            `json:"can_create_merge_request_in"`
	IssuesAccessLevel                      string                          `json:"issues_access_level"`
	RepositoryAccessLevel                  string                          `json:"repository_access_level"`
	MergeRequestsAccessLevel               string                          `json:"merge_requests_access_level"`
	ForkingAccessLevel                     string                          `json:"forking_access_level"`
	WikiAccessLevel                        string                          `json:"wiki_access_level"`
	BuildsAccessLevel                      string                          `json:"builds_access_level"`
	SnippetsAccessLevel                    string                          `json:"snippets_access_level"`
	PagesAccessLevel                       string                          `json:"pages_access_level"`
	AnalyticsAccessLevel                   string                          `json:"analytics_access_level"`
	ContainerRegistryAccessLevel           string                          `json:"container_registry_access_level"`
	OperationsAccessLevel                  string                          `json:"operations_access_level"`
	RequirementsAccessLevel                string                          `json:"requirements_access_level"`
	EmailsDisabled                         bool                            `json:"emails_disabled"`
	EmailsEnabled                          bool                            `json:"emails_enabled"`
	SharedRunnersEnabled                   bool                            `json:"shared_runners_enabled"`
	LFSEnabled                             bool                            `json:"lfs_enabled"`
	CreatorID                              int64                           `json:"creator_id"`
	ForkedFromProject                      *ProjectBasic                   `json:"forked_from_project,omitempty"`
	ImportStatus                           string                          `json:"import_status"`
	OpenIssuesCount                        *int                            `json:"open_issues_count,omitempty"`
	DescriptionHTML                        string                          `json:"description_html"`
	UpdatedAt                              Time                            `json:"updated_at"`
	*ProjectCI                                                             //
	CIConfigPath                           *string                         `json:"ci_config_path"`
	PublicJobs                             bool                            `json:"public_jobs"`
	SharedWithGroups                       []SharedGroup                   `json:"shared_with_groups"`
	OnlyAllowMergeIfPipelineSucceeds       bool                            `json:"only_allow_merge_if_pipeline_succeeds"`
	AllowMergeOnSkippedPipeline            *bool                           `json:"allow_merge_on_skipped_pipeline"`
	RequestAccessEnabled                   bool                            `json:"request_access_enabled"`
	OnlyAllowMergeIfAllDiscussionsResolved bool                            `json:"only_allow_merge_if_all_discussions_are_resolved"`
	RemoveSourceBranchAfterMerge           bool                            `json:"remove_source_branch_after_merge"`
	PrintingMergeRequestLinkEnabled        bool                            `json:"printing_merge_request_link_enabled"`
	MergeMethod                            string                          `json:"merge_method"`
	SquashOption                           string                          `json:"squash_option"`
	SuggestionCommitMessage                *string                         `json:"suggestion_commit_message"`
	MergeCommitTemplate                    *string                         `json:"merge_commit_template"`
	AutocloseReferencedIssues              bool                            `json:"autoclose_referenced_issues"`
	ApprovalsBeforeMerge                   int                             `json:"approvals_before_merge"`
	Mirror                                 bool                            `json:"mirror"`
	ExternalAuthorizationLabel             string                          `json:"external_authorization_classification_label"`
	MarkedForDeletionAt                    *string                         `json:"marked_for_deletion_at"`
	MarkedForDeletionOn                    *string                         `json:"marked_for_deletion_on"`
	Statistics                             *Statistics                     `json:"statistics,omitempty"`
	Permissions                            *Permissions                    `json:"permissions,omitempty"`
	ContainerRegistryImagePrefix           string                          `json:"container_registry_image_prefix"`
	MirrorUserID                           *int64                          `json:"mirror_user_id,omitempty"`
	MirrorTriggerBuilds                    *bool                           `json:"mirror_trigger_builds,omitempty"`
	OnlyMirrorProtectedBranches            *bool                           `json:"only_mirror_protected_branches,omitempty"`
	MirrorOverwritesDivergedBranches       *bool                           `json:"mirror_overwrites_diverged_branches,omitempty"`
}

// ProjectWithLicense is a project asked for with license=true.
type ProjectWithLicense struct {
	Project
	LicenseURL *string  `json:"license_url"`
	License    *License `json:"license"`
}

type License struct {
	Key       string `json:"key"`
	Name      string `json:"name"`
	Nickname  string `json:"nickname"`
	HTMLURL   string `json:"html_url"`
	SourceURL string `json:"source_url"`
}

func (r *Renderer) ProjectWebURL(p *model.Project) string { return r.ExternalURL + "/" + p.FullPath() }

func (r *Renderer) ProjectBasic(v *projects.View, a auth.Actor) ProjectBasic {
	p := &v.Project
	topics := v.Topics
	if topics == nil {
		topics = []string{}
	}
	j := ProjectBasic{ID: p.ID, Description: p.Description, Name: p.Name, NameWithNamespace: p.FullName(),
		Path: p.Path, PathWithNamespace: p.FullPath(), CreatedAt: Time(p.CreatedAt), TagList: topics, Topics: topics,
		SSHURLToRepo: r.SSHURL(p.FullPath()), HTTPURLToRepo: r.ProjectWebURL(p) + ".git", WebURL: r.ProjectWebURL(p),
		AvatarURL: r.AvatarURL(p.Avatar), StarCount: p.StarCount, LastActivityAt: Time(p.LastActivityAt),
		Namespace: r.Namespace(&p.Namespace)}
	if v.CanReadCode {
		branch := p.DefaultBranch
		j.DefaultBranch = &branch
		forks := p.ForksCount
		j.ForksCount = &forks
		if p.HasReadme && !p.EmptyRepo {
			u := r.ProjectWebURL(p) + "/-/blob/" + escapeSegments(p.DefaultBranch) + "/README.md"
			j.ReadmeURL = &u
		}
	}
	if a.Admin() {
		j.RepositoryStorage = p.RepositoryStorage
	}
	return j
}

func featureOn(level string) bool { return level != "disabled" }

// seesConfidentialIssues reports whether the caller counts a project's
// confidential issues: reporters up and administrators.
func seesConfidentialIssues(v *projects.View, a auth.Actor) bool {
	return a.Admin() || v.Access >= model.Reporter
}

func (r *Renderer) Project(v *projects.View, a auth.Actor) Project {
	p := &v.Project
	st := &p.Settings
	self := fmt.Sprintf("%s/api/v4/projects/%d", r.ExternalURL, p.ID)
	j := Project{ProjectBasic: r.ProjectBasic(v, a),
		Links: ProjectLinks{Self: self, RepoBranches: self + "/repository/branches", Labels: self + "/labels",
			Events: self + "/events", Members: self + "/members", ClusterAgents: self + "/cluster_agents"},
		PackagesEnabled: st.PackagesEnabled, EmptyRepo: p.EmptyRepo, Archived: p.Archived, Visibility: string(p.Visibility),
		ResolveOutdatedDiffDiscussions: st.ResolveOutdatedDiffDiscussions, ContainerExpirationPolicy: st.ContainerExpirationPolicy,
		RepositoryObjectFormat: "sha1",
		IssuesEnabled:          featureOn(p.IssuesAccessLevel), MergeRequestsEnabled: featureOn(p.MergeRequestsAccessLevel),
		WikiEnabled: featureOn(st.WikiAccessLevel), JobsEnabled: featureOn(st.BuildsAccessLevel),
		SnippetsEnabled: featureOn(st.SnippetsAccessLevel), ContainerRegistryEnabled: featureOn(st.ContainerRegistryAccessLevel),
		ServiceDeskEnabled: st.ServiceDeskEnabled, CanCreateMergeRequestIn: v.Access >= model.Developer || a.Admin(),
		IssuesAccessLevel: p.IssuesAccessLevel, RepositoryAccessLevel: st.RepositoryAccessLevel,
		MergeRequestsAccessLevel: p.MergeRequestsAccessLevel, ForkingAccessLevel: st.ForkingAccessLevel,
		WikiAccessLevel: st.WikiAccessLevel, BuildsAccessLevel: st.BuildsAccessLevel, SnippetsAccessLevel: st.SnippetsAccessLevel,
		PagesAccessLevel: st.PagesAccessLevel, AnalyticsAccessLevel: st.AnalyticsAccessLevel,
		ContainerRegistryAccessLevel: st.ContainerRegistryAccessLevel, OperationsAccessLevel: st.OperationsAccessLevel,
		RequirementsAccessLevel: st.RequirementsAccessLevel, EmailsDisabled: st.EmailsDisabled, EmailsEnabled: !st.EmailsDisabled,
		SharedRunnersEnabled: st.SharedRunnersEnabled, LFSEnabled: st.LFSEnabled, CreatorID: p.CreatorID,
		ImportStatus: p.ImportStatus, DescriptionHTML: descriptionHTML(p.Description), UpdatedAt: Time(p.UpdatedAt),
		PublicJobs:                       st.PublicJobs,
		OnlyAllowMergeIfPipelineSucceeds: st.OnlyAllowMergeIfPipelineSucceeds, AllowMergeOnSkippedPipeline: st.AllowMergeOnSkippedPipeline,
		RequestAccessEnabled: st.RequestAccessEnabled, OnlyAllowMergeIfAllDiscussionsResolved: st.OnlyAllowMergeIfAllDiscussionsResolved,
		RemoveSourceBranchAfterMerge: st.RemoveSourceBranchAfterMerge, PrintingMergeRequestLinkEnabled: st.PrintingMergeRequestLinkEnabled,
		MergeMethod: st.MergeMethod, SquashOption: st.SquashOption, SuggestionCommitMessage: st.SuggestionCommitMessage,
		MergeCommitTemplate: st.MergeCommitTemplate, AutocloseReferencedIssues: st.AutocloseReferencedIssues,
		ApprovalsBeforeMerge: st.ApprovalsBeforeMerge, Mirror: st.Mirror, ExternalAuthorizationLabel: st.ExternalAuthorizationClassificationLabel,
		MarkedForDeletionAt: StrPtr(p.MarkedForDeletionOn), MarkedForDeletionOn: StrPtr(p.MarkedForDeletionOn),
		Statistics: r.Statistics(v.Statistics)}
	if featureOn(p.IssuesAccessLevel) {
		j.Links.Issues = self + "/issues"
		// Confidential issues count for those who see them all (GitLab's
		// OpenIssuesCountService: reporters up).
		n := p.OpenIssuesCount
		if !seesConfidentialIssues(v, a) {
			n -= p.OpenConfidentialIssuesCount
		}
		j.OpenIssuesCount = &n
	}
	if featureOn(p.MergeRequestsAccessLevel) {
		j.Links.MergeRequests = self + "/merge_requests"
	}
	if v.CanReadCode {
		j.CIConfigPath = st.CIConfigPath
	}
	if v.Owner != nil {
		b := r.UserBasic(v.Owner)
		j.Owner = &b
	}
	if v.ForkedFrom != nil {
		fv := projects.View{Project: *v.ForkedFrom, CanReadCode: true}
		fb := r.ProjectBasic(&fv, a)
		j.ForkedFromProject = &fb
	}
	j.SharedWithGroups = sharedGroups(v)
	if v.CanAdmin {
		importType := (*string)(nil)
		if p.ForkedFromID != nil {
			t := "gitlab_project"
			importType = &t
		}
		j.ProjectCI = &ProjectCI{CIDefaultGitDepth: st.CIDefaultGitDepth, CIForwardDeploymentEnabled: st.CIForwardDeploymentEnabled,
			CISeparatedCaches: st.SeparatedCaches(),
			BuildGitStrategy:  st.BuildGitStrategy, KeepLatestArtifact: st.KeepLatestArtifact,
			RestrictUserDefinedVariables: st.RestrictUserDefinedVariables, RunnersToken: st.RunnersToken, GroupRunnersEnabled: true,
			AutoCancelPendingPipelines: st.AutoCancelPendingPipelines, BuildTimeout: st.BuildTimeout, AutoDevopsEnabled: st.AutoDevopsEnabled,
			AutoDevopsDeployStrategy: st.AutoDevopsDeployStrategy, BuildCoverageRegex: st.BuildCoverageRegex,
			ImportURL: st.ImportURL, ImportType: importType, ImportError: StrPtr(p.ImportError)}
	}
	if a.SignedIn() {
		j.Permissions = permissions(v)
	}
	if u, err := url.Parse(r.ExternalURL); err == nil {
		j.ContainerRegistryImagePrefix = u.Host + "/" + strings.ToLower(p.FullPath())
	}
	if st.Mirror && v.CanAdmin {
		j.MirrorUserID, j.MirrorTriggerBuilds = st.MirrorUserID, &st.MirrorTriggerBuilds
		j.OnlyMirrorProtectedBranches, j.MirrorOverwritesDivergedBranches = &st.OnlyMirrorProtectedBranches, &st.MirrorOverwritesDivergedBranches
	}
	return j
}

// sharedGroups are the groups a project is shared with.
func sharedGroups(v *projects.View) []SharedGroup {
	out := make([]SharedGroup, 0, len(v.SharedWith))
	for _, l := range v.SharedWith {
		out = append(out, SharedGroup{GroupID: l.GroupID, GroupName: l.Group.Name,
			GroupFullPath: l.Group.FullPath, GroupAccessLevel: int(l.GroupAccess), ExpiresAt: StrPtr(l.ExpiresAt)})
	}
	return out
}

// permissions are the caller's memberships of a project and its group.
func permissions(v *projects.View) *Permissions {
	perm := &Permissions{}
	if v.ProjectAccess > 0 {
		perm.ProjectAccess = &Access{AccessLevel: int(v.ProjectAccess), NotificationLevel: 3}
	}
	if v.GroupMember {
		perm.GroupAccess = &Access{AccessLevel: int(v.GroupAccess), NotificationLevel: 3}
	}
	return perm
}

func descriptionHTML(d string) string {
	if d == "" {
		return ""
	}
	return "<p dir=\"auto\">" + strings.ReplaceAll(html.EscapeString(d), "\n", "<br>") + "</p>"
}
