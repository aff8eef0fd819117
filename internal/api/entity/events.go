package entity

import "quarry/internal/model"

// Event is a contribution event (GitLab's Entities::Event).
type Event struct {
	ID             int64     `json:"id"`
	ProjectID      int64     `json:"project_id"`
	ActionName     string    `json:"action_name"`
	TargetID       *int64    `json:"target_id"`
	TargetIID      *int64    `json:"target_iid"`
	TargetType     *string   `json:"target_type"`
	AuthorID       int64     `json:"author_id"`
	TargetTitle    *string   `json:"target_title"`
	CreatedAt      Time      `json:"created_at"`
	Author         UserBasic `json:"author"`
	Imported       bool      `json:"imported"`
	ImportedFrom   string    `json:"imported_from"`
	PushData       *PushData `json:"push_data,omitempty"`
	AuthorUsername string    `json:"author_username"`
}

// PushData is a push event's payload (GitLab's Entities::PushEventPayload).
type PushData struct {
	CommitCount int64   `json:"commit_count"`
	Action      string  `json:"action"`
	RefType     string  `json:"ref_type"`
	CommitFrom  *string `json:"commit_from"`
	CommitTo    *string `json:"commit_to"`
	Ref         *string `json:"ref"`
	CommitTitle *string `json:"commit_title"`
	RefCount    *int64  `json:"ref_count"`
}

func nonZero(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// Event renders an event read with its author.
func (r *Renderer) Event(e model.Event) Event {
	j := Event{ID: e.ID, ProjectID: e.ProjectID, ActionName: e.ActionName(), AuthorID: e.AuthorID, CreatedAt: Time(e.CreatedAt),
		Author: r.UserBasic(&e.Author), ImportedFrom: "none", AuthorUsername: e.Author.Username}
	if e.TargetType != "" {
		j.TargetType, j.TargetID = StrPtr(e.TargetType), nonZero(e.TargetID)
		j.TargetIID = nonZero(e.TargetIID)
		if e.TargetTitle != "" {
			j.TargetTitle = StrPtr(e.TargetTitle)
		}
	}
	if p := e.Push; p != nil {
		j.PushData = &PushData{CommitCount: p.CommitCount, Action: p.Action, RefType: p.RefType, CommitFrom: StrPtr(p.CommitFrom),
			CommitTo: StrPtr(p.CommitTo), Ref: StrPtr(p.Ref), CommitTitle: StrPtr(p.CommitTitle), RefCount: nonZero(p.RefCount)}
	}
	return j
}
