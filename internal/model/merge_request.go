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

// mrMoves is the merge request state machine: every allowed move, and
// why it happens. Anything not listed is refused.
var mrMoves = map[string]map[string]string{
	MRStateOpened: {
		MRStateClosed: "closed by a user",
		MRStateLocked: "a merge takes it (compare-and-set: one merge at a time, in any process)",
	},
	MRStateClosed: {
		MRStateOpened: "reopened by a user",
	},
	MRStateLocked: {
		MRStateMerged: "its merge moved the target branch; or, the merge being dead, its result or its head is on the target",
		MRStateOpened: "its merge failed; or, the merge being dead, nothing of it is on the target",
	},
}

// MRStateCanMoveTo is the merge request state table: opened ⇄ closed;
// opened → locked while a merge runs, then → merged (final), or back to
// opened when the merge fails (a merge whose process died is finished or
// undone by the recovery that finds its lock's lease expired).
func MRStateCanMoveTo(from, to string) bool {
	_, ok := mrMoves[from][to]
	return ok
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
	// EntityVersion moves on every write to the row or its assignees and
	// reviewers, of any process (triggers): the entity cache's key.
	EntityVersion int64

	// FastForward is whether MergeStatusTarget is an ancestor of
	// MergeStatusSource (merged by a fast-forward without a rebase);
	// computed with the merge status.
	FastForward bool
	// ChangedFiles is the number of files changed between ChangesBase
	// and ChangesHead; it counts for the merge request while they are
	// its BaseSHA and HeadSHA (ChangesKnown).
	ChangedFiles int
	ChangesBase  string
	ChangesHead  string
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

// MergeCheck is what git says of merging one source tip into one target
// tip ("" for a branch that is gone): it depends on the two commits only,
// so a check stored with its tips is true for them whenever it was made.
type MergeCheck struct {
	Status         string // MergeCanBeMerged or MergeCannotBeMerged; MergeUnchecked: not checked
	Source, Target string
	Conflicts      bool
	FastForward    bool // Target is an ancestor of Source
}

// Check is the merge check stored on the merge request.
func (m MergeRequest) Check() MergeCheck {
	return MergeCheck{Status: m.MergeStatus, Source: m.MergeStatusSource, Target: m.MergeStatusTarget, Conflicts: m.Conflicts,
		FastForward: m.FastForward}
}

// SetCheck stores c on the merge request.
func (m *MergeRequest) SetCheck(c MergeCheck) {
	m.MergeStatus, m.MergeStatusSource, m.MergeStatusTarget, m.Conflicts, m.FastForward = c.Status, c.Source, c.Target, c.Conflicts, c.FastForward
}

// ChangesKnown reports whether ChangedFiles was counted for the merge
// request's diff refs as they are.
func (m MergeRequest) ChangesKnown() bool {
	return m.ChangesBase == m.BaseSHA && m.ChangesHead == m.HeadSHA
}

// MergeLock is what a merge holding a merge request's lock records beside
// the locked state: who merges, a lease the merge renews while it runs
// (a lock whose lease ran out belongs to a merge that died with its
// process), and, once its commits are made and before it moves the target
// branch, what it is about to do — so a recovery can tell whether the
// target moved.
type MergeLock struct {
	Token  string    // names the merge holding the lock
	UserID int64     // the merger (merged_by if a recovery completes it)
	Until  time.Time // the lease: a live merge renews it
	Result *MergeResult
}

// MergeResult is what a merge moves the target branch to.
type MergeResult struct {
	Branch       string `json:"branch"`  // the target branch
	Head         string `json:"head"`    // the source's tip merged
	OldTip       string `json:"old_tip"` // the target's tip before
	NewTip       string `json:"new_tip"` // the target's tip after
	MergeCommit  string `json:"merge_commit,omitempty"`
	SquashCommit string `json:"squash_commit,omitempty"`
	Squash       bool   `json:"squash"`
}

// MRRefPrefix is where a merge request's head is kept in the target
// repository: refs/merge-requests/<iid>/head.
const MRRefPrefix = "refs/merge-requests/"

// MRHeadRef is the ref of a merge request's head.
func MRHeadRef(iid int64) string { return MRRefPrefix + strconv.FormatInt(iid, 10) + "/head" }
