package model

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Project is a repository with its settings.
type Project struct {
	ID                int64
	NamespaceID       int64
	CreatorID         int64
	Name              string
	Path              string
	Description       string
	Visibility        Visibility
	DefaultBranch     string
	Archived          bool
	RepositoryStorage string
	// RepositoryReadOnly is set while a storage move holds the
	// repository (and wiki): writes are refused, reads go on.
	RepositoryReadOnly bool
	DiskPath           string
	EmptyRepo          bool
	HasReadme          bool
	ImportStatus       string
	ImportError        string
	ForkedFromID       *int64
	StarCount          int
	ForksCount         int
	// OpenIssuesCount counts the project's open issues and
	// OpenConfidentialIssuesCount the confidential ones among them (kept
	// by every issue write).
	OpenIssuesCount, OpenConfidentialIssuesCount int
	Avatar                                       string
	IssuesAccessLevel                            string
	MergeRequestsAccessLevel                     string
	Settings                                     ProjectSettings
	RepositorySize                               int64
	WikiSize                                     int64 // the wiki repository's size, kept by the wikis service
	CommitCount                                  int64
	MarkedForDeletionOn                          string
	PendingDelete                                bool
	LastActivityAt                               time.Time
	CreatedAt                                    time.Time
	UpdatedAt                                    time.Time
	Version                                      int64
	// EntityVersion moves on every write to the row or its topics (a
	// trigger): the entity cache's key.
	EntityVersion int64

	// Loaded with the project.
	Namespace Namespace
	Topics    []string
}

// FullPath is "group/sub/project".
func (p *Project) FullPath() string { return p.Namespace.FullPath + "/" + p.Path }

// FullName is "Group / Sub / Project".
func (p *Project) FullName() string { return p.Namespace.FullName + " / " + p.Name }

// ContainerExpirationPolicy is the registry cleanup policy of a project.
type ContainerExpirationPolicy struct {
	Cadence       string  `json:"cadence"`
	Enabled       bool    `json:"enabled"`
	KeepN         *int    `json:"keep_n"`
	OlderThan     *string `json:"older_than"`
	NameRegex     *string `json:"name_regex"`
	NameRegexKeep *string `json:"name_regex_keep"`
	NextRunAt     *string `json:"next_run_at"`
}

// ProjectSettings are a project's plain settings, stored as one document.
type ProjectSettings struct {
	RepositoryAccessLevel                    string                    `json:"repository_access_level"`
	ForkingAccessLevel                       string                    `json:"forking_access_level"`
	WikiAccessLevel                          string                    `json:"wiki_access_level"`
	BuildsAccessLevel                        string                    `json:"builds_access_level"`
	SnippetsAccessLevel                      string                    `json:"snippets_access_level"`
	PagesAccessLevel                         string                    `json:"pages_access_level"`
	AnalyticsAccessLevel                     string                    `json:"analytics_access_level"`
	OperationsAccessLevel                    string                    `json:"operations_access_level"`
	RequirementsAccessLevel                  string                    `json:"requirements_access_level"`
	ContainerRegistryAccessLevel             string                    `json:"container_registry_access_level"`
	SharedRunnersEnabled                     bool                      `json:"shared_runners_enabled"`
	RunnersToken                             string                    `json:"-"` // sealed by the store in a column of its own
	CIDefaultGitDepth                        int                       `json:"ci_default_git_depth"`
	CIForwardDeploymentEnabled               bool                      `json:"ci_forward_deployment_enabled"`
	CISeparatedCaches                        *bool                     `json:"ci_separated_caches,omitempty"` // nil: true; see SeparatedCaches
	PublicJobs                               bool                      `json:"public_jobs"`
	BuildTimeout                             int                       `json:"build_timeout"`
	AutoCancelPendingPipelines               string                    `json:"auto_cancel_pending_pipelines"`
	BuildCoverageRegex                       *string                   `json:"build_coverage_regex"`
	CIConfigPath                             *string                   `json:"ci_config_path"`
	BuildGitStrategy                         string                    `json:"build_git_strategy"`
	OnlyAllowMergeIfPipelineSucceeds         bool                      `json:"only_allow_merge_if_pipeline_succeeds"`
	AllowMergeOnSkippedPipeline              *bool                     `json:"allow_merge_on_skipped_pipeline"`
	RestrictUserDefinedVariables             bool                      `json:"restrict_user_defined_variables"`
	OnlyAllowMergeIfAllDiscussionsResolved   bool                      `json:"only_allow_merge_if_all_discussions_are_resolved"`
	RemoveSourceBranchAfterMerge             bool                      `json:"remove_source_branch_after_merge"`
	RequestAccessEnabled                     bool                      `json:"request_access_enabled"`
	MergeMethod                              string                    `json:"merge_method"`
	SquashOption                             string                    `json:"squash_option"`
	AutocloseReferencedIssues                bool                      `json:"autoclose_referenced_issues"`
	SuggestionCommitMessage                  *string                   `json:"suggestion_commit_message"`
	MergeCommitTemplate                      *string                   `json:"merge_commit_template"`
	ResolveOutdatedDiffDiscussions           bool                      `json:"resolve_outdated_diff_discussions"`
	PrintingMergeRequestLinkEnabled          bool                      `json:"printing_merge_request_link_enabled"`
	AutoDevopsEnabled                        bool                      `json:"auto_devops_enabled"`
	AutoDevopsDeployStrategy                 string                    `json:"auto_devops_deploy_strategy"`
	KeepLatestArtifact                       bool                      `json:"keep_latest_artifact"`
	EmailsDisabled                           bool                      `json:"emails_disabled"`
	LFSEnabled                               bool                      `json:"lfs_enabled"`
	ContainerExpirationPolicy                ContainerExpirationPolicy `json:"container_expiration_policy"`
	ApprovalsBeforeMerge                     int                       `json:"approvals_before_merge"`
	Mirror                                   bool                      `json:"mirror"`
	MirrorUserID                             *int64                    `json:"mirror_user_id"`
	MirrorTriggerBuilds                      bool                      `json:"mirror_trigger_builds"`
	OnlyMirrorProtectedBranches              bool                      `json:"only_mirror_protected_branches"`
	MirrorOverwritesDivergedBranches         bool                      `json:"mirror_overwrites_diverged_branches"`
	ExternalAuthorizationClassificationLabel string                    `json:"external_authorization_classification_label"`
	PackagesEnabled                          bool                      `json:"packages_enabled"`
	ServiceDeskEnabled                       bool                      `json:"service_desk_enabled"`
	ShowDefaultAwardEmojis                   bool                      `json:"show_default_award_emojis"`
	IssuesTemplate                           *string                   `json:"issues_template"`
	MergeRequestsTemplate                    *string                   `json:"merge_requests_template"`
	ImportURL                                *string                   `json:"import_url"`
	ProgrammingLanguages                     map[string]float64        `json:"programming_languages,omitempty"`
}

// SeparatedCaches reports ci_separated_caches: whether protected and
// unprotected refs' runner caches are kept apart. Nil (settings stored
// before the field existed) is GitLab's default, true.
func (s ProjectSettings) SeparatedCaches() bool {
	return s.CISeparatedCaches == nil || *s.CISeparatedCaches
}

// DefaultProjectSettings are a new project's settings.
func DefaultProjectSettings() ProjectSettings {
	return ProjectSettings{
		RepositoryAccessLevel: "enabled", ForkingAccessLevel: "enabled", WikiAccessLevel: "enabled",
		BuildsAccessLevel: "enabled", SnippetsAccessLevel: "enabled", PagesAccessLevel: "private",
		AnalyticsAccessLevel: "enabled", OperationsAccessLevel: "enabled", RequirementsAccessLevel: "enabled",
		ContainerRegistryAccessLevel: "enabled", SharedRunnersEnabled: true, CIDefaultGitDepth: 20,
		CIForwardDeploymentEnabled: true, PublicJobs: true, BuildTimeout: 3600, AutoCancelPendingPipelines: "enabled",
		BuildGitStrategy: "fetch", RemoveSourceBranchAfterMerge: true, RequestAccessEnabled: true, MergeMethod: "merge",
		SquashOption: "default_off", AutocloseReferencedIssues: true, PrintingMergeRequestLinkEnabled: true,
		AutoDevopsDeployStrategy: "continuous", LFSEnabled: true, PackagesEnabled: true, ShowDefaultAwardEmojis: true,
		ContainerExpirationPolicy: ContainerExpirationPolicy{Cadence: "1d", KeepN: intPtr(10), OlderThan: strPtr("90d"),
			NameRegex: strPtr(".*")},
	}
}

func intPtr(n int) *int       { return &n }
func strPtr(s string) *string { return &s }

// FeatureLevels are the values of a feature access level.
var FeatureLevels = []string{"disabled", "private", "enabled"}

// PagesLevels adds "public" for pages and requirements.
var PagesLevels = []string{"disabled", "private", "enabled", "public"}

// Topic is a label projects share.
type Topic struct {
	ID                 int64
	Name               string
	Title              string
	Description        string
	Avatar             string
	TotalProjectsCount int
	CreatedAt          time.Time
}

// Star is a user's star on a project.
type Star struct {
	UserID    int64
	ProjectID int64
	CreatedAt time.Time
}

// GroupLink shares a project with a group at an access level.
type GroupLink struct {
	ProjectID   int64
	GroupID     int64
	GroupAccess AccessLevel
	ExpiresAt   string
	Group       Namespace
}

// ProjectStatistics are storage figures in bytes.
type ProjectStatistics struct {
	CommitCount           int64
	StorageSize           int64
	RepositorySize        int64
	WikiSize              int64
	LFSObjectsSize        int64
	JobArtifactsSize      int64
	PipelineArtifactsSize int64
	PackagesSize          int64
	SnippetsSize          int64
	UploadsSize           int64
}

// Starrer is a user who starred a project.
type Starrer struct {
	User      User
	StarredAt time.Time
}

// MaxTopicLength is the longest topic name, in characters.
const MaxTopicLength = 255

// CleanTopics reads a project's topic list as GitLab does: names trimmed,
// empty ones dropped, and a name repeated in any case kept once (topics
// are one per name, whatever its case), in order. msg is the validation
// message of a name that is too long ("" when all are fine).
func CleanTopics(in []string) (topics []string, msg string) {
	seen := make(map[string]bool, len(in))
	for _, t := range in {
		t = strings.TrimSpace(t)
		key := strings.ToLower(t)
		if t == "" || seen[key] {
			continue
		}
		if utf8.RuneCountInString(t) > MaxTopicLength {
			msg = "is too long (maximum is 255 characters)"
		}
		seen[key] = true
		topics = append(topics, t)
	}
	if topics == nil {
		topics = []string{}
	}
	return topics, msg
}
