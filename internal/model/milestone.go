package model

import "time"

// Milestone states.
const (
	MilestoneActive = "active"
	MilestoneClosed = "closed"
)

// Milestone is a project's or a group's milestone: exactly one of
// ProjectID and GroupID is set.
type Milestone struct {
	ID        int64
	IID       int64
	ProjectID int64
	GroupID   int64
	Title     string
	// Description is nil when never given.
	Description *string
	State       string
	// DueDate and StartDate are YYYY-MM-DD, "" when unset.
	DueDate   string
	StartDate string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
	// ParentPath is the full path of the group or project the milestone
	// belongs to (read with it, for its web_url).
	ParentPath string
}

// Expired tells whether the milestone's due date is before today's date
// (YYYY-MM-DD), as GitLab's Milestoneish#expired? does.
func (m *Milestone) Expired(today string) bool {
	return m.DueDate != "" && m.DueDate < today
}
