package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// mrJSON is the merge request fields tests read.
type mrJSON struct {
	ID                  int64  `json:"id"`
	IID                 int64  `json:"iid"`
	State               string `json:"state"`
	MergeStatus         string `json:"merge_status"`
	DetailedMergeStatus string `json:"detailed_merge_status"`
	SHA                 string `json:"sha"`
	MergeCommitSHA      string `json:"merge_commit_sha"`
	HasConflicts        bool   `json:"has_conflicts"`
	ChangesCount        string `json:"changes_count"`
	DiffRefs            struct {
		BaseSHA  string `json:"base_sha"`
		HeadSHA  string `json:"head_sha"`
		StartSHA string `json:"start_sha"`
	} `json:"diff_refs"`
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
