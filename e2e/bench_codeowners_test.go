package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/codeowners/codeownerstest"
)

// benchCodeOwners is codeownerstest's monorepo CODEOWNERS of entries
// entries (about 1 MiB at 10,000).
func benchCodeOwners(entries int) string { return codeownerstest.Monorepo(entries) }

// benchCodeOwnersChanges are n changed files of a merge request against
// benchCodeOwners(entries), each holding content.
func benchCodeOwnersChanges(entries, n int, content string) map[string]string {
	files := map[string]string{}
	for _, p := range codeownerstest.MonorepoChanges(entries, n) {
		files[p] = content
	}
	return files
}

// commitFiles commits files on branch through the API (creating the
// branch from main when from is set) and returns the commit.
func commitFiles(tb testing.TB, s *apitest.Server, token string, project int64, branch, from, action string, files map[string]string) string {
	tb.Helper()
	actions := make([]map[string]any, 0, len(files))
	for path, content := range files {
		actions = append(actions, map[string]any{"action": action, "file_path": path, "content": content})
	}
	body := map[string]any{"branch": branch, "commit_message": "change " + branch, "actions": actions}
	if from != "" {
		body["start_branch"] = from
	}
	var c struct{ ID string }
	s.Do(tb, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/repository/commits", project), Token: token,
		JSON: body}).Want(tb, http.StatusCreated).JSON(tb, &c)
	return c.ID
}

// BenchmarkCodeOwners reads the approval state of a merge request that
// changes 300 files, its target branch requiring code owner approval with
// a CODEOWNERS of 10,000 entries (about 1 MiB):
//
//   - first-read: CODEOWNERS was just changed on the target branch (a new
//     blob), so the file is parsed and the 300 paths matched;
//   - new-head: the source branch was just pushed (a new head, the same
//     CODEOWNERS), so the paths are matched again;
//   - repeated-read: nothing moved.
//
// The commits between reads are not timed.
func BenchmarkCodeOwners(b *testing.B) {
	const entries, changed = 10000, 300
	s := apitest.Start(&keepAlive{b}, benchTarget(b))
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	for i := 0; i < 20; i++ {
		s.NewUser(b, fmt.Sprintf("colead-%02d", i))
	}
	pid := newBenchProject(b, s, owner, map[string]string{"CODEOWNERS": benchCodeOwners(entries)})
	s.Do(b, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/projects/%d/protected_branches/main", pid), Token: owner.Token,
		JSON: map[string]any{"code_owner_approval_required": true}}).Want(b, http.StatusOK)
	commitFiles(b, s, owner.Token, pid, "big-change", "main", "create", benchCodeOwnersChanges(entries, changed, "new\n"))
	var mr struct{ IID int64 }
	s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", pid), Token: owner.Token,
		JSON: map[string]any{"source_branch": "big-change", "target_branch": "main", "title": "Big change"}}).
		Want(b, http.StatusCreated).JSON(b, &mr)
	state := fmt.Sprintf("/projects/%d/merge_requests/%d/approval_state", pid, mr.IID)
	read := func(b *testing.B) {
		var st struct {
			Rules []struct {
				RuleType string `json:"rule_type"`
			} `json:"rules"`
		}
		s.Get(b, state, owner.Token).Want(b, http.StatusOK).JSON(b, &st)
		owned := 0
		for _, r := range st.Rules {
			if r.RuleType == "code_owner" {
				owned++
			}
		}
		if owned != 21 {
			b.Fatalf("%d code owner rules; want 21 (the default section and 20 teams)", owned)
		}
	}
	read(b)
	file := benchCodeOwners(entries)
	b.Run("first-read", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			commitFiles(b, s, owner.Token, pid, "main", "", "update", map[string]string{
				"CODEOWNERS": file + fmt.Sprintf("# revision %d of %d\n", i, b.N)})
			b.StartTimer()
			read(b)
		}
	})
	b.Run("new-head", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			commitFiles(b, s, owner.Token, pid, "big-change", "", "update", map[string]string{
				"tools/scripts/unowned_0009.sh": fmt.Sprintf("revision %d of %d\n", i, b.N)})
			b.StartTimer()
			read(b)
		}
	})
	b.Run("repeated-read", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			read(b)
		}
	})
}
