package entity

import "quarry/internal/labels"

// Label is GitLab's ProjectLabel or GroupLabel entity: the counts only
// with with_counts, priority and is_project_label only from a project.
type Label struct {
	ID                     int64   `json:"id"`
	Name                   string  `json:"name"`
	Description            *string `json:"description"`
	DescriptionHTML        *string `json:"description_html"`
	TextColor              string  `json:"text_color"`
	Color                  string  `json:"color"`
	OpenIssuesCount        *int    `json:"open_issues_count,omitempty"`
	ClosedIssuesCount      *int    `json:"closed_issues_count,omitempty"`
	OpenMergeRequestsCount *int    `json:"open_merge_requests_count,omitempty"`
	Subscribed             bool    `json:"subscribed"`
	IsProjectLabel         *bool   `json:"is_project_label,omitempty"` // project labels

}

// projectLabel adds priority (null included) to project labels.
type projectLabel struct {
	Label
	Priority *int `json:"priority"`
}

// Label renders a label seen from a project or a group; the value is
// ready for encoding/json.
func (r *Renderer) Label(v labels.View) any {
	j := Label{ID: v.ID, Name: v.Title, TextColor: labels.TextColor(v.Color), Color: v.Color, Subscribed: v.Subscribed}
	if v.Description != "" { // no description is null, as in GitLab
		d, h := v.Description, descriptionHTML(v.Description)
		j.Description, j.DescriptionHTML = &d, &h
	}
	if c := v.Counts; c != nil {
		j.OpenIssuesCount, j.ClosedIssuesCount, j.OpenMergeRequestsCount = &c.OpenIssues, &c.ClosedIssues, &c.OpenMergeRequests
	}
	if !v.FromProject {
		return j
	}
	own := v.ProjectID != 0
	j.IsProjectLabel = &own
	return projectLabel{Label: j, Priority: v.Priority}
}
