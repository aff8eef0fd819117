package model

import "time"

// Issue states (GitLab's opened and closed).
const (
	IssueOpened = "opened"
	IssueClosed = "closed"
)

// Issue limits: GitLab's title length and Quarry's bound on descriptions
// (the merge requests' bound).
const (
	IssueTitleMax       = 255
	IssueDescriptionMax = 1 << 20
)

// Issue is a project's issue. Labels are names (as merge requests keep
// them); MilestoneID is a milestone of the project or of one of its
// groups (0: none). DueDate is YYYY-MM-DD or "".
type Issue struct {
	ID               int64
	IID              int64
	ProjectID        int64
	Title            string
	Description      string
	State            string
	AuthorID         int64
	ClosedByID       int64
	ClosedAt         *time.Time
	Confidential     bool
	DiscussionLocked bool
	DueDate          string
	MilestoneID      int64
	Labels           []string
	AssigneeIDs      []int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// Version guards edits (compare-and-set).
	Version int64
}

// Assigned reports whether user id is among the issue's assignees.
func (i Issue) Assigned(id int64) bool {
	for _, a := range i.AssigneeIDs {
		if a == id {
			return true
		}
	}
	return false
}

// EventTargetIssue is the target type of an issue's events.
const EventTargetIssue = "Issue"
