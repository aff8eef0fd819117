package entity

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/issues"
	"quarry/internal/labels"
	"quarry/internal/model"
)

// Issue is GitLab's Entities::Issue. user_notes_count counts the
// non-system notes the caller sees (internal ones for reporters up);
// upvotes and downvotes the thumbsup and thumbsdown award emoji — all
// read for a whole page at once (issues.View). Quarry keeps no time
// tracking, related merge requests or moves yet: their fields are
// GitLab's values for an issue without any (0, null).
type Issue struct {
	ID          int64      `json:"id"`
	IID         int64      `json:"iid"`
	ProjectID   int64      `json:"project_id"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	State       string     `json:"state"`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
	ClosedAt    *Time      `json:"closed_at"`
	ClosedBy    *UserBasic `json:"closed_by"`
	// Labels are names, or (with_labels_details) LabelBasic objects.
	Labels               any                  `json:"labels"`
	Milestone            *Milestone           `json:"milestone"`
	Assignees            []UserBasic          `json:"assignees"`
	Author               *UserBasic           `json:"author"`
	Type                 string               `json:"type"`
	Assignee             *UserBasic           `json:"assignee"`
	UserNotesCount       int                  `json:"user_notes_count"`
	MergeRequestsCount   int                  `json:"merge_requests_count"`
	Upvotes              int                  `json:"upvotes"`
	Downvotes            int                  `json:"downvotes"`
	DueDate              *string              `json:"due_date"`
	Confidential         bool                 `json:"confidential"`
	DiscussionLocked     bool                 `json:"discussion_locked"`
	IssueType            string               `json:"issue_type"`
	WebURL               string               `json:"web_url"`
	TimeStats            TimeStats            `json:"time_stats"`
	TaskCompletionStatus TaskCompletionStatus `json:"task_completion_status"`
	HasTasks             bool                 `json:"has_tasks"`
	TaskStatus           string               `json:"task_status,omitempty"`
	Links                IssueLinks           `json:"_links"`
	References           MRReferences         `json:"references"`
	Severity             string               `json:"severity"`
	// Subscribed is shown on a single issue only (GitLab leaves it out of
	// lists).
	Subscribed         *bool   `json:"subscribed,omitempty"`
	MovedToID          *int64  `json:"moved_to_id"`
	ServiceDeskReplyTo *string `json:"service_desk_reply_to"`
}

// IssueLinks are an issue's _links.
type IssueLinks struct {
	Self                string  `json:"self"`
	Notes               string  `json:"notes"`
	AwardEmoji          string  `json:"award_emoji"`
	Project             string  `json:"project"`
	ClosedAsDuplicateOf *string `json:"closed_as_duplicate_of"`
}

// Issues renders a list of issues.
func (r *Renderer) Issues(list []issues.View) []Issue {
	out := make([]Issue, len(list))
	known := summaries{}
	for n, v := range list {
		out[n] = r.issue(v, known)
	}
	return out
}

// IssueDetail renders a single issue for viewer: with subscribed (a
// participant — its author or an assignee — is subscribed, as GitLab
// has it without a subscription of their own; Quarry keeps none).
func (r *Renderer) IssueDetail(v issues.View, viewer auth.Actor) Issue {
	j := r.issue(v, summaries{})
	sub := viewer.SignedIn() && (viewer.Is(v.AuthorID) || v.Assigned(viewer.UserID()))
	j.Subscribed = &sub
	return j
}

func (r *Renderer) issue(v issues.View, known summaries) Issue {
	user := func(id int64) *UserBasic { return known.of(r, v.Users, id) }
	assignees := make([]UserBasic, 0, len(v.AssigneeIDs))
	for _, id := range v.AssigneeIDs {
		if b := user(id); b != nil {
			assignees = append(assignees, *b)
		}
	}
	var labels any
	if v.LabelDetails != nil {
		details := make([]LabelBasic, 0, len(v.LabelDetails))
		for _, l := range v.LabelDetails {
			details = append(details, labelBasic(l))
		}
		slices.SortFunc(details, func(a, b LabelBasic) int { return strings.Compare(a.Name, b.Name) })
		labels = details
	} else {
		names := slices.Clone(v.Labels)
		if names == nil {
			names = []string{}
		}
		slices.Sort(names)
		labels = names
	}
	iid := strconv.FormatInt(v.IID, 10)
	ref := "#" + iid
	api := fmt.Sprintf("%s/api/v4/projects/%d", r.ExternalURL, v.ProjectID)
	tasks := tasks(v.Description)
	j := Issue{ID: v.ID, IID: v.IID, ProjectID: v.ProjectID, Title: v.Title, Description: v.Description, State: v.State,
		CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt), ClosedAt: TimePtr(v.ClosedAt), ClosedBy: user(v.ClosedByID),
		Labels: labels, Assignees: assignees, Author: user(v.AuthorID), Type: "ISSUE", DueDate: StrPtr(v.DueDate),
		Confidential: v.Confidential, DiscussionLocked: v.DiscussionLocked, IssueType: "issue",
		UserNotesCount: v.UserNotesCount, Upvotes: v.Upvotes, Downvotes: v.Downvotes,
		WebURL:               r.ExternalURL + "/" + v.Project.FullPath() + "/-/issues/" + iid,
		TaskCompletionStatus: tasks, HasTasks: tasks.Count > 0,
		Links: IssueLinks{Self: api + "/issues/" + iid, Notes: api + "/issues/" + iid + "/notes",
			AwardEmoji: api + "/issues/" + iid + "/award_emoji", Project: api},
		References: MRReferences{Short: ref, Relative: ref, Full: v.Project.FullPath() + ref}, Severity: "UNKNOWN"}
	if tasks.Count > 0 {
		noun := "checklist items"
		if tasks.Count == 1 {
			noun = "checklist item"
		}
		j.TaskStatus = fmt.Sprintf("%d of %d %s completed", tasks.CompletedCount, tasks.Count, noun)
	}
	if len(assignees) > 0 {
		j.Assignee = &j.Assignees[0]
	}
	if v.Milestone != nil {
		m := r.Milestone(v.Milestone)
		j.Milestone = &m
	}
	return j
}

// IssueStatistics is GitLab's issues_statistics answer.
type IssueStatistics struct {
	Statistics struct {
		Counts struct {
			All    int `json:"all"`
			Closed int `json:"closed"`
			Opened int `json:"opened"`
		} `json:"counts"`
	} `json:"statistics"`
}

// IssuesStatistics renders the counts of opened and closed issues.
func IssuesStatistics(opened, closed int) IssueStatistics {
	var j IssueStatistics
	j.Statistics.Counts.All, j.Statistics.Counts.Closed, j.Statistics.Counts.Opened = opened+closed, closed, opened
	return j
}

// labelBasic renders an issue's label (with_labels_details).
func labelBasic(l model.Label) LabelBasic {
	j := LabelBasic{ID: l.ID, Name: l.Title, Color: l.Color, TextColor: labels.TextColor(l.Color)}
	if l.Description != "" {
		d, h := l.Description, descriptionHTML(l.Description)
		j.Description, j.DescriptionHTML = &d, &h
	}
	return j
}
