package model

import "time"

// NoteBodyMax is GitLab's bound on a note's body, in characters.
const NoteBodyMax = 1_000_000

// Noteable types: what notes and award emoji are on.
const (
	NoteableIssue        = "Issue"
	NoteableMergeRequest = "MergeRequest"
)

// Note is a comment on an issue (NoteableType "Issue", NoteableID the
// issue's id). Internal notes are seen by the project's reporters up
// only. AuthorID is 0 when the author has been deleted.
type Note struct {
	ID           int64
	NoteableType string
	NoteableID   int64
	ProjectID    int64
	AuthorID     int64
	Body         string
	System       bool
	Internal     bool
	Resolvable   bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// AwardEmoji is a user's emoji reaction to an issue (AwardableType
// "Issue"); a user gives each name once per target.
type AwardEmoji struct {
	ID            int64
	Name          string
	UserID        int64
	AwardableType string
	AwardableID   int64
	ProjectID     int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// The award emoji an issue counts as up and down votes.
const (
	EmojiThumbsUp   = "thumbsup"
	EmojiThumbsDown = "thumbsdown"
)
