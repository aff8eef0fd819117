package model

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validate checks s as GitLab's ApplicationSetting model does, with its
// messages, keyed by attribute; more adds the errors of checks made
// outside the model (a branch name git accepts).
func (s ApplicationSettings) Validate(more FieldErrors) error {
	f := more
	between := func(name string, v, lo, hi int64) {
		if v < lo {
			f.Add(name, fmt.Sprintf("must be greater than or equal to %d", lo))
		} else if v > hi {
			f.Add(name, fmt.Sprintf("must be less than or equal to %d", hi))
		}
	}
	atLeast := func(name string, v, lo int64) { between(name, v, lo, 1<<31-1) }
	positive := func(name string, v int64) {
		if v <= 0 {
			f.Add(name, "must be greater than 0")
		} else if v > 1<<31-1 {
			f.Add(name, "must be less than or equal to 2147483647")
		}
	}
	blank := func(p *string) bool { return p == nil || strings.TrimSpace(*p) == "" }
	requires := func(on bool, name string, p *string) {
		if on && blank(p) {
			f.Add(name, "can't be blank")
		}
	}
	validURL := func(name string, p *string) {
		if blank(p) {
			return
		}
		u, err := url.Parse(strings.TrimSpace(*p))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			f.Add(name, "must be a valid URL")
		}
	}

	// Visibility.
	for _, l := range s.RestrictedVisibilityLevels {
		if !ValidVisibility(string(l)) {
			f.Add("restricted_visibility_levels", "'"+string(l)+"' is not a valid visibility level")
		}
	}
	for name, v := range map[string]Visibility{"default_project_visibility": s.DefaultProjectVisibility,
		"default_group_visibility": s.DefaultGroupVisibility, "default_snippet_visibility": s.DefaultSnippetVisibility} {
		if slices.Contains(s.RestrictedVisibilityLevels, v) {
			f.Add(name, "cannot be set to a restricted visibility level")
		}
	}

	// Limits and sizes.
	between("default_projects_limit", s.DefaultProjectsLimit, 0, 1<<31-1)
	positive("max_attachment_size", s.MaxAttachmentSize)
	positive("max_artifacts_size", s.MaxArtifactsSize)
	positive("max_pages_size", s.MaxPagesSize)
	atLeast("max_import_size", s.MaxImportSize, 0)
	atLeast("max_export_size", s.MaxExportSize, 0)
	atLeast("max_decompressed_archive_size", s.MaxDecompressedArchiveSize, 0)
	atLeast("group_export_limit", s.GroupExportLimit, 0)
	atLeast("group_download_export_limit", s.GroupDownloadExportLimit, 0)
	atLeast("group_import_limit", s.GroupImportLimit, 0)
	positive("session_expire_delay", s.SessionExpireDelay)
	positive("snippet_size_limit", s.SnippetSizeLimit)
	atLeast("wiki_page_max_content_bytes", s.WikiPageMaxContentBytes, 1024)
	atLeast("raw_blob_request_limit", s.RawBlobRequestLimit, 0)
	atLeast("issues_create_limit", s.IssuesCreateLimit, 0)
	atLeast("notes_create_limit", s.NotesCreateLimit, 0)
	atLeast("terminal_max_session_time", s.TerminalMaxSessionTime, 0)
	atLeast("container_registry_token_expire_delay", s.ContainerRegistryTokenExpireDelay, 1)
	atLeast("repository_size_limit", s.RepositorySizeLimit, 0)
	atLeast("ci_max_includes", s.CIMaxIncludes, 0)
	positive("max_yaml_depth", s.MaxYAMLDepth)
	positive("max_yaml_size_bytes", s.MaxYAMLSizeBytes)
	between("minimum_password_length", s.MinimumPasswordLength, 8, 128)
	atLeast("two_factor_grace_period", s.TwoFactorGracePeriod, 0)
	positive("git_two_factor_session_expiry", s.GitTwoFactorSessionExpiry)
	atLeast("geo_status_timeout", s.GeoStatusTimeout, 1)
	atLeast("elasticsearch_indexed_field_length_limit", s.ElasticsearchIndexedFieldLengthLimit, 0)
	atLeast("elasticsearch_indexed_file_size_limit_kb", s.ElasticsearchIndexedFileSizeLimitKB, 1)
	atLeast("elasticsearch_max_bulk_concurrency", s.ElasticsearchMaxBulkConcurrency, 1)
	atLeast("elasticsearch_max_bulk_size_mb", s.ElasticsearchMaxBulkSizeMB, 1)
	atLeast("local_markdown_version", s.LocalMarkdownVersion, 0)
	between("diff_max_patch_bytes", s.DiffMaxPatchBytes, 200<<10, 500<<10)
	between("diff_max_files", s.DiffMaxFiles, 1000, 3000)
	between("diff_max_lines", s.DiffMaxLines, 50000, 100000)
	between("deletion_adjourned_period", s.DeletionAdjournedPeriod, 0, 90)
	for _, t := range []struct {
		name string
		v    int64
	}{
		{"housekeeping_incremental_repack_period", s.HousekeepingIncrementalRepackPeriod},
		{"housekeeping_full_repack_period", s.HousekeepingFullRepackPeriod},
		{"housekeeping_gc_period", s.HousekeepingGcPeriod},
		{"throttle_authenticated_api_period_in_seconds", s.ThrottleAuthenticatedAPIPeriodInSeconds},
		{"throttle_authenticated_api_requests_per_period", s.ThrottleAuthenticatedAPIRequestsPerPeriod},
		{"throttle_authenticated_web_period_in_seconds", s.ThrottleAuthenticatedWebPeriodInSeconds},
		{"throttle_authenticated_web_requests_per_period", s.ThrottleAuthenticatedWebRequestsPerPeriod},
		{"throttle_protected_paths_period_in_seconds", s.ThrottleProtectedPathsPeriodInSeconds},
		{"throttle_protected_paths_requests_per_period", s.ThrottleProtectedPathsRequestsPerPeriod},
		{"throttle_unauthenticated_api_period_in_seconds", s.ThrottleUnauthenticatedAPIPeriodInSeconds},
		{"throttle_unauthenticated_api_requests_per_period", s.ThrottleUnauthenticatedAPIRequestsPerPeriod},
		{"throttle_unauthenticated_web_period_in_seconds", s.ThrottleUnauthenticatedWebPeriodInSeconds},
		{"throttle_unauthenticated_web_requests_per_period", s.ThrottleUnauthenticatedWebRequestsPerPeriod},
		{"unique_ips_limit_per_user", s.UniqueIPsLimitPerUser},
		{"unique_ips_limit_time_window", s.UniqueIPsLimitTimeWindow},
	} {
		positive(t.name, t.v)
	}
	if s.HousekeepingFullRepackPeriod < s.HousekeepingIncrementalRepackPeriod && s.HousekeepingFullRepackPeriod > 0 {
		f.Add("housekeeping_full_repack_period", fmt.Sprintf("must be greater than or equal to %d", s.HousekeepingIncrementalRepackPeriod))
	}
	if s.HousekeepingGcPeriod < s.HousekeepingFullRepackPeriod && s.HousekeepingGcPeriod > 0 {
		f.Add("housekeeping_gc_period", fmt.Sprintf("must be greater than or equal to %d", s.HousekeepingFullRepackPeriod))
	}
	if s.PollingIntervalMultiplier < 0 {
		f.Add("polling_interval_multiplier", "must be greater than or equal to 0")
	}
	if p := s.MaxPersonalAccessTokenLifetime; p != nil && (*p < 1 || *p > 365) {
		f.Add("max_personal_access_token_lifetime", "must be an integer between 1 and 365")
	}
	if p := s.ExternalPipelineValidationServiceTimeout; p != nil && *p <= 0 {
		f.Add("external_pipeline_validation_service_timeout", "must be greater than 0")
	}
	if !slices.Contains([]int64{0, 1, 6}, s.FirstDayOfWeek) {
		f.Add("first_day_of_week", "is not included in the list")
	}
	if s.DeactivateDormantUsersPeriod < 90 {
		f.Add("deactivate_dormant_users_period", fmt.Sprintf("'%d' days of inactivity must be greater than or equal to 90", s.DeactivateDormantUsersPeriod))
	}

	// SSH key restrictions: forbidden (-1), allowed (0) or a size.
	for _, k := range []struct {
		name  string
		v     int64
		sizes []int64
	}{
		{"rsa_key_restriction", s.RSAKeyRestriction, []int64{1024, 2048, 3072, 4096}},
		{"dsa_key_restriction", s.DSAKeyRestriction, []int64{1024, 2048, 3072}},
		{"ecdsa_key_restriction", s.ECDSAKeyRestriction, []int64{256, 384, 521}},
		{"ed25519_key_restriction", s.Ed25519KeyRestriction, []int64{256}},
		{"ecdsa_sk_key_restriction", s.ECDSASKKeyRestriction, []int64{256}},
		{"ed25519_sk_key_restriction", s.Ed25519SKKeyRestriction, []int64{256}},
	} {
		if k.v != -1 && k.v != 0 && !slices.Contains(k.sizes, k.v) {
			words := []string{"forbidden", "allowed"}
			for _, n := range k.sizes {
				words = append(words, strconv.FormatInt(n, 10))
			}
			f.Add(k.name, "must be "+exclusiveSentence(words))
		}
	}

	// CI.
	if strings.TrimSpace(s.DefaultArtifactsExpireIn) == "" {
		f.Add("default_artifacts_expire_in", "can't be blank")
	} else if !s.validArtifactsExpiry() {
		f.Add("default_artifacts_expire_in", "is not a correct duration")
	}
	if p := s.ArchiveBuildsInHumanReadable; !blank(p) {
		if d, ok := ParseHumanDuration(*p); !ok {
			f.Add("archive_builds_in_human_readable", "is invalid")
		} else if d < 86400 {
			f.Add("archive_builds_in_seconds", "must be at least 1 day")
		}
	}
	if p := s.DefaultCIConfigPath; !blank(p) && (strings.Contains(*p, "..") || len(*p) > 255) {
		f.Add("default_ci_config_path", "cannot include directory traversal")
	}

	// Repositories.
	if p := s.PersonalAccessTokenPrefix; !blank(p) {
		if len(*p) > 20 {
			f.Add("personal_access_token_prefix", "is too long (maximum is 20 characters)")
		}
		if !tokenPrefixPattern.MatchString(*p) {
			f.Add("personal_access_token_prefix", "can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'")
		}
	}
	if len(s.RepositoryStoragesWeighted) > 0 {
		any := false
		for name, w := range s.RepositoryStoragesWeighted {
			if !slices.Contains(s.RepositoryStorages, name) {
				f.Add("repository_storages_weighted", "can't include: "+name)
			}
			if w < 0 || w > 100 {
				f.Add("repository_storages_weighted_"+name, "value must be between 0 and 100")
			}
			any = any || w > 0
		}
		if !any {
			f.Add("repository_storages_weighted", "must have at least one non-zero weight")
		}
	}

	// Users.
	if s.DomainDenylistEnabled && len(s.DomainDenylist) == 0 {
		f.Add("domain_denylist", "Domain denylist cannot be empty if denylist is enabled.")
	}
	if s.EmailRestrictionsEnabled && strings.TrimSpace(s.EmailRestrictions) != "" {
		if _, err := regexp.Compile(s.EmailRestrictions); err != nil {
			f.Add("email_restrictions", "not valid RE2 syntax: "+err.Error())
		}
	}
	if p := s.UserDefaultInternalRegex; !blank(p) {
		if _, err := regexp.Compile(*p); err != nil {
			f.Add("user_default_internal_regex", "not valid RE2 syntax: "+err.Error())
		}
	}
	if s.CommitEmailHostname == "" {
		f.Add("commit_email_hostname", "can't be blank")
	}

	// The "requires" pairs.
	requires(s.AkismetEnabled, "akismet_api_key", s.AkismetAPIKey)
	requires(s.AssetProxyEnabled, "asset_proxy_url", s.AssetProxyURL)
	requires(s.AssetProxyEnabled, "asset_proxy_secret_key", s.AssetProxySecretKey)
	validURL("asset_proxy_url", s.AssetProxyURL)
	requires(s.EnforceTerms, "terms", s.Terms)
	requires(s.PlantumlEnabled, "plantuml_url", s.PlantumlURL)
	validURL("plantuml_url", s.PlantumlURL)
	requires(s.KrokiEnabled, "kroki_url", s.KrokiURL)
	validURL("kroki_url", s.KrokiURL)
	validURL("home_page_url", s.HomePageURL)
	validURL("after_sign_out_path", s.AfterSignOutPath)
	validURL("external_pipeline_validation_service_url", s.ExternalPipelineValidationServiceURL)
	if s.ExternalAuthorizationServiceEnabled {
		requires(true, "external_authorization_service_url", s.ExternalAuthorizationServiceURL)
		requires(true, "external_authorization_service_default_label", s.ExternalAuthorizationServiceDefaultLabel)
		validURL("external_authorization_service_url", s.ExternalAuthorizationServiceURL)
	}
	if t := s.ExternalAuthorizationServiceTimeout; t < 0.001 {
		f.Add("external_authorization_service_timeout", "must be greater than or equal to 0.001")
	} else if t > 10 {
		f.Add("external_authorization_service_timeout", "must be less than or equal to 10")
	}
	if !blank(s.ExternalAuthClientCert) {
		requires(true, "external_auth_client_key", s.ExternalAuthClientKey)
		if !blank(s.ExternalAuthClientKey) {
			checkClientCertificate(&f, *s.ExternalAuthClientCert, *s.ExternalAuthClientKey)
		}
	}
	if s.EKSIntegrationEnabled {
		if blank(s.EKSAccountID) || !awsAccountID.MatchString(*s.EKSAccountID) {
			f.Add("eks_account_id", "must be a 12-digit number")
		}
		if !blank(s.EKSAccessKeyID) {
			if n := len(*s.EKSAccessKeyID); n < 16 {
				f.Add("eks_access_key_id", "is too short (minimum is 16 characters)")
			} else if n > 128 {
				f.Add("eks_access_key_id", "is too long (maximum is 128 characters)")
			}
			requires(true, "eks_secret_access_key", s.EKSSecretAccessKey)
		}
	}
	if s.ElasticsearchAWS {
		requires(true, "elasticsearch_aws_region", &s.ElasticsearchAWSRegion)
	}
	for _, u := range s.ElasticsearchURL {
		if p, err := url.Parse(u); err != nil || p.Host == "" {
			f.Add("elasticsearch_url", "only supports valid HTTP(S) URLs")
			break
		}
	}
	return f.Err()
}

var (
	tokenPrefixPattern = regexp.MustCompile(`^[a-zA-Z0-9_+=/@:.-]+$`)
	awsAccountID       = regexp.MustCompile(`^\d{12}$`)
)

// exclusiveSentence joins words as "a, b, or c" ("a or b" for two).
func exclusiveSentence(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	case 2:
		return words[0] + " or " + words[1]
	}
	return strings.Join(words[:len(words)-1], ", ") + ", or " + words[len(words)-1]
}

// checkClientCertificate checks an external authorization client
// certificate and its key, as GitLab's X.509 credentials validator does.
func checkClientCertificate(f *FieldErrors, cert, key string) {
	block, _ := pem.Decode([]byte(cert))
	if block == nil {
		f.Add("external_auth_client_cert", "must be a valid PEM certificate")
		return
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		f.Add("external_auth_client_cert", "must be a valid PEM certificate")
		return
	}
	if k, _ := pem.Decode([]byte(key)); k == nil {
		f.Add("external_auth_client_key", "must be a valid PEM private key")
		return
	}
	if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
		f.Add("external_auth_client_key", "private key does not match certificate")
	}
}

// validArtifactsExpiry reports a default_artifacts_expire_in GitLab
// accepts: a duration, "never" or "0".
func (s ApplicationSettings) validArtifactsExpiry() bool {
	v := strings.TrimSpace(s.DefaultArtifactsExpireIn)
	if strings.EqualFold(v, "never") || v == "0" {
		return true
	}
	_, ok := ParseHumanDuration(v)
	return ok
}

// humanUnits are the units of a human duration, in seconds (a month is 30
// days and a year 365.25, as ChronicDuration counts them).
var humanUnits = []struct {
	names   []string
	seconds int64
}{
	{[]string{"y", "yr", "yrs", "year", "years"}, 31557600},
	{[]string{"mo", "mos", "mon", "mons", "month", "months"}, 2592000},
	{[]string{"w", "wk", "wks", "week", "weeks"}, 604800},
	{[]string{"d", "day", "days"}, 86400},
	{[]string{"h", "hr", "hrs", "hour", "hours"}, 3600},
	{[]string{"m", "min", "mins", "minute", "minutes"}, 60},
	{[]string{"s", "sec", "secs", "second", "seconds"}, 1},
}

// ParseHumanDuration reads durations such as "1 day", "3 months", "2h
// 30m", "1 year and 2 days" or a bare number of seconds, in seconds.
func ParseHumanDuration(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" || len(v) > 200 {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		return n, true
	}
	v = strings.NewReplacer(",", " ", " and ", " ").Replace(v)
	var total int64
	rest := strings.Fields(v)
	seen := false
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		j := 0
		for j < len(tok) && (tok[j] >= '0' && tok[j] <= '9' || tok[j] == '.') {
			j++
		}
		if j == 0 {
			return 0, false
		}
		n, err := strconv.ParseFloat(tok[:j], 64)
		if err != nil || n > 1e6 {
			return 0, false
		}
		unit := tok[j:]
		if unit == "" {
			if i+1 >= len(rest) {
				return 0, false
			}
			i++
			unit = rest[i]
		}
		found := false
		for _, u := range humanUnits {
			if slices.Contains(u.names, unit) {
				total += int64(n * float64(u.seconds))
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
		seen = true
	}
	return total, seen
}

// HumanDuration writes seconds as ChronicDuration's long format does:
// "1 day", "3 months 2 days".
func HumanDuration(sec int64) string {
	if sec <= 0 {
		return "0 seconds"
	}
	var parts []string
	for _, u := range humanUnits {
		if n := sec / u.seconds; n > 0 {
			name := u.names[len(u.names)-1]
			if n == 1 {
				name = u.names[len(u.names)-2]
			}
			parts = append(parts, strconv.FormatInt(n, 10)+" "+name)
			sec -= n * u.seconds
		}
	}
	return strings.Join(parts, " ")
}
