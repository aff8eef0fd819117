package model

import (
	"slices"
	"strings"
	"time"
)

// Runner types.
const (
	RunnerInstance = "instance_type"
	RunnerGroup    = "group_type"
	RunnerProject  = "project_type"
)

// Runner access levels: a ref_protected runner takes only jobs of
// protected refs.
const (
	RunnerNotProtected = "not_protected"
	RunnerRefProtected = "ref_protected"
)

// How a runner came to be.
const (
	RegisteredByToken = "registration_token" // POST /runners
	RegisteredByUser  = "authenticated_user" // POST /user/runners
)

// RunnerTokenPrefix starts every runner authentication token Quarry
// issues; the runner recognises it and verifies instead of registering.
const RunnerTokenPrefix = "glrt-"

// JobTokenPrefix starts every CI job token.
const JobTokenPrefix = "glcbt-"

// CleanList reads a list parameter as GitLab does (runner tags, merge
// request labels): each value may hold several comma-separated items;
// items are trimmed, and empty and repeated ones dropped, in order.
func CleanList(in []string) []string {
	var out []string
	for _, v := range in {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" && !slices.Contains(out, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// RunnerInfo is what a runner says of itself on each call.
type RunnerInfo struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Revision     string `json:"revision"`
	Platform     string `json:"platform"`
	Architecture string `json:"architecture"`
	Executor     string `json:"executor"`
	IPAddress    string `json:"ip_address"`
}

// Runner is a CI runner. Only the digest of its token is stored.
type Runner struct {
	ID               int64
	Type             string
	GroupID          int64   // group runners
	ProjectIDs       []int64 // project runners, owner first
	TokenDigest      string
	TokenExpiresAt   *time.Time
	RegistrationType string
	CreatorID        int64
	Description      string
	MaintenanceNote  string
	Paused           bool
	Locked           bool
	RunUntagged      bool
	TagList          []string
	AccessLevel      string
	MaximumTimeout   int // seconds; 0: none
	ContactedAt      *time.Time
	Info             RunnerInfo
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Version          int64
}

// Runner statuses as the API shows them.
const (
	RunnerOnline         = "online"
	RunnerOffline        = "offline"
	RunnerStale          = "stale"
	RunnerNeverContacted = "never_contacted"
)

// Runner contact windows (GitLab's): online when heard from within two
// hours, stale when not heard from for a week (or never, a week after
// creation).
const (
	RunnerOnlineWindow = 2 * time.Hour
	RunnerStaleAfter   = 7 * 24 * time.Hour
)

// Status is the runner's contact status at now.
func (r *Runner) Status(now time.Time) string {
	switch {
	case r.ContactedAt == nil && now.Sub(r.CreatedAt) > RunnerStaleAfter:
		return RunnerStale
	case r.ContactedAt == nil:
		return RunnerNeverContacted
	case now.Sub(*r.ContactedAt) <= RunnerOnlineWindow:
		return RunnerOnline
	case now.Sub(*r.ContactedAt) > RunnerStaleAfter:
		return RunnerStale
	}
	return RunnerOffline
}

// Shared reports whether the runner is an instance runner.
func (r *Runner) Shared() bool { return r.Type == RunnerInstance }

// TakesTags reports whether the runner may run a job with these tags:
// every tag must be one of the runner's, and an untagged job needs
// run_untagged.
func (r *Runner) TakesTags(tags []string) bool {
	if len(tags) == 0 {
		return r.RunUntagged
	}
	for _, t := range tags {
		if !slices.Contains(r.TagList, t) {
			return false
		}
	}
	return true
}

// RunnerManager is one machine (system_id) using a runner's token.
type RunnerManager struct {
	ID          int64
	RunnerID    int64
	SystemID    string
	ContactedAt *time.Time
	Info        RunnerInfo
	CreatedAt   time.Time
}
