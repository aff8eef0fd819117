package entity

import (
	"strconv"

	"quarry/internal/model"
)

// Milestone is GitLab's Entities::Milestone: project_id for a project's,
// group_id for a group's.
type Milestone struct {
	ID          int64   `json:"id"`
	IID         int64   `json:"iid"`
	ProjectID   *int64  `json:"project_id,omitempty"`
	GroupID     *int64  `json:"group_id,omitempty"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	State       string  `json:"state"`
	CreatedAt   Time    `json:"created_at"`
	UpdatedAt   Time    `json:"updated_at"`
	DueDate     *string `json:"due_date"`
	StartDate   *string `json:"start_date"`
	Expired     bool    `json:"expired"`
	WebURL      string  `json:"web_url"`
}

// Milestone renders m; expired against the renderer's clock (UTC date).
func (r *Renderer) Milestone(m *model.Milestone) Milestone {
	j := Milestone{ID: m.ID, IID: m.IID, Title: m.Title, Description: m.Description, State: m.State,
		CreatedAt: Time(m.CreatedAt), UpdatedAt: Time(m.UpdatedAt), DueDate: StrPtr(m.DueDate), StartDate: StrPtr(m.StartDate),
		Expired: m.Expired(r.Now().UTC().Format(model.DateLayout))}
	suffix := "/-/milestones/" + strconv.FormatInt(m.IID, 10)
	if m.GroupID != 0 {
		id := m.GroupID
		j.GroupID = &id
		j.WebURL = r.ExternalURL + "/groups/" + m.ParentPath + suffix
	} else {
		id := m.ProjectID
		j.ProjectID = &id
		j.WebURL = r.ExternalURL + "/" + m.ParentPath + suffix
	}
	return j
}
