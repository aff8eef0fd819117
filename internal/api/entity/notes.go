package entity

import (
	"quarry/internal/notes"
)

// Note is GitLab's Entities::Note for an issue's note (no diff position,
// no resolution: issue notes are not resolvable).
type Note struct {
	ID              int64          `json:"id"`
	Type            *string        `json:"type"`
	Body            string         `json:"body"`
	Attachment      *string        `json:"attachment"`
	Author          *UserBasic     `json:"author"`
	CreatedAt       Time           `json:"created_at"`
	UpdatedAt       Time           `json:"updated_at"`
	System          bool           `json:"system"`
	NoteableID      int64          `json:"noteable_id"`
	NoteableType    string         `json:"noteable_type"`
	ProjectID       int64          `json:"project_id"`
	Resolvable      bool           `json:"resolvable"`
	Confidential    bool           `json:"confidential"`
	Internal        bool           `json:"internal"`
	Imported        bool           `json:"imported"`
	ImportedFrom    string         `json:"imported_from"`
	NoteableIID     int64          `json:"noteable_iid"`
	CommandsChanges map[string]any `json:"commands_changes"`
}

// Note renders a note.
func (r *Renderer) Note(v notes.View) Note {
	j := Note{ID: v.ID, Body: v.Body, CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt), System: v.System,
		NoteableID: v.NoteableID, NoteableType: v.NoteableType, ProjectID: v.ProjectID, Resolvable: v.Resolvable,
		Confidential: v.Internal, Internal: v.Internal, ImportedFrom: "none", NoteableIID: v.NoteableIID,
		CommandsChanges: map[string]any{}}
	if v.Author != nil {
		b := r.UserBasic(v.Author)
		j.Author = &b
	}
	return j
}

// Notes renders a list of notes.
func (r *Renderer) Notes(list []notes.View) []Note {
	out := make([]Note, len(list))
	for k, v := range list {
		out[k] = r.Note(v)
	}
	return out
}

// AwardEmoji is GitLab's Entities::AwardEmoji.
type AwardEmoji struct {
	ID            int64      `json:"id"`
	Name          string     `json:"name"`
	User          *UserBasic `json:"user"`
	CreatedAt     Time       `json:"created_at"`
	UpdatedAt     Time       `json:"updated_at"`
	AwardableID   int64      `json:"awardable_id"`
	AwardableType string     `json:"awardable_type"`
	URL           *string    `json:"url"`
}

// AwardEmoji renders an award emoji.
func (r *Renderer) AwardEmoji(v notes.AwardView) AwardEmoji {
	j := AwardEmoji{ID: v.ID, Name: v.Name, CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt), AwardableID: v.AwardableID,
		AwardableType: v.AwardableType}
	if v.User != nil {
		b := r.UserBasic(v.User)
		j.User = &b
	}
	return j
}

// AwardEmojiList renders a list of award emoji.
func (r *Renderer) AwardEmojiList(list []notes.AwardView) []AwardEmoji {
	out := make([]AwardEmoji, len(list))
	for k, v := range list {
		out[k] = r.AwardEmoji(v)
	}
	return out
}
