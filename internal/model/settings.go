package model

import (
	"encoding/json"
	"fmt"
)

// SettingKind is the type of a settings parameter.
type SettingKind int

// Setting kinds.
const (
	SettingBool SettingKind = iota
	SettingInt
	SettingString
	SettingEnum
	SettingNullString // a string that may be set to null
)

// SettingParam describes one plain project setting an API caller may set:
// its parameter name (also its key in ProjectSettings' JSON), its type,
// and its allowed values for enums.
type SettingParam struct {
	Name   string
	Kind   SettingKind
	Values []string
	// AdminOnly settings are ignored for non-administrators.
	AdminOnly bool
}

// ProjectSettingParams are the settings of POST and PUT /projects that live
// in ProjectSettings.
var ProjectSettingParams = []SettingParam{
	{Name: "repository_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "forking_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "wiki_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "builds_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "snippets_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "pages_access_level", Kind: SettingEnum, Values: PagesLevels},
	{Name: "analytics_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "operations_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "requirements_access_level", Kind: SettingEnum, Values: PagesLevels},
	{Name: "container_registry_access_level", Kind: SettingEnum, Values: FeatureLevels},
	{Name: "shared_runners_enabled", Kind: SettingBool},
	{Name: "ci_default_git_depth", Kind: SettingInt},
	{Name: "ci_forward_deployment_enabled", Kind: SettingBool},
	{Name: "ci_separated_caches", Kind: SettingBool},
	{Name: "public_jobs", Kind: SettingBool},
	{Name: "build_timeout", Kind: SettingInt},
	{Name: "auto_cancel_pending_pipelines", Kind: SettingEnum, Values: []string{"enabled", "disabled"}},
	{Name: "build_coverage_regex", Kind: SettingNullString},
	{Name: "ci_config_path", Kind: SettingNullString},
	{Name: "build_git_strategy", Kind: SettingEnum, Values: []string{"fetch", "clone"}},
	{Name: "only_allow_merge_if_pipeline_succeeds", Kind: SettingBool},
	{Name: "allow_merge_on_skipped_pipeline", Kind: SettingBool},
	{Name: "restrict_user_defined_variables", Kind: SettingBool},
	{Name: "only_allow_merge_if_all_discussions_are_resolved", Kind: SettingBool},
	{Name: "remove_source_branch_after_merge", Kind: SettingBool},
	{Name: "request_access_enabled", Kind: SettingBool},
	{Name: "merge_method", Kind: SettingEnum, Values: []string{"merge", "rebase_merge", "ff"}},
	{Name: "squash_option", Kind: SettingEnum, Values: []string{"never", "always", "default_on", "default_off"}},
	{Name: "autoclose_referenced_issues", Kind: SettingBool},
	{Name: "suggestion_commit_message", Kind: SettingNullString},
	{Name: "merge_commit_template", Kind: SettingNullString},
	{Name: "resolve_outdated_diff_discussions", Kind: SettingBool},
	{Name: "printing_merge_request_link_enabled", Kind: SettingBool},
	{Name: "auto_devops_enabled", Kind: SettingBool},
	{Name: "auto_devops_deploy_strategy", Kind: SettingEnum, Values: []string{"continuous", "manual", "timed_incremental"}},
	{Name: "keep_latest_artifact", Kind: SettingBool},
	{Name: "emails_disabled", Kind: SettingBool},
	{Name: "lfs_enabled", Kind: SettingBool},
	{Name: "approvals_before_merge", Kind: SettingInt},
	{Name: "mirror", Kind: SettingBool, AdminOnly: true},
	{Name: "mirror_user_id", Kind: SettingInt, AdminOnly: true},
	{Name: "mirror_trigger_builds", Kind: SettingBool, AdminOnly: true},
	{Name: "only_mirror_protected_branches", Kind: SettingBool, AdminOnly: true},
	{Name: "mirror_overwrites_diverged_branches", Kind: SettingBool, AdminOnly: true},
	{Name: "external_authorization_classification_label", Kind: SettingString},
	{Name: "packages_enabled", Kind: SettingBool},
	{Name: "service_desk_enabled", Kind: SettingBool},
	{Name: "show_default_award_emojis", Kind: SettingBool},
	{Name: "issues_template", Kind: SettingNullString},
	{Name: "merge_requests_template", Kind: SettingNullString},
	{Name: "import_url", Kind: SettingNullString},
}

// DeprecatedFeatureFlags map the old *_enabled booleans to access levels.
var DeprecatedFeatureFlags = map[string]string{
	"issues_enabled":             "issues_access_level",
	"merge_requests_enabled":     "merge_requests_access_level",
	"wiki_enabled":               "wiki_access_level",
	"jobs_enabled":               "builds_access_level",
	"snippets_enabled":           "snippets_access_level",
	"container_registry_enabled": "container_registry_access_level",
}

// ApplySettings overlays values (keyed by setting name, already typed:
// bool, int, string or nil) onto s.
func (s *ProjectSettings) ApplySettings(values map[string]any) error {
	if len(values) == 0 {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range values {
		m[k] = v
	}
	b, err = json.Marshal(m)
	if err != nil {
		return err
	}
	var next ProjectSettings
	if err := json.Unmarshal(b, &next); err != nil {
		return fmt.Errorf("apply settings: %w", err)
	}
	*s = next
	return nil
}
