package model

import "time"

// Release is a project's release of one tag (GitLab's Release).
type Release struct {
	ID          int64
	ProjectID   int64
	Tag         string
	Name        string
	Description string
	SHA         string // the tag's commit when the release was made
	AuthorID    int64  // 0 when the author was removed
	ReleasedAt  time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Version     int64
}

// ReleaseLinkTypes are the kinds of a release's asset link.
var ReleaseLinkTypes = []string{"other", "runbook", "package", "image"}

// ReleaseLink is an asset link of a release.
type ReleaseLink struct {
	ID        int64
	ReleaseID int64
	Name      string
	URL       string
	Filepath  string // "" when unset
	LinkType  string
	CreatedAt time.Time
	UpdatedAt time.Time
}
