package model

import (
	"slices"
	"strings"
	"time"
)

// ApplicationSettings are the instance-wide settings Quarry keeps in the
// database; GET/PUT /application/settings show and change them. Every
// field is one attribute of GitLab's settings API under GitLab's name
// (the json tag) with GitLab's default (DefaultApplicationSettings).
//
// Tags:
//   - setting:"secret": written through the API but never shown; the
//     store keeps such values sealed, apart from the document.
//   - values:"a,b,c": the values Grape accepts for the parameter (any
//     other is "<name> does not have a valid value").
//   - effect:"…": where Quarry applies the attribute (README's settings
//     table is checked against these). An attribute without one is
//     stored and shown only.
//
// A pointer field is one whose value may be null.
type ApplicationSettings struct {
	// RunnersRegistrationToken is the instance's registration token; the
	// store keeps it sealed in a column of its own, not in the document.
	RunnersRegistrationToken string `json:"-"`

	AbuseNotificationEmail                    *string  `json:"abuse_notification_email"`
	AdminMode                                 bool     `json:"admin_mode" effect:"administrator powers through a token need the admin_mode scope"`
	AfterSignOutPath                          *string  `json:"after_sign_out_path"`
	AfterSignUpText                           *string  `json:"after_sign_up_text"`
	AkismetAPIKey                             *string  `json:"akismet_api_key" setting:"secret"`
	AkismetEnabled                            bool     `json:"akismet_enabled"`
	AllowAccountDeletion                      bool     `json:"allow_account_deletion"`
	AllowGroupOwnersToManageLDAP              bool     `json:"allow_group_owners_to_manage_ldap"`
	AllowLocalRequestsFromSystemHooks         bool     `json:"allow_local_requests_from_system_hooks"`
	AllowLocalRequestsFromWebHooksAndServices bool     `json:"allow_local_requests_from_web_hooks_and_services" effect:"include:remote may fetch from loopback and private addresses"`
	AllowProjectCreationForGuestAndBelow      bool     `json:"allow_project_creation_for_guest_and_below"`
	AllowRunnerRegistrationToken              bool     `json:"allow_runner_registration_token"`
	ArchiveBuildsInHumanReadable              *string  `json:"archive_builds_in_human_readable" effect:"jobs older than this cannot be retried or played"`
	AssetProxyAllowlist                       []string `json:"asset_proxy_allowlist"`
	AssetProxyEnabled                         bool     `json:"asset_proxy_enabled"`
	AssetProxySecretKey                       *string  `json:"asset_proxy_secret_key" setting:"secret"`
	AssetProxyURL                             *string  `json:"asset_proxy_url"`
	AuthorizedKeysEnabled                     bool     `json:"authorized_keys_enabled"`
	AutoDevOpsDomain                          *string  `json:"auto_devops_domain"`
	AutoDevOpsEnabled                         bool     `json:"auto_devops_enabled"`
	AutomaticPurchasedStorageAllocation       bool     `json:"automatic_purchased_storage_allocation"`
	BulkImportEnabled                         bool     `json:"bulk_import_enabled"`
	CanCreateGroup                            bool     `json:"can_create_group" effect:"can_create_group of new users"`
	CheckNamespacePlan                        bool     `json:"check_namespace_plan"`
	CIMaxIncludes                             int64    `json:"ci_max_includes" effect:"the included files a CI configuration may have"`
	CommitEmailHostname                       string   `json:"commit_email_hostname"`

	ContainerExpirationPoliciesEnableHistoricEntries bool  `json:"container_expiration_policies_enable_historic_entries"`
	ContainerRegistryTokenExpireDelay                int64 `json:"container_registry_token_expire_delay"`

	DeactivateDormantUsers        bool       `json:"deactivate_dormant_users" effect:"a daily task deactivates users inactive for deactivate_dormant_users_period days"`
	DeactivateDormantUsersPeriod  int64      `json:"deactivate_dormant_users_period" effect:"days of inactivity before deactivation"`
	DefaultArtifactsExpireIn      string     `json:"default_artifacts_expire_in" effect:"expiry of artifacts uploaded without expire_in"`
	DefaultBranchName             *string    `json:"default_branch_name" effect:"initial branch of new repositories and wikis"`
	DefaultBranchProtection       int64      `json:"default_branch_protection" values:"0,1,2,3,4" effect:"protection of a new project's default branch"`
	DefaultCIConfigPath           *string    `json:"default_ci_config_path" effect:"CI file of projects without ci_config_path"`
	DefaultGroupVisibility        Visibility `json:"default_group_visibility" effect:"visibility of groups created without one"`
	DefaultPreferredLanguage      string     `json:"default_preferred_language"`
	DefaultProjectCreation        int64      `json:"default_project_creation" values:"0,1,2,3,4" effect:"project_creation_level of new groups"`
	DefaultProjectVisibility      Visibility `json:"default_project_visibility" effect:"visibility of projects created without one"`
	DefaultProjectsLimit          int64      `json:"default_projects_limit" effect:"projects_limit of new users"`
	DefaultSnippetVisibility      Visibility `json:"default_snippet_visibility" effect:"visibility of snippets created without one"`
	DelayedGroupDeletion          bool       `json:"delayed_group_deletion" effect:"deleted groups stay restorable for deletion_adjourned_period days"`
	DelayedProjectDeletion        bool       `json:"delayed_project_deletion" effect:"deleted projects stay restorable for deletion_adjourned_period days"`
	DeletionAdjournedPeriod       int64      `json:"deletion_adjourned_period" effect:"days a deleted project or group stays restorable"`
	DiffMaxFiles                  int64      `json:"diff_max_files" effect:"files in a compare, commit or merge request diff"`
	DiffMaxLines                  int64      `json:"diff_max_lines" effect:"lines in a compare, commit or merge request diff"`
	DiffMaxPatchBytes             int64      `json:"diff_max_patch_bytes" effect:"size of one file's patch in a diff"`
	DisableFeedToken              bool       `json:"disable_feed_token"`
	DisabledOauthSignInSources    []string   `json:"disabled_oauth_sign_in_sources"`
	DNSRebindingProtectionEnabled bool       `json:"dns_rebinding_protection_enabled"`
	DomainAllowlist               []string   `json:"domain_allowlist"`
	DomainDenylist                []string   `json:"domain_denylist"`
	DomainDenylistEnabled         bool       `json:"domain_denylist_enabled"`
	DSAKeyRestriction             int64      `json:"dsa_key_restriction"`
	ECDSAKeyRestriction           int64      `json:"ecdsa_key_restriction"`
	ECDSASKKeyRestriction         int64      `json:"ecdsa_sk_key_restriction"`
	Ed25519KeyRestriction         int64      `json:"ed25519_key_restriction"`
	Ed25519SKKeyRestriction       int64      `json:"ed25519_sk_key_restriction"`
	EKSAccessKeyID                *string    `json:"eks_access_key_id"`
	EKSAccountID                  *string    `json:"eks_account_id"`
	EKSIntegrationEnabled         bool       `json:"eks_integration_enabled"`
	EKSSecretAccessKey            *string    `json:"eks_secret_access_key" setting:"secret"`

	ElasticsearchAWS                     bool     `json:"elasticsearch_aws"`
	ElasticsearchAWSAccessKey            *string  `json:"elasticsearch_aws_access_key"`
	ElasticsearchAWSRegion               string   `json:"elasticsearch_aws_region"`
	ElasticsearchAWSSecretAccessKey      *string  `json:"elasticsearch_aws_secret_access_key" setting:"secret"`
	ElasticsearchIndexedFieldLengthLimit int64    `json:"elasticsearch_indexed_field_length_limit"`
	ElasticsearchIndexedFileSizeLimitKB  int64    `json:"elasticsearch_indexed_file_size_limit_kb"`
	ElasticsearchIndexing                bool     `json:"elasticsearch_indexing"`
	ElasticsearchLimitIndexing           bool     `json:"elasticsearch_limit_indexing"`
	ElasticsearchMaxBulkConcurrency      int64    `json:"elasticsearch_max_bulk_concurrency"`
	ElasticsearchMaxBulkSizeMB           int64    `json:"elasticsearch_max_bulk_size_mb"`
	ElasticsearchNamespaceIDs            []int64  `json:"elasticsearch_namespace_ids"`
	ElasticsearchPassword                *string  `json:"elasticsearch_password" setting:"secret"`
	ElasticsearchProjectIDs              []int64  `json:"elasticsearch_project_ids"`
	ElasticsearchSearch                  bool     `json:"elasticsearch_search"`
	ElasticsearchURL                     []string `json:"elasticsearch_url"`
	ElasticsearchUsername                *string  `json:"elasticsearch_username"`

	EmailAdditionalText          *string `json:"email_additional_text"`
	EmailAuthorInBody            bool    `json:"email_author_in_body"`
	EmailRestrictions            string  `json:"email_restrictions"`
	EmailRestrictionsEnabled     bool    `json:"email_restrictions_enabled"`
	EnabledGitAccessProtocol     *string `json:"enabled_git_access_protocol" values:"ssh,http,nil," effect:"git over HTTP refused when only ssh is enabled"`
	EnforceNamespaceStorageLimit bool    `json:"enforce_namespace_storage_limit"`
	EnforceTerms                 bool    `json:"enforce_terms"`

	ExternalAuthClientCert                   *string `json:"external_auth_client_cert"`
	ExternalAuthClientKey                    *string `json:"external_auth_client_key" setting:"secret"`
	ExternalAuthClientKeyPass                *string `json:"external_auth_client_key_pass" setting:"secret"`
	ExternalAuthorizationServiceDefaultLabel *string `json:"external_authorization_service_default_label"`
	ExternalAuthorizationServiceEnabled      bool    `json:"external_authorization_service_enabled"`
	ExternalAuthorizationServiceTimeout      float64 `json:"external_authorization_service_timeout"`
	ExternalAuthorizationServiceURL          *string `json:"external_authorization_service_url"`
	ExternalPipelineValidationServiceTimeout *int64  `json:"external_pipeline_validation_service_timeout"`
	ExternalPipelineValidationServiceToken   *string `json:"external_pipeline_validation_service_token" setting:"secret"`
	ExternalPipelineValidationServiceURL     *string `json:"external_pipeline_validation_service_url"`

	FileTemplateProjectID     *int64  `json:"file_template_project_id"`
	FirstDayOfWeek            int64   `json:"first_day_of_week"`
	FlocEnabled               bool    `json:"floc_enabled"`
	GeoNodeAllowedIPs         string  `json:"geo_node_allowed_ips"`
	GeoStatusTimeout          int64   `json:"geo_status_timeout"`
	GitTwoFactorSessionExpiry int64   `json:"git_two_factor_session_expiry"`
	GravatarEnabled           bool    `json:"gravatar_enabled"`
	GroupDownloadExportLimit  int64   `json:"group_download_export_limit" effect:"downloads of one group's export a user may make a minute (0: unlimited)"`
	GroupExportLimit          int64   `json:"group_export_limit" effect:"group exports a user may start a minute (0: unlimited)"`
	GroupImportLimit          int64   `json:"group_import_limit" effect:"group imports a user may start a minute (0: unlimited)"`
	HelpPageText              *string `json:"help_page_text"`
	HomePageURL               *string `json:"home_page_url"`

	HousekeepingEnabled                 bool  `json:"housekeeping_enabled" effect:"repositories are housekept after every housekeeping_incremental_repack_period writes (pushes, merges, API and wiki commits)"`
	HousekeepingFullRepackPeriod        int64 `json:"housekeeping_full_repack_period" effect:"writes between full repacks with a bitmap"`
	HousekeepingGcPeriod                int64 `json:"housekeeping_gc_period" effect:"writes between gcs (full repack, prune of unreachable objects past --housekeeping-prune-grace)"`
	HousekeepingIncrementalRepackPeriod int64 `json:"housekeeping_incremental_repack_period" effect:"writes between incremental housekeepings (GitLab's housekeeping_optimize_repository_period)"`

	ImportSources                       []string         `json:"import_sources" values:"github,bitbucket,bitbucket_server,fogbugz,git,gitlab_project,gitea,manifest"`
	IssuesCreateLimit                   int64            `json:"issues_create_limit"`
	KeepLatestArtifact                  bool             `json:"keep_latest_artifact" effect:"the latest successful pipeline's artifacts are kept past their expiry"`
	KrokiEnabled                        bool             `json:"kroki_enabled"`
	KrokiURL                            *string          `json:"kroki_url"`
	LocalMarkdownVersion                int64            `json:"local_markdown_version"`
	MaxArtifactsSize                    int64            `json:"max_artifacts_size" effect:"largest job artifact upload (MiB)"`
	MaxAttachmentSize                   int64            `json:"max_attachment_size" effect:"largest wiki attachment (MiB)"`
	MaxDecompressedArchiveSize          int64            `json:"max_decompressed_archive_size" effect:"largest unpacked size of an imported group archive (MiB; 0: unlimited)"`
	MaxExportSize                       int64            `json:"max_export_size" effect:"largest group export archive (MiB; 0: unlimited)"`
	MaxImportSize                       int64            `json:"max_import_size" effect:"largest group import upload (MiB; 0: unlimited)"`
	MaxPagesSize                        int64            `json:"max_pages_size"`
	MaxPersonalAccessTokenLifetime      *int64           `json:"max_personal_access_token_lifetime"`
	MaxYAMLDepth                        int64            `json:"max_yaml_depth"`
	MaxYAMLSizeBytes                    int64            `json:"max_yaml_size_bytes"`
	MinimumPasswordLength               int64            `json:"minimum_password_length"`
	NotesCreateLimit                    int64            `json:"notes_create_limit"`
	NPMPackageRequestsForwarding        bool             `json:"npm_package_requests_forwarding"`
	OutboundLocalRequestsWhitelist      []string         `json:"outbound_local_requests_whitelist"`
	PasswordAuthenticationEnabledForWeb bool             `json:"password_authentication_enabled_for_web"`
	PerformanceBarAllowedGroupID        *int64           `json:"performance_bar_allowed_group_id"`
	PersonalAccessTokenPrefix           *string          `json:"personal_access_token_prefix" effect:"prefix of new personal access tokens"`
	PlantumlEnabled                     bool             `json:"plantuml_enabled"`
	PlantumlURL                         *string          `json:"plantuml_url"`
	PollingIntervalMultiplier           Decimal          `json:"polling_interval_multiplier"`
	ProjectExportEnabled                bool             `json:"project_export_enabled"`
	PyPIPackageRequestsForwarding       bool             `json:"pypi_package_requests_forwarding"`
	RateLimitingResponseText            *string          `json:"rate_limiting_response_text"`
	RawBlobRequestLimit                 int64            `json:"raw_blob_request_limit" effect:"raw file reads per project and path a minute (0: unlimited)"`
	RepositoryChecksEnabled             bool             `json:"repository_checks_enabled"`
	RepositorySizeLimit                 int64            `json:"repository_size_limit"`
	RepositoryStorages                  []string         `json:"repository_storages" effect:"the storages of --storages (kept in step with the configuration at start)"`
	RepositoryStoragesWeighted          map[string]int64 `json:"repository_storages_weighted" effect:"new projects, group wikis and snippets, and storage moves without a destination, go to a usable storage picked by these weights"`
	RequireAdminApprovalAfterUserSignup bool             `json:"require_admin_approval_after_user_signup"`
	RequireTwoFactorAuthentication      bool             `json:"require_two_factor_authentication"`
	RestrictedVisibilityLevels          []Visibility     `json:"restricted_visibility_levels" effect:"levels non-administrators cannot give projects, groups and snippets"`
	RSAKeyRestriction                   int64            `json:"rsa_key_restriction"`
	SendUserConfirmationEmail           bool             `json:"send_user_confirmation_email"`
	SessionExpireDelay                  int64            `json:"session_expire_delay"`
	SharedRunnersEnabled                bool             `json:"shared_runners_enabled" effect:"shared_runners_enabled of new projects"`
	SharedRunnersText                   *string          `json:"shared_runners_text"`
	SignInText                          *string          `json:"sign_in_text"`
	SignupEnabled                       bool             `json:"signup_enabled"`
	SnippetSizeLimit                    int64            `json:"snippet_size_limit" effect:"size of a snippet's files in all, through the API and git"`
	TerminalMaxSessionTime              int64            `json:"terminal_max_session_time"`
	Terms                               *string          `json:"terms"`

	ThrottleAuthenticatedAPIEnabled             bool  `json:"throttle_authenticated_api_enabled"`
	ThrottleAuthenticatedAPIPeriodInSeconds     int64 `json:"throttle_authenticated_api_period_in_seconds"`
	ThrottleAuthenticatedAPIRequestsPerPeriod   int64 `json:"throttle_authenticated_api_requests_per_period"`
	ThrottleAuthenticatedWebEnabled             bool  `json:"throttle_authenticated_web_enabled"`
	ThrottleAuthenticatedWebPeriodInSeconds     int64 `json:"throttle_authenticated_web_period_in_seconds"`
	ThrottleAuthenticatedWebRequestsPerPeriod   int64 `json:"throttle_authenticated_web_requests_per_period"`
	ThrottleProtectedPathsEnabled               bool  `json:"throttle_protected_paths_enabled"`
	ThrottleProtectedPathsPeriodInSeconds       int64 `json:"throttle_protected_paths_period_in_seconds"`
	ThrottleProtectedPathsRequestsPerPeriod     int64 `json:"throttle_protected_paths_requests_per_period"`
	ThrottleUnauthenticatedAPIEnabled           bool  `json:"throttle_unauthenticated_api_enabled"`
	ThrottleUnauthenticatedAPIPeriodInSeconds   int64 `json:"throttle_unauthenticated_api_period_in_seconds"`
	ThrottleUnauthenticatedAPIRequestsPerPeriod int64 `json:"throttle_unauthenticated_api_requests_per_period"`
	ThrottleUnauthenticatedWebEnabled           bool  `json:"throttle_unauthenticated_web_enabled"`
	ThrottleUnauthenticatedWebPeriodInSeconds   int64 `json:"throttle_unauthenticated_web_period_in_seconds"`
	ThrottleUnauthenticatedWebRequestsPerPeriod int64 `json:"throttle_unauthenticated_web_requests_per_period"`

	TimeTrackingLimitToHours       bool    `json:"time_tracking_limit_to_hours"`
	TwoFactorGracePeriod           int64   `json:"two_factor_grace_period"`
	UniqueIPsLimitEnabled          bool    `json:"unique_ips_limit_enabled"`
	UniqueIPsLimitPerUser          int64   `json:"unique_ips_limit_per_user"`
	UniqueIPsLimitTimeWindow       int64   `json:"unique_ips_limit_time_window"`
	UsagePingEnabled               bool    `json:"usage_ping_enabled"`
	UserDefaultExternal            bool    `json:"user_default_external" effect:"new users are external"`
	UserDefaultInternalRegex       *string `json:"user_default_internal_regex" effect:"new users whose e-mail matches stay internal"`
	UserOauthApplications          bool    `json:"user_oauth_applications"`
	UserShowAddSSHKeyMessage       bool    `json:"user_show_add_ssh_key_message"`
	VersionCheckEnabled            bool    `json:"version_check_enabled"`
	WebIDEClientsidePreviewEnabled bool    `json:"web_ide_clientside_preview_enabled"`
	WikiPageMaxContentBytes        int64   `json:"wiki_page_max_content_bytes" effect:"largest wiki page"`
}

// Decimal is a number GitLab's settings show as a decimal string ("1.0").
type Decimal float64

// DefaultApplicationSettings are GitLab's defaults.
func DefaultApplicationSettings() ApplicationSettings {
	return ApplicationSettings{
		AllowAccountDeletion:                        true,
		AllowGroupOwnersToManageLDAP:                true,
		AllowLocalRequestsFromSystemHooks:           true,
		AllowProjectCreationForGuestAndBelow:        true,
		AllowRunnerRegistrationToken:                true,
		AssetProxyAllowlist:                         []string{},
		AuthorizedKeysEnabled:                       true,
		AutoDevOpsEnabled:                           true,
		CanCreateGroup:                              true,
		CIMaxIncludes:                               150,
		CommitEmailHostname:                         "users.noreply.localhost",
		ContainerRegistryTokenExpireDelay:           5,
		DeactivateDormantUsersPeriod:                90,
		DefaultArtifactsExpireIn:                    "30 days",
		DefaultBranchProtection:                     2,
		DefaultGroupVisibility:                      Private,
		DefaultPreferredLanguage:                    "en",
		DefaultProjectCreation:                      2,
		DefaultProjectVisibility:                    Private,
		DefaultProjectsLimit:                        100000,
		DefaultSnippetVisibility:                    Private,
		DeletionAdjournedPeriod:                     7,
		DiffMaxFiles:                                1000,
		DiffMaxLines:                                50000,
		DiffMaxPatchBytes:                           204800,
		DisabledOauthSignInSources:                  []string{},
		DNSRebindingProtectionEnabled:               true,
		DomainDenylist:                              []string{},
		ElasticsearchAWSRegion:                      "us-east-1",
		ElasticsearchIndexedFileSizeLimitKB:         1024,
		ElasticsearchMaxBulkConcurrency:             10,
		ElasticsearchMaxBulkSizeMB:                  10,
		ElasticsearchNamespaceIDs:                   []int64{},
		ElasticsearchProjectIDs:                     []int64{},
		ElasticsearchURL:                            []string{"http://localhost:9200"},
		ExternalAuthorizationServiceTimeout:         0.5,
		GeoNodeAllowedIPs:                           "0.0.0.0/0, ::/0",
		GeoStatusTimeout:                            10,
		GitTwoFactorSessionExpiry:                   15,
		GravatarEnabled:                             true,
		GroupDownloadExportLimit:                    1,
		GroupExportLimit:                            6,
		GroupImportLimit:                            6,
		HousekeepingEnabled:                         true,
		HousekeepingFullRepackPeriod:                50,
		HousekeepingGcPeriod:                        200,
		HousekeepingIncrementalRepackPeriod:         10,
		ImportSources:                               []string{},
		IssuesCreateLimit:                           300,
		KeepLatestArtifact:                          true,
		MaxArtifactsSize:                            100,
		MaxAttachmentSize:                           10,
		MaxDecompressedArchiveSize:                  25600,
		MaxPagesSize:                                100,
		MaxYAMLDepth:                                100,
		MaxYAMLSizeBytes:                            1 << 20,
		MinimumPasswordLength:                       8,
		NotesCreateLimit:                            300,
		NPMPackageRequestsForwarding:                true,
		OutboundLocalRequestsWhitelist:              []string{},
		PasswordAuthenticationEnabledForWeb:         true,
		PersonalAccessTokenPrefix:                   Ptr("glpat-"),
		PollingIntervalMultiplier:                   1,
		ProjectExportEnabled:                        true,
		PyPIPackageRequestsForwarding:               true,
		RawBlobRequestLimit:                         300,
		RepositoryChecksEnabled:                     true,
		RepositoryStorages:                          []string{"default"},
		RepositoryStoragesWeighted:                  map[string]int64{"default": 100},
		RequireAdminApprovalAfterUserSignup:         true,
		RestrictedVisibilityLevels:                  []Visibility{},
		SessionExpireDelay:                          10080,
		SharedRunnersEnabled:                        true,
		SignupEnabled:                               true,
		SnippetSizeLimit:                            50 << 20,
		ThrottleAuthenticatedAPIPeriodInSeconds:     3600,
		ThrottleAuthenticatedAPIRequestsPerPeriod:   7200,
		ThrottleAuthenticatedWebPeriodInSeconds:     3600,
		ThrottleAuthenticatedWebRequestsPerPeriod:   7200,
		ThrottleProtectedPathsPeriodInSeconds:       60,
		ThrottleProtectedPathsRequestsPerPeriod:     10,
		ThrottleUnauthenticatedAPIPeriodInSeconds:   3600,
		ThrottleUnauthenticatedAPIRequestsPerPeriod: 3600,
		ThrottleUnauthenticatedWebPeriodInSeconds:   3600,
		ThrottleUnauthenticatedWebRequestsPerPeriod: 3600,
		TwoFactorGracePeriod:                        48,
		UniqueIPsLimitPerUser:                       10,
		UniqueIPsLimitTimeWindow:                    3600,
		UsagePingEnabled:                            true,
		UserOauthApplications:                       true,
		UserShowAddSSHKeyMessage:                    true,
		VersionCheckEnabled:                         true,
		WikiPageMaxContentBytes:                     50 << 20,
	}
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// NewRepositoryBranch is the initial branch of a new repository or wiki:
// default_branch_name when set, else fallback.
func (s ApplicationSettings) NewRepositoryBranch(fallback string) string {
	if p := s.DefaultBranchName; p != nil && strings.TrimSpace(*p) != "" {
		return strings.TrimSpace(*p)
	}
	return fallback
}

// ProjectDeletionDelay is how long a deleted project stays restorable (0:
// removed at once).
func (s ApplicationSettings) ProjectDeletionDelay() time.Duration {
	if !s.DelayedProjectDeletion {
		return 0
	}
	return time.Duration(s.DeletionAdjournedPeriod) * 24 * time.Hour
}

// GroupDeletionDelay is how long a deleted group stays restorable.
func (s ApplicationSettings) GroupDeletionDelay() time.Duration {
	if !s.DelayedGroupDeletion {
		return 0
	}
	return time.Duration(s.DeletionAdjournedPeriod) * 24 * time.Hour
}

// RestrictedFor reports whether level v is refused to a caller that is no
// administrator, with GitLab's message (keyed visibility_level).
func (s ApplicationSettings) RestrictedFor(admin bool, v Visibility) (string, bool) {
	if admin || !slices.Contains(s.RestrictedVisibilityLevels, v) {
		return "", false
	}
	return string(v) + " has been restricted by your GitLab administrator", true
}
