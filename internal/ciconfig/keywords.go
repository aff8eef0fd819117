package ciconfig

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNestedCommands is how deep script: arrays may nest (GitLab's
// Commands::MAX_NESTING_LEVEL), and stages: too.
const maxNestedCommands = 10

// allowedKeys is GitLab's "contains unknown keys" check.
func allowedKeys(loc string, m *mapping, allowed ...string) error {
	var unknown []string
	for _, k := range m.keys {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return entryError(loc, "config contains unknown keys: "+strings.Join(unknown, ", "))
	}
	return nil
}

// exclusiveKeys is GitLab's "these keys cannot be used together" check
// (the keys named in the order written).
func exclusiveKeys(loc string, m *mapping, keys ...string) error {
	var present []string
	for _, k := range m.keys {
		if slices.Contains(keys, k) {
			present = append(present, k)
		}
	}
	if len(present) > 1 {
		return entryError(loc, "these keys cannot be used together: "+strings.Join(present, ", "))
	}
	return nil
}

// missingKeys is GitLab's "missing required keys" check.
func missingKeys(loc string, m *mapping, required ...string) error {
	var missing []string
	for _, k := range required {
		if !m.has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return entryError(loc, "config missing required keys: "+strings.Join(missing, ", "))
	}
	return nil
}

// stringList is a list of strings, or false.
func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

// nestedStrings flattens a list of strings nested at most maxLevel deep.
func nestedStrings(v any, level, maxLevel int, out []string) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
			continue
		}
		if level >= maxLevel {
			return nil, false
		}
		if out, ok = nestedStrings(e, level+1, maxLevel, out); !ok {
			return nil, false
		}
	}
	return out, true
}

// commands is script:, before_script: or after_script:: a string or
// arrays of strings nested up to 10 levels, flattened.
func commands(loc string, v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	l, _ := v.([]any)
	out, ok := nestedStrings(v, 1, maxNestedCommands, make([]string, 0, len(l)))
	if !ok {
		return nil, entryError(loc, "config should be a string or a nested array of strings up to 10 levels deep")
	}
	return out, nil
}

func boolean(loc, attr string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, entryError(loc, attr+" should be a boolean value")
	}
	return b, nil
}

func stringValue(loc, attr string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", entryError(loc, attr+" should be a string")
	}
	return s, nil
}

// oneOf is the inclusion check of a string keyword with GitLab's
// "should be a string" / "should be one of" messages.
func oneOf(loc, attr string, v any, allowed ...string) (string, error) {
	s, err := stringValue(loc, attr, v)
	if err == nil && !slices.Contains(allowed, s) {
		err = entryError(loc, attr+" should be one of: "+strings.Join(allowed, ", "))
	}
	return s, err
}

var reInteger10 = regexp.MustCompile(`^[+-]?\d+$`)

// integerIn is ActiveModel's numericality check (only_integer,
// greater_than_or_equal_to lo, less_than_or_equal_to hi).
func integerIn(loc, attr string, v any, lo, hi int) (int, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case float64: // Ruby writes 2.0, which is not an integer
		return 0, entryError(loc, attr+" must be an integer")
	case string:
		if !reInteger10.MatchString(strings.TrimSpace(v)) {
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return 0, entryError(loc, attr+" must be an integer")
			}
			return 0, entryError(loc, attr+" is not a number")
		}
		n, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	default:
		return 0, entryError(loc, attr+" is not a number")
	}
	switch {
	case n < int64(lo):
		return 0, entryError(loc, attr+" must be greater than or equal to "+strconv.Itoa(lo))
	case n > int64(hi):
		return 0, entryError(loc, attr+" must be less than or equal to "+strconv.Itoa(hi))
	}
	return int(n), nil
}

// integers is an integer or a list of integers (exit_codes).
func integers(loc, attr string, v any) ([]int, error) {
	if n, ok := v.(int64); ok {
		return []int{int(n)}, nil
	}
	l, ok := v.([]any)
	if ok {
		out := make([]int, len(l))
		for i, e := range l {
			n, isInt := e.(int64)
			if !isInt {
				ok = false
				break
			}
			out[i] = int(n)
		}
		if ok {
			return out, nil
		}
	}
	return nil, entryError(loc, attr+" should be an array of integers or an integer")
}

// stringsOrString is GitLab's array_of_strings_or_string.
func stringsOrString(loc, attr string, v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	if l, ok := stringList(v); ok {
		return l, nil
	}
	return nil, entryError(loc, attr+" should be an array of strings or a string")
}

func tags(loc string, v any) ([]string, error) {
	l, ok := stringList(v)
	if !ok {
		return nil, entryError(loc, "config should be an array of strings")
	}
	if len(l) >= 50 {
		return nil, entryError(loc, "config must be less than the limit of 50 tags")
	}
	return l, nil
}

// coverage is a /regular expression/ (RE2); the value is the pattern
// between the slashes, its flags written (?i) in front.
func coverage(loc string, v any) (string, error) {
	s, _ := v.(string)
	m := reRubySyntax.FindStringSubmatch(s)
	if m == nil {
		return "", entryError(loc, "config must be a regular expression with re2 syntax")
	}
	if _, err := rubyRegexp(s); err != nil {
		return "", entryError(loc, "config must be a regular expression with re2 syntax")
	}
	if m[2] != "" {
		return "(?" + m[2] + ")" + m[1], nil
	}
	return m[1], nil
}

// retryReasons are GitLab's failure reasons, which retry:when names
// (with always).
var retryReasons = strings.Fields(`always unknown_failure script_failure api_failure
	stuck_or_timeout_failure runner_system_failure missing_dependency_failure runner_unsupported
	stale_schedule job_execution_timeout archived_failure unmet_prerequisites scheduler_failure
	data_integrity_failure forward_deployment_failure user_blocked project_deleted
	ci_quota_exceeded pipeline_loop_detected no_matching_runner trace_size_exceeded
	builds_disabled environment_creation_failure deployment_rejected
	failed_outdated_deployment_job job_execution_server_timeout
	stuck_pending_with_matching_runners stuck_pending_no_matching_runners no_updates_running
	no_updates_canceling server_timeout_running server_timeout_canceling
	runner_configuration_error runner_external_dependency_failure runner_interrupted
	protected_environment_failure insufficient_bridge_permissions
	downstream_bridge_project_not_found invalid_bridge_trigger upstream_bridge_project_not_found
	insufficient_upstream_permissions bridge_pipeline_is_child_pipeline
	downstream_pipeline_creation_failed secrets_provider_not_found
	reached_max_descendant_pipelines_depth ip_restriction_failure
	reached_max_pipeline_hierarchy_size reached_downstream_pipeline_trigger_rate_limit
	duo_workflow_not_allowed job_router_failure job_token_expired id_token_burned_project_path
	downstream_project_trigger_resolved_to_empty`)

// retry is retry: N (0..2) or {max, when, exit_codes}. GitLab writes
// its messages at the location "retry", whatever the job.
func retry(v any) (Retry, error) {
	switch v := v.(type) {
	case int64:
		n, err := integerIn("retry", "config", v, 0, 2)
		return Retry{Max: n}, err
	case *mapping:
		var r Retry
		if err := allowedKeys("retry", v, "max", "when", "exit_codes"); err != nil {
			return r, err
		}
		if max, _ := v.get("max"); max != nil {
			n, err := integerIn("retry", "max", max, 0, 2)
			if err != nil {
				return r, err
			}
			r.Max = n
		}
		if when, _ := v.get("when"); when != nil {
			reasons, err := stringsOrString("retry", "when", when)
			if err != nil {
				return r, err
			}
			var unknown []string
			for _, w := range reasons {
				if !slices.Contains(retryReasons, w) {
					unknown = append(unknown, w)
				}
			}
			switch {
			case len(unknown) > 0 && isString(when):
				return r, entryError("retry", "when is not included in the list")
			case len(unknown) > 0:
				return r, entryError("retry", "when contains unknown values: "+strings.Join(unknown, ", "))
			}
			r.When = reasons
		}
		if codes, _ := v.get("exit_codes"); codes != nil {
			c, err := integers("retry", "exit codes", codes)
			if err != nil {
				return r, err
			}
			r.ExitCodes = c
		}
		return r, nil
	}
	return Retry{}, configError("retry config has to be either an integer or a hash")
}

func isString(v any) bool { _, ok := v.(string); return ok }

// nameLength is a name's length as Ruby counts it (characters).
func nameLength(s string) int { return utf8.RuneCountInString(s) }
