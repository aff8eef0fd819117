package entity

import (
	"regexp"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
)

// MergeRequest is GitLab's merge request in lists (reference §4.1).
type MergeRequest struct {
	ID                          int64                `json:"id"`
	IID                         int64                `json:"iid"`
	ProjectID                   int64                `json:"project_id"`
	Title                       string               `json:"title"`
	Description                 string               `json:"description"`
	State                       string               `json:"state"`
	CreatedAt                   Time                 `json:"created_at"`
	UpdatedAt                   Time                 `json:"updated_at"`
	MergedBy                    *UserBasic           `json:"merged_by"`
	MergeUser                   *UserBasic           `json:"merge_user"`
	MergedAt                    *Time                `json:"merged_at"`
	ClosedBy                    *UserBasic           `json:"closed_by"`
	ClosedAt                    *Time                `json:"closed_at"`
	TargetBranch                string               `json:"target_branch"`
	SourceBranch                string               `json:"source_branch"`
	UserNotesCount              int                  `json:"user_notes_count"`
	Upvotes                     int                  `json:"upvotes"`
	Downvotes                   int                  `json:"downvotes"`
	Author                      *UserBasic           `json:"author"`
	Assignees                   []UserBasic          `json:"assignees"`
	Assignee                    *UserBasic           `json:"assignee"`
	Reviewers                   []UserBasic          `json:"reviewers"`
	SourceProjectID             int64                `json:"source_project_id"`
	TargetProjectID             int64                `json:"target_project_id"`
	Labels                      []string             `json:"labels"`
	Draft                       bool                 `json:"draft"`
	WorkInProgress              bool                 `json:"work_in_progress"`
	Milestone                   any                  `json:"milestone"`
	MergeWhenPipelineSucceeds   bool                 `json:"merge_when_pipeline_succeeds"`
	MergeStatus                 string               `json:"merge_status"`
	DetailedMergeStatus         string               `json:"detailed_merge_status"`
	SHA                         string               `json:"sha"`
	MergeCommitSHA              *string              `json:"merge_commit_sha"`
	SquashCommitSHA             *string              `json:"squash_commit_sha"`
	DiscussionLocked            *bool                `json:"discussion_locked"`
	ShouldRemoveSourceBranch    *bool                `json:"should_remove_source_branch"`
	ForceRemoveSourceBranch     bool                 `json:"force_remove_source_branch"`
	PreparedAt                  Time                 `json:"prepared_at"`
	Reference                   string               `json:"reference"`
	References                  MRReferences         `json:"references"`
	WebURL                      string               `json:"web_url"`
	TimeStats                   TimeStats            `json:"time_stats"`
	Squash                      bool                 `json:"squash"`
	SquashOnMerge               bool                 `json:"squash_on_merge"`
	TaskCompletionStatus        TaskCompletionStatus `json:"task_completion_status"`
	HasConflicts                bool                 `json:"has_conflicts"`
	BlockingDiscussionsResolved bool                 `json:"blocking_discussions_resolved"`
	ApprovalsBeforeMerge        *int                 `json:"approvals_before_merge"`
}

// MRReferences are a merge request's references.
type MRReferences struct {
	Short    string `json:"short"`
	Relative string `json:"relative"`
	Full     string `json:"full"`
}

// TimeStats are time tracking figures (Quarry tracks none yet).
type TimeStats struct {
	TimeEstimate        int     `json:"time_estimate"`
	TotalTimeSpent      int     `json:"total_time_spent"`
	HumanTimeEstimate   *string `json:"human_time_estimate"`
	HumanTotalTimeSpent *string `json:"human_total_time_spent"`
}

// TaskCompletionStatus counts the description's task list items.
type TaskCompletionStatus struct {
	Count          int `json:"count"`
	CompletedCount int `json:"completed_count"`
}

// taskItem is a Markdown task list item as GitLab counts one (Taskable's
// ITEM_PATTERN): in a list (after optional blockquote marks), a box of a
// space or an x, then text.
var taskItem = regexp.MustCompile(`(?m)^(?:>\s{0,4})*(?:[ \t]*(?:[-+*]|\d+[.)]))+[ \t]+\[([ xX])\][ \t]+\S`)

// tasks counts the task list items of a description.
func tasks(description string) TaskCompletionStatus {
	var out TaskCompletionStatus
	if !strings.Contains(description, "[") {
		return out // no box: no item (most descriptions; the pattern is costly)
	}
	for _, m := range taskItem.FindAllStringSubmatch(description, -1) {
		out.Count++
		if m[1] != " " {
			out.CompletedCount++
		}
	}
	return out
}

// MergeRequestDetail is a single merge request.
type MergeRequestDetail struct {
	MergeRequest
	Subscribed                bool        `json:"subscribed"`
	ChangesCount              string      `json:"changes_count"`
	LatestBuildStartedAt      *Time       `json:"latest_build_started_at"`
	LatestBuildFinishedAt     *Time       `json:"latest_build_finished_at"`
	FirstDeployedToProduction *Time       `json:"first_deployed_to_production_at"`
	Pipeline                  any         `json:"pipeline"`
	HeadPipeline              any         `json:"head_pipeline"`
	DiffRefs                  DiffRefs    `json:"diff_refs"`
	MergeError                *string     `json:"merge_error"`
	FirstContribution         bool        `json:"first_contribution"`
	User                      MRUserPerms `json:"user"`
}

// DiffRefs are the commits a merge request's diff is between.
type DiffRefs struct {
	BaseSHA  string `json:"base_sha"`
	HeadSHA  string `json:"head_sha"`
	StartSHA string `json:"start_sha"`
}

// MRUserPerms are the viewer's rights on a merge request.
type MRUserPerms struct {
	CanMerge bool `json:"can_merge"`
}

// MergeRequestChanges is a merge request with its changes.
type MergeRequestChanges struct {
	MergeRequestDetail
	Changes  []Diff `json:"changes"`
	Overflow bool   `json:"overflow"`
}

// detailedMergeStatus is GitLab's detailed_merge_status of an open merge
// request, from what Quarry knows.
func detailedMergeStatus(v mergerequests.View) string { return v.DetailedMergeStatus() }

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MergeRequest renders a merge request for lists.
func (r *Renderer) MergeRequest(v mergerequests.View) MergeRequest {
	return r.mergeRequest(v, summaries{})
}

// summaries are the user summaries rendered so far for a response: a page
// names the same few people many times.
type summaries map[int64]*UserBasic

// of is the summary of the user id among users (nil: unknown).
func (p summaries) of(r *Renderer, users map[int64]model.User, id int64) *UserBasic {
	if b, ok := p[id]; ok {
		return b
	}
	var b *UserBasic
	if u, ok := users[id]; ok {
		s := r.UserBasic(&u)
		b = &s
	}
	p[id] = b
	return b
}

func (r *Renderer) mergeRequest(v mergerequests.View, known summaries) MergeRequest {
	user := func(id int64) *UserBasic { return known.of(r, v.Users, id) }
	people := func(ids []int64) []UserBasic {
		out := make([]UserBasic, 0, len(ids))
		for _, id := range ids {
			if b := user(id); b != nil {
				out = append(out, *b)
			}
		}
		return out
	}
	ref := "!" + strconv.FormatInt(v.IID, 10)
	labels := v.Labels
	if labels == nil {
		labels = []string{}
	}
	out := MergeRequest{ID: v.ID, IID: v.IID, ProjectID: v.TargetProjectID, Title: v.Title, Description: v.Description, State: v.State,
		CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt), MergedBy: user(v.MergedByID), MergeUser: user(v.MergedByID),
		MergedAt: TimePtr(v.MergedAt), ClosedBy: user(v.ClosedByID), ClosedAt: TimePtr(v.ClosedAt), TargetBranch: v.TargetBranch,
		SourceBranch: v.SourceBranch, Author: user(v.AuthorID), Assignees: people(v.AssigneeIDs), Reviewers: people(v.ReviewerIDs),
		SourceProjectID: v.SourceProjectID, TargetProjectID: v.TargetProjectID, Labels: labels, Draft: v.Draft(), WorkInProgress: v.Draft(),
		MergeStatus: v.MergeStatus, DetailedMergeStatus: detailedMergeStatus(v), SHA: v.HeadSHA, MergeCommitSHA: strOrNil(v.MergeCommitSHA),
		SquashCommitSHA: strOrNil(v.SquashCommitSHA), DiscussionLocked: &v.DiscussionLocked, ForceRemoveSourceBranch: v.RemoveSourceBranch,
		PreparedAt: Time(v.CreatedAt), Reference: ref,
		References: MRReferences{Short: ref, Relative: ref, Full: v.Target.FullPath() + ref},
		WebURL:     r.ExternalURL + "/" + v.Target.FullPath() + "/-/merge_requests/" + strconv.FormatInt(v.IID, 10),
		Squash:     v.Squash, SquashOnMerge: v.Squash || v.Target.Settings.SquashOption == "always", HasConflicts: v.Conflicts,
		TaskCompletionStatus: tasks(v.Description), BlockingDiscussionsResolved: true}
	if len(out.Assignees) > 0 {
		out.Assignee = &out.Assignees[0]
	}
	if v.State == model.MRStateMerged {
		remove := v.RemoveSourceBranch
		out.ShouldRemoveSourceBranch = &remove
	}
	return out
}

// MergeRequests renders a list.
func (r *Renderer) MergeRequests(list []mergerequests.View) []MergeRequest {
	out := make([]MergeRequest, len(list))
	known := summaries{}
	for i, v := range list {
		out[i] = r.mergeRequest(v, known)
	}
	return out
}

// MRPipeline is a merge request's pipeline (pipeline, head_pipeline).
type MRPipeline struct {
	ID        int64  `json:"id"`
	IID       int64  `json:"iid"`
	ProjectID int64  `json:"project_id"`
	SHA       string `json:"sha"`
	Ref       string `json:"ref"`
	Status    string `json:"status"`
	Source    string `json:"source"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	WebURL    string `json:"web_url"`
}

// mrPipeline renders a merge request's head pipeline (nil: none).
func (r *Renderer) mrPipeline(v mergerequests.View) *MRPipeline {
	pl := v.HeadPipeline
	if pl == nil {
		return nil
	}
	return &MRPipeline{ID: pl.ID, IID: pl.IID, ProjectID: pl.ProjectID, SHA: pl.SHA, Ref: pl.Ref, Status: string(pl.Status), Source: pl.Source,
		CreatedAt: Time(pl.CreatedAt), UpdatedAt: Time(pl.UpdatedAt),
		WebURL: r.ExternalURL + "/" + v.Source.FullPath() + "/-/pipelines/" + strconv.FormatInt(pl.ID, 10)}
}

// MergeRequestDetail renders a single merge request.
func (r *Renderer) MergeRequestDetail(v mergerequests.View, viewer auth.Actor) MergeRequestDetail {
	if pl := r.mrPipeline(v); pl != nil {
		d := r.mergeRequestDetail(v, viewer)
		d.Pipeline, d.HeadPipeline = pl, pl
		return d
	}
	return r.mergeRequestDetail(v, viewer)
}

func (r *Renderer) mergeRequestDetail(v mergerequests.View, viewer auth.Actor) MergeRequestDetail {
	return MergeRequestDetail{MergeRequest: r.MergeRequest(v), ChangesCount: v.ChangesCount,
		DiffRefs: DiffRefs{BaseSHA: v.BaseSHA, HeadSHA: v.HeadSHA, StartSHA: v.StartSHA}, MergeError: strOrNil(v.MergeError),
		Subscribed: viewer.SignedIn() && viewer.Is(v.AuthorID), User: MRUserPerms{CanMerge: v.CanMerge}}
}
