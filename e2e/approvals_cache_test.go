package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"quarry/internal/apitest"
)

// TestApprovals_cacheAcrossProcesses: a merge request's approval state is
// read through one server (B), which keeps its approval inputs under the
// approval versions, and everything it depends on is changed through
// another (A) on the same database: each change shows in B's next read,
// and a read of an unchanged merge request costs fewer statements than
// the read that filled the cache. Two processes share a database only on
// PostgreSQL; on SQLite A and B are one server.
func TestApprovals_cacheAcrossProcesses(t *testing.T) {
	apitest.Each(t, func(t *testing.T, a *apitest.Server) {
		b := a
		if a.Target.DatabaseURL != "" {
			b = apitest.StartIn(t, a.Target, a.DataDir)
		}
		qc := newQueryCounter(t, b)
		owner := a.NewUser(t, "acowner")
		dev, dev2, lead := a.NewUser(t, "acdev"), a.NewUser(t, "acdev2"), a.NewUser(t, "aclead")
		p := apProject(t, a, owner, "apcache")
		apMember(t, p, apDeveloper, dev, dev2, lead)
		team := apGroup(t, a, owner, "acteam")
		devs := apCreateRule(t, p, map[string]any{"name": "Devs", "approvals_required": 1, "user_ids": []int64{dev.ID}})
		apCreateRule(t, p, map[string]any{"name": "Team", "approvals_required": 1, "group_ids": []int64{team}})
		apCreateRule(t, p, map[string]any{"name": "Protected", "approvals_required": 1, "user_ids": []int64{lead.ID},
			"applies_to_all_protected_branches": true})
		mr := apOpen(t, p, "feature")
		path := fmt.Sprintf("/projects/%d/merge_requests/%d/approvals", p.ID, mr.IID)
		pb := p
		pb.s = b

		// Writes whose answer shows the approval state (opening,
		// approving, unapproving, a rule of the merge request) compute
		// it in A: on SQLite, where A is B, they fill B's cache too.
		shared := b == a
		// read returns B's approval state (for the owner) as "left N by
		// [ids]" and its rules as "name: eligible ids", read twice: the
		// second read is the same and costs fewer statements when the
		// first filled the cache (the settings, the project's rules, its
		// protected branches, the merge request's rules, the group's
		// members and the approvals). The author may not approve.
		read := func(t *testing.T, filled bool) (string, []string) {
			t.Helper()
			got, n1 := qc.get(t, path, owner.Token)
			again, n2 := qc.get(t, path, owner.Token)
			// The merge check after a push finishes on its own time
			// and may land between the reads; it is not the approvals'.
			delete(got, "merge_status")
			delete(again, "merge_status")
			if fmt.Sprint(got) != fmt.Sprint(again) {
				t.Fatalf("a second read differs:\n%v\n%v", got, again)
			}
			// Before the cache every read cost what the filling read
			// costs less the versions' statement.
			if filled && n2 >= n1-1 {
				t.Errorf("statements: %d for the first read after the change, %d for the next; want fewer than %d (cached)", n1, n2, n1-1)
			}
			if !filled && n2 != n1 {
				t.Errorf("statements: %d, then %d; want the same (both cached)", n1, n2)
			}
			st := apApprovals(t, pb, owner.Token, mr.IID)
			rules := []string{}
			for _, r := range apApprovalState(t, pb, owner.Token, mr.IID).Rules {
				rules = append(rules, fmt.Sprintf("%s: %v", r.Name, apIDs(r.EligibleApprovers)))
			}
			slices.Sort(rules)
			return fmt.Sprintf("left %d by %v", st.ApprovalsLeft, st.approvers()), rules
		}
		want := func(t *testing.T, step string, filled bool, state string, rules ...string) {
			t.Helper()
			gotState, gotRules := read(t, filled)
			if gotState != state || !slices.Equal(gotRules, rules) {
				t.Errorf("%s: %s %q; want %s %q", step, gotState, gotRules, state, rules)
			}
		}
		ids := func(ids ...int64) string { return fmt.Sprint(apSet(ids...)) }
		want(t, "first read", !shared, "left 3 by []", "Devs: "+ids(dev.ID), "Protected: "+ids(lead.ID), "Team: []")
		want(t, "unchanged", false, "left 3 by []", "Devs: "+ids(dev.ID), "Protected: "+ids(lead.ID), "Team: []")

		apApprove(t, p, dev.Token, mr.IID, map[string]any{"sha": mr.SHA})
		want(t, "approved", !shared, fmt.Sprintf("left 2 by [%d]", dev.ID), "Devs: "+ids(dev.ID), "Protected: "+ids(lead.ID), "Team: []")

		apMRDo(t, p, "POST", dev.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusCreated)
		want(t, "unapproved", !shared, "left 3 by []", "Devs: "+ids(dev.ID), "Protected: "+ids(lead.ID), "Team: []")

		apDo(t, p, "PUT", owner.Token, fmt.Sprintf("/approval_rules/%d", devs.ID), map[string]any{"user_ids": []int64{dev.ID, dev2.ID}}).
			Want(t, http.StatusOK)
		want(t, "rule changed", true, "left 3 by []", "Devs: "+ids(dev.ID, dev2.ID), "Protected: "+ids(lead.ID), "Team: []")

		a.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", team), Token: owner.Token,
			JSON: map[string]any{"user_id": dev2.ID, "access_level": apDeveloper}}).Want(t, http.StatusCreated)
		want(t, "group member added", true, "left 3 by []", "Devs: "+ids(dev.ID, dev2.ID), "Protected: "+ids(lead.ID),
			"Team: "+ids(dev2.ID))

		apSettings(t, p, map[string]any{"merge_requests_author_approval": true})
		want(t, "authors may approve", true, "left 3 by []", "Devs: "+ids(dev.ID, dev2.ID), "Protected: "+ids(lead.ID),
			"Team: "+ids(owner.ID, dev2.ID))
		apSettings(t, p, map[string]any{"merge_requests_author_approval": false})
		want(t, "authors may not approve", true, "left 3 by []", "Devs: "+ids(dev.ID, dev2.ID), "Protected: "+ids(lead.ID),
			"Team: "+ids(dev2.ID))

		// main unprotected: the rule of protected branches no longer
		// applies; protected again, requiring code owners, it does, and
		// so do the sections of CODEOWNERS pushed to main.
		apDo(t, p, "DELETE", owner.Token, "/protected_branches/main", nil).Want(t, http.StatusNoContent)
		want(t, "main unprotected", true, "left 2 by []", "Devs: "+ids(dev.ID, dev2.ID), "Team: "+ids(dev2.ID))
		apDo(t, p, "POST", owner.Token, "/protected_branches", map[string]any{"name": "main", "code_owner_approval_required": true}).
			Want(t, http.StatusCreated)
		want(t, "main protected", true, "left 3 by []", "Devs: "+ids(dev.ID, dev2.ID), "Protected: "+ids(lead.ID),
			"Team: "+ids(dev2.ID))
		p.commit(t, "main", map[string]string{"CODEOWNERS": "[Features]\n*.txt @aclead\n"})
		want(t, "CODEOWNERS pushed to main", false, "left 4 by []", "Devs: "+ids(dev.ID, dev2.ID), "Features: "+ids(lead.ID),
			"Protected: "+ids(lead.ID), "Team: "+ids(dev2.ID))

		// A push to the source branch resets the approvals (on by
		// default), through A's follow-up of the push.
		apApprove(t, p, dev.Token, mr.IID, map[string]any{"sha": mr.SHA})
		want(t, "approved again", !shared, fmt.Sprintf("left 3 by [%d]", dev.ID), "Devs: "+ids(dev.ID, dev2.ID), "Features: "+ids(lead.ID),
			"Protected: "+ids(lead.ID), "Team: "+ids(dev2.ID))
		p.commit(t, "feature", map[string]string{"feature.txt": "pushed again\n"})
		eventually(t, "B shows the push's reset", func() bool {
			return len(apApprovals(t, pb, owner.Token, mr.IID).ApprovedBy) == 0
		})
		want(t, "pushed", false, "left 4 by []", "Devs: "+ids(dev.ID, dev2.ID), "Features: "+ids(lead.ID),
			"Protected: "+ids(lead.ID), "Team: "+ids(dev2.ID))

		// A rule of the merge request's own replaces the project's.
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "Own", "approvals_required": 1,
			"user_ids": []int64{dev2.ID}}).Want(t, http.StatusCreated)
		want(t, "a merge request rule", !shared, "left 2 by []", "Features: "+ids(lead.ID), "Own: "+ids(dev2.ID))
	})
}
