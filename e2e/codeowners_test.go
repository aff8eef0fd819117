package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
)

// CODEOWNERS: when the target branch's protection requires code owner
// approval, the owners of the paths a merge request changes must approve
// (a code_owner rule per section) before it merges; a change outside
// their paths needs none of them.
func TestApprovals_codeOwners(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner := s.NewUser(t, "coowner")
		docsLead := s.NewUser(t, "codocs")
		p := newCIProject(t, s, owner, "coproject", nil)
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: owner.Token,
			JSON: map[string]any{"user_id": docsLead.ID, "access_level": 30}}).Want(t, http.StatusCreated)
		p.commit(t, "main", map[string]string{
			".service/CODEOWNERS": "# owners\n[Documentation]\ndocs/ @codocs\n\n[Code][1]\n*.go @coowner\n",
			"docs/guide.md":       "guide\n",
		})
		s.Do(t, apitest.Request{Method: "PATCH", Path: fmt.Sprintf("/projects/%d/protected_branches/main", p.ID), Token: owner.Token,
			JSON: map[string]any{"code_owner_approval_required": true}}).Want(t, http.StatusOK)

		newMR := func(branch string, files map[string]string) mrJSON {
			p.commit(t, branch, files)
			var mr mrJSON
			s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests", p.ID), Token: owner.Token,
				JSON: map[string]any{"source_branch": branch, "target_branch": "main", "title": "Change " + branch}}).
				Want(t, http.StatusCreated).JSON(t, &mr)
			return mr
		}
		type ruleJSON struct {
			Name              string `json:"name"`
			RuleType          string `json:"rule_type"`
			ApprovalsRequired int    `json:"approvals_required"`
			Approved          bool   `json:"approved"`
			EligibleApprovers []struct {
				Username string `json:"username"`
			} `json:"eligible_approvers"`
		}
		state := func(iid int64) []ruleJSON {
			var st struct {
				Rules []ruleJSON `json:"rules"`
			}
			s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d/approval_state", p.ID, iid), owner.Token).Want(t, http.StatusOK).JSON(t, &st)
			return st.Rules
		}

		docs := newMR("docs-change", map[string]string{"docs/guide.md": "better guide\n"})
		rules := state(docs.IID)
		if len(rules) != 1 || rules[0].RuleType != "code_owner" || rules[0].Name != "Documentation" || rules[0].ApprovalsRequired != 1 ||
			len(rules[0].EligibleApprovers) != 1 || rules[0].EligibleApprovers[0].Username != "codocs" || rules[0].Approved {
			t.Fatalf("code owner rules of a docs change: %+v", rules)
		}
		detailed := func(iid int64) string {
			var mr mrJSON
			s.Get(t, fmt.Sprintf("/projects/%d/merge_requests/%d", p.ID, iid), owner.Token).Want(t, http.StatusOK).JSON(t, &mr)
			return mr.DetailedMergeStatus
		}
		if d := detailed(docs.IID); d != "not_approved" {
			t.Errorf("detailed_merge_status %q before the code owner approved; want not_approved", d)
		}
		merge := fmt.Sprintf("/projects/%d/merge_requests/%d/merge", p.ID, docs.IID)
		s.Do(t, apitest.Request{Method: "PUT", Path: merge, Token: owner.Token}).Want(t, http.StatusMethodNotAllowed)
		// The code owner of docs/ approves: the rule is met and the merge
		// goes through.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/merge_requests/%d/approve", p.ID, docs.IID),
			Token: docsLead.Token}).Want(t, http.StatusCreated)
		if rules := state(docs.IID); !rules[0].Approved {
			t.Fatalf("the code owner approved, rule %+v", rules[0])
		}
		if d := detailed(docs.IID); d != "mergeable" {
			t.Errorf("detailed_merge_status %q once approved; want mergeable", d)
		}
		s.Do(t, apitest.Request{Method: "PUT", Path: merge, Token: owner.Token}).Want(t, http.StatusOK)

		// A change no section owns has no code owner rule.
		other := newMR("readme-change", map[string]string{"NOTES.txt": "notes\n"})
		if rules := state(other.IID); len(rules) != 0 {
			t.Errorf("rules of an unowned change: %+v", rules)
		}
	})
}
