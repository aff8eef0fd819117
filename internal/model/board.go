package model

import "time"

// Board is a project's or a group's issue board: exactly one of
// ProjectID and GroupID is set. Lists are its label lists by position
// (the backlog and closed lists are implicit).
type Board struct {
	ID              int64
	ProjectID       int64
	GroupID         int64
	Name            string
	HideBacklogList bool
	HideClosedList  bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Lists           []BoardList
}

// Board list types (GitLab's List.list_type); only label lists are
// created, moved and removed through the API.
const (
	ListBacklog = "backlog"
	ListLabel   = "label"
	ListClosed  = "closed"
)

// BoardList is a list of a board: a label list carries its label and its
// position (0.. among the board's label lists).
type BoardList struct {
	ID       int64
	BoardID  int64
	ListType string
	Position int
	Label    Label
}
