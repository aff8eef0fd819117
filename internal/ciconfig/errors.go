package ciconfig

import (
	"fmt"
	"strings"
)

// Reasons of an Error: the pipeline's failure_reason.
const (
	ReasonConfig   = "config_error"
	ReasonWorkflow = "filtered_by_workflow_rules"
	ReasonRules    = "filtered_by_rules"
)

// Error is a configuration or seeding failure. Message is GitLab's text
// (a pipeline's yaml_errors, an API's {"message":{"base":[…]}}); Reason
// is one of ReasonConfig, ReasonWorkflow and ReasonRules.
type Error struct {
	Message string
	Reason  string
}

func (e *Error) Error() string { return e.Message }

// configError is a configuration error with a message written as is.
func configError(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), Reason: ReasonConfig}
}

// entryError is an entry validator's message: GitLab writes the entry's
// location (jobs:build:cache), the text, and downcases the whole line.
func entryError(loc, text string) *Error {
	return &Error{Message: strings.ToLower(loc + " " + text), Reason: ReasonConfig}
}

// Messages GitLab uses in more than one place.
const (
	msgTooBig       = "The parsed YAML is too big"
	msgTooLong      = "Resolving config took longer than expected"
	msgNotHash      = "Invalid configuration format"
	msgTotalTooBig  = "Total size of combined CI/CD configuration is too big"
	msgEmpty        = "Please provide content of .gitlab-ci.yml"
	msgWorkflow     = "Pipeline filtered out by workflow rules."
	msgFilteredRule = "Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline."
)

// humanize is ActiveSupport's humanize of an attribute or job name in a
// message (which GitLab then downcases): "allow_failure" is "allow
// failure", "deploy_id" is "deploy".
func humanize(attr string) string {
	s := strings.ReplaceAll(attr, ".", "_")
	id := strings.HasSuffix(s, "_id")
	s = strings.TrimLeft(strings.ReplaceAll(s, "_", " "), " ")
	if id {
		s = strings.TrimSuffix(s, " id")
	}
	return s
}
