package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// mrUserJSON is a user as merge requests show one.
type mrUserJSON struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	WebURL   string `json:"web_url"`
}

// mrJSON is the merge request fields tests read.
type mrJSON struct {
	ID                       int64        `json:"id"`
	IID                      int64        `json:"iid"`
	ProjectID                int64        `json:"project_id"`
	SourceProjectID          int64        `json:"source_project_id"`
	TargetProjectID          int64        `json:"target_project_id"`
	Title                    string       `json:"title"`
	Description              string       `json:"description"`
	State                    string       `json:"state"`
	SourceBranch             string       `json:"source_branch"`
	TargetBranch             string       `json:"target_branch"`
	Draft                    bool         `json:"draft"`
	WorkInProgress           bool         `json:"work_in_progress"`
	Labels                   []string     `json:"labels"`
	Author                   *mrUserJSON  `json:"author"`
	Assignee                 *mrUserJSON  `json:"assignee"`
	Assignees                []mrUserJSON `json:"assignees"`
	Reviewers                []mrUserJSON `json:"reviewers"`
	MergedBy                 *mrUserJSON  `json:"merged_by"`
	MergeUser                *mrUserJSON  `json:"merge_user"`
	MergedAt                 *string      `json:"merged_at"`
	ClosedBy                 *mrUserJSON  `json:"closed_by"`
	ClosedAt                 *string      `json:"closed_at"`
	CreatedAt                string       `json:"created_at"`
	UpdatedAt                string       `json:"updated_at"`
	MergeStatus              string       `json:"merge_status"`
	DetailedMergeStatus      string       `json:"detailed_merge_status"`
	SHA                      string       `json:"sha"`
	MergeCommitSHA           string       `json:"merge_commit_sha"`
	SquashCommitSHA          string       `json:"squash_commit_sha"`
	Squash                   bool         `json:"squash"`
	SquashOnMerge            bool         `json:"squash_on_merge"`
	DiscussionLocked         *bool        `json:"discussion_locked"`
	ForceRemoveSourceBranch  bool         `json:"force_remove_source_branch"`
	ShouldRemoveSourceBranch *bool        `json:"should_remove_source_branch"`
	HasConflicts             bool         `json:"has_conflicts"`
	ChangesCount             string       `json:"changes_count"`
	Reference                string       `json:"reference"`
	References               struct {
		Short    string `json:"short"`
		Relative string `json:"relative"`
		Full     string `json:"full"`
	} `json:"references"`
	WebURL   string `json:"web_url"`
	DiffRefs struct {
		BaseSHA  string `json:"base_sha"`
		HeadSHA  string `json:"head_sha"`
		StartSHA string `json:"start_sha"`
	} `json:"diff_refs"`
	TaskCompletionStatus struct {
		Count          int `json:"count"`
		CompletedCount int `json:"completed_count"`
	} `json:"task_completion_status"`
	User struct {
		CanMerge bool `json:"can_merge"`
	} `json:"user"`
}

// A merge request from a branch: created, read with its merge status,
// merged with a merge commit.
func TestMergeRequests_smoke(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "mrowner")
		p := newCIProject(t, s, owner, "mrs", nil)
		head := p.commit(t, "feature", map[string]string{"feature.txt": "new\n"})
		var mr mrJSON
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
			JSON: map[string]any{"source_branch": "feature", "target_branch": "main", "title": "Add a feature"}}).
			Want(t, http.StatusCreated).JSON(t, &mr)
		if mr.IID != 1 || mr.State != "opened" || mr.SHA != head || mr.DiffRefs.HeadSHA != head {
			t.Fatalf("created %+v", mr)
		}
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
			JSON: map[string]any{"source_branch": "feature", "target_branch": "main", "title": "again"}}).
			Want(t, http.StatusConflict).WantBody(t, `{"message":["Another open merge request already exists for this source branch: !1"]}`)
		s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/1", p.ID), owner.Token).Want(t, http.StatusOK).JSON(t, &mr)
		if mr.MergeStatus != "can_be_merged" || mr.ChangesCount != "1" || mr.DetailedMergeStatus != "mergeable" {
			t.Fatalf("read %+v", mr)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/merge_requests/1/merge", p.ID), Token: owner.Token,
			JSON: map[string]any{"sha": "0000000000000000000000000000000000000000"}}).Want(t, http.StatusConflict)
		s.Do(t, apitest.Request{Method: "PUT", Path: fmt.Sprintf("/projects/%d/merge_requests/1/merge", p.ID), Token: owner.Token,
			JSON: map[string]any{"sha": head}}).Want(t, http.StatusOK).JSON(t, &mr)
		if mr.State != "merged" || mr.MergeCommitSHA == "" {
			t.Fatalf("merged %+v", mr)
		}
	})
}
