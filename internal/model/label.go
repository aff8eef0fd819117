package model

import "time"

// Label is a project's or a group's label: exactly one of ProjectID and
// GroupID is set. Color is stored as "#rrggbb" or "#rgb" (CSS colour names
// are turned into hex when a label is written).
type Label struct {
	ID          int64
	Title       string
	Color       string
	Description string
	ProjectID   int64
	GroupID     int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
}
