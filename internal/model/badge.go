package model

import "time"

// Badge is a project's or a group's badge: a link and an image whose
// URLs may hold placeholders (GitLab's ProjectBadge and GroupBadge).
// Exactly one of ProjectID and GroupID is set.
type Badge struct {
	ID        int64
	ProjectID int64
	GroupID   int64
	Name      *string
	LinkURL   string
	ImageURL  string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

// Kind is "project" or "group", as the API names a badge's owner.
func (b Badge) Kind() string {
	if b.ProjectID != 0 {
		return "project"
	}
	return "group"
}
