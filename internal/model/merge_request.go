package model

import (
	"strconv"
	"strings"
	"time"
)

// Merge request states.
const (
	MRStateOpened = "opened"
	MRStateClosed = "closed"
	MRStateMerged = "merged"
	MRStateLocked = "locked"
)

// MRStateCanMoveTo is the merge request state table: opened ⇄ closed;
// opened → locked while a merge runs, then → merged (final), or back to
// opened when the merge fails.
func MRStateCanMoveTo(from, to string) bool {
	switch from {
	case MRStateOpened:
		return to == MRStateClosed || to == MRStateLocked
	case MRStateLocked:
		return to == MRStateMerged || to == MRStateOpened
	case MRStateClosed:
		return to == MRStateOpened
	}
	return false
}

// Merge statuses (merge_status), computed from the repository.
const (
	MergeUnchecked      = "unchecked"
	MergeCanBeMerged    = "can_be_merged"
	MergeCannotBeMerged = "cannot_be_merged"
)

// MergeRequest is a request to merge a source branch (of the target
// project or of a fork) into a target branch.
type MergeRequest struct {
	ID              int64
	IID             int64
	TargetProjectID int64
	SourceProjectID int64
	SourceBranch    string
	TargetBranch    string
	Title           string
	Description     string
	State           string
	AuthorID        int64
	AssigneeIDs     []int64
	ReviewerIDs     []int64
	Labels          []string
	// Squash and RemoveSourceBranch are the author's choices for the
	// merge (squash, force_remove_source_branch).
	Squash             bool
	RemoveSourceBranch bool
	DiscussionLocked   bool
	// HeadSHA is the source branch's tip as last seen (diff_refs.head_sha,
	// sha); BaseSHA the merge base with the target then (diff_refs
	// base_sha) and StartSHA the target's tip then (start_sha).
	HeadSHA  string
	BaseSHA  string
	StartSHA string
	// MergeStatus was computed for the pair (MergeStatusSource,
	// MergeStatusTarget) of tips; a pair that moved makes it stale.
	MergeStatus       string
	MergeStatusSource string
	MergeStatusTarget string
	Conflicts         bool
	MergeCommitSHA    string
	SquashCommitSHA   string
	MergeError        string
	MergedByID        int64
	MergedAt          *time.Time
	ClosedByID        int64
	ClosedAt          *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int64
}

// Draft reports whether the title marks the merge request as a draft.
func (m *MergeRequest) Draft() bool { return IsDraftTitle(m.Title) }

// IsDraftTitle reports a title GitLab reads as a draft: "Draft:",
// "[Draft]" or "(Draft)" at its start, any case.
func IsDraftTitle(title string) bool {
	t := strings.ToLower(strings.TrimSpace(title))
	for _, p := range []string{"draft:", "[draft]", "(draft)", "draft -"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// MRRefPrefix is where a merge request's head is kept in the target
// repository: refs/merge-requests/<iid>/head.
const MRRefPrefix = "refs/merge-requests/"

// MRHeadRef is the ref of a merge request's head.
func MRHeadRef(iid int64) string { return MRRefPrefix + strconv.FormatInt(iid, 10) + "/head" }
