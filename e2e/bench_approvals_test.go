package e2e

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/storetest"
)

// apBench is a server for the approval benchmarks (issue 27): a project
// with three rules (two users; a group of four; the protected branches'
// rule of one user), approvals_before_merge set, and a merge request into
// main with one approval.
var apBench struct {
	once    sync.Once
	s       *apitest.Server
	project int64
	iid     int64
}

func apBenchServer(b *testing.B) (*apitest.Server, int64, int64) {
	apBench.once.Do(func() {
		target := storetest.Target{Name: "sqlite"}
		if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
			target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresSchema(&keepAlive{b})}
		}
		s := apitest.Start(&keepAlive{b}, target)
		owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
		project := newBenchProject(b, s, owner, map[string]string{"a.txt": "a\n"})
		do := func(method, path string, body map[string]any, want int) *apitest.Response {
			return s.Do(b, apitest.Request{Method: method, Path: fmt.Sprintf("/projects/%d%s", project, path), Token: s.RootToken,
				JSON: body}).Want(b, want)
		}
		var users []apitest.User
		for i := 0; i < 6; i++ {
			u := s.NewUser(b, fmt.Sprintf("apbench%d", i))
			do("POST", "/members", map[string]any{"user_id": u.ID, "access_level": apDeveloper}, http.StatusCreated)
			users = append(users, u)
		}
		var g struct{ ID int64 }
		s.Do(b, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: map[string]any{"name": "apbench-team",
			"path": "apbench-team"}}).Want(b, http.StatusCreated).JSON(b, &g)
		for _, u := range users[2:] {
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: s.RootToken,
				JSON: map[string]any{"user_id": u.ID, "access_level": apDeveloper}}).Want(b, http.StatusCreated)
		}
		for _, body := range []map[string]any{
			{"name": "Leads", "approvals_required": 1, "user_ids": []int64{users[0].ID, users[1].ID}},
			{"name": "Team", "approvals_required": 2, "group_ids": []int64{g.ID}},
			{"name": "Protected", "approvals_required": 1, "user_ids": []int64{users[0].ID}, "applies_to_all_protected_branches": true},
		} {
			do("POST", "/approval_rules", body, http.StatusCreated)
		}
		do("POST", "/approvals", map[string]any{"approvals_before_merge": 1}, http.StatusCreated)
		do("POST", "/repository/commits", map[string]any{"branch": "feature", "start_branch": "main", "commit_message": "feature",
			"actions": []map[string]any{{"action": "create", "file_path": "feature.txt", "content": "feature\n"}}}, http.StatusCreated)
		var mr mrJSON
		do("POST", "/merge_requests", map[string]any{"source_branch": "feature", "target_branch": "main", "title": "Change"},
			http.StatusCreated).JSON(b, &mr)
		s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests/%d/approve", project, mr.IID),
			Token: users[2].Token, JSON: map[string]any{"sha": mr.SHA}}).Want(b, http.StatusCreated)
		apBench.s, apBench.project, apBench.iid = s, project, mr.IID
	})
	if apBench.s == nil {
		b.Fatal("the approvals benchmark's server did not start")
	}
	return apBench.s, apBench.project, apBench.iid
}

// BenchmarkMergeRequestApprovals reads a merge request of a project with
// approval rules (its detailed merge status computes the approval state),
// its approvals and its approval state, as the administrator, 8 clients
// per core.
func BenchmarkMergeRequestApprovals(b *testing.B) {
	s, project, iid := apBenchServer(b)
	mr := fmt.Sprintf("%s/api/v4/projects/%d/merge_requests/%d", s.URL, project, iid)
	cases := []benchShape{
		{"get", mr, s.RootToken},
		{"approvals", mr + "/approvals", s.RootToken},
		{"approval_state", mr + "/approval_state", s.RootToken},
	}
	for _, c := range cases {
		benchGet(b, c.url, c.token) // warm: what the first read after a change computes
	}
	benchShapes(b, cases)
}
