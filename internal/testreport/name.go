package testreport

import (
	"regexp"
	"strings"
)

// parallelSuffix is GitLab's group-name pattern (lib/gitlab/utils/job.rb),
// with Ruby's classes spelled out: \s is [ \t\n\v\f\r] and [\b] inside a
// class is a backspace. One to three "[...]" matrix parts or "N/M", "N:M",
// "N M", `N\M` parallel indexes, each after whitespace or colons, at the
// end of the name.
var parallelSuffix = regexp.MustCompile(`(?:[\x08\t\n\v\f\r :]+(?:\[.*\]|[0-9]+[\t\n\v\f\r :/\\]+[0-9]+)){1,3}[\t\n\v\f\r ]*\z`)

// GroupName is GitLab's job group name: the job name without a trailing
// parallel index or matrix part ("rspec 1/3", "rspec 1:3", "rspec 1 3" and
// "test: [a, b]" all give "rspec" or "test"), then trimmed of whitespace.
// Build names a parallel:matrix job's suite by its full name instead (see
// Blob.Matrix).
func GroupName(jobName string) string {
	if loc := parallelSuffix.FindStringIndex(jobName); loc != nil {
		jobName = jobName[:loc[0]]
	}
	return strings.Trim(jobName, "\x00\t\n\v\f\r ")
}
