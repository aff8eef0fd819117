package approvals

import (
	"testing"

	"quarry/internal/model"
)

func approvalsBy(ids ...int64) []model.Approval {
	var out []model.Approval
	for _, id := range ids {
		out = append(out, model.Approval{UserID: id})
	}
	return out
}

// Compute follows reference §4.4, case by case.
func TestCompute(t *testing.T) {
	const author, alice, bob, carol, dave = 1, 2, 3, 4, 5
	regular := func(id int64, required int, users ...int64) model.ApprovalRule {
		return model.ApprovalRule{ID: id, Name: "r", RuleType: model.RuleRegular, ApprovalsRequired: required, UserIDs: users}
	}
	anyRule := func(required int) model.ApprovalRule {
		return model.ApprovalRule{ID: 99, Name: "All Members", RuleType: model.RuleAnyApprover, ApprovalsRequired: required}
	}
	defaults := model.DefaultApprovalSettings(1)
	for _, c := range []struct {
		name           string
		in             Inputs
		approved       bool
		required, left int
		overwritten    bool
	}{
		{name: "no rules: approved", in: Inputs{Settings: defaults, AuthorID: author}, approved: true},
		{name: "any approver needs 2, has 1", in: Inputs{Settings: defaults, ProjectRules: []model.ApprovalRule{anyRule(2)}, AuthorID: author,
			Approvals: approvalsBy(alice)}, required: 2, left: 1},
		{name: "any approver: the author's approval does not count", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{anyRule(1)}, AuthorID: author, Approvals: approvalsBy(author)}, required: 1, left: 1},
		{name: "any approver: the author counts when allowed", in: Inputs{Settings: model.ApprovalSettings{AuthorApproval: true},
			ProjectRules: []model.ApprovalRule{anyRule(1)}, AuthorID: author, Approvals: approvalsBy(author)}, approved: true, required: 1},
		{name: "regular rule: only its users count", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{regular(1, 1, alice)}, AuthorID: author, Approvals: approvalsBy(bob)}, required: 1, left: 1},
		{name: "regular rule approved by its user", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{regular(1, 1, alice)}, AuthorID: author, Approvals: approvalsBy(alice)}, approved: true, required: 1},
		{name: "regular rule: every eligible approver approved beats the count", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{regular(1, 3, alice, bob)}, AuthorID: author, Approvals: approvalsBy(alice, bob)},
			approved: true, required: 3, left: 1},
		{name: "a regular rule with approvers hides any_approver", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{anyRule(2), regular(1, 1, alice)}, AuthorID: author, Approvals: approvalsBy(alice)},
			approved: true, required: 1},
		{name: "group members are eligible", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{{ID: 1, RuleType: model.RuleRegular, ApprovalsRequired: 1, GroupIDs: []int64{7}}},
			GroupMembers: map[int64][]int64{7: {carol}}, AuthorID: author, Approvals: approvalsBy(carol)}, approved: true, required: 1},
		{name: "committers may not approve when disabled", in: Inputs{Settings: model.ApprovalSettings{DisableCommittersApproval: true},
			ProjectRules: []model.ApprovalRule{regular(1, 1, alice, dave)}, AuthorID: author, CommitterIDs: []int64{dave},
			Approvals: approvalsBy(dave)}, required: 1, left: 1},
		{name: "merge request rules overwrite the project's", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{regular(1, 2, alice, bob)},
			MRRules:      []model.ApprovalRule{{ID: 2, MergeRequestID: 5, RuleType: model.RuleRegular, ApprovalsRequired: 1, UserIDs: []int64{carol}}},
			AuthorID:     author, Approvals: approvalsBy(carol)}, approved: true, required: 1, overwritten: true},
		{name: "overriding disabled keeps the project's", in: Inputs{Settings: model.ApprovalSettings{DisableOverridingApprovers: true},
			ProjectRules: []model.ApprovalRule{regular(1, 2, alice, bob)},
			MRRules:      []model.ApprovalRule{{ID: 2, MergeRequestID: 5, RuleType: model.RuleRegular, ApprovalsRequired: 1, UserIDs: []int64{carol}}},
			AuthorID:     author, Approvals: approvalsBy(carol)}, required: 2, left: 2},
		{name: "two rules: both must be approved", in: Inputs{Settings: defaults,
			ProjectRules: []model.ApprovalRule{regular(1, 1, alice), regular(2, 1, bob)}, AuthorID: author, Approvals: approvalsBy(alice)},
			required: 2, left: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := Compute(c.in)
			if st.Approved != c.approved || st.ApprovalsRequired != c.required || st.ApprovalsLeft != c.left || st.Overwritten != c.overwritten {
				t.Errorf("approved %v required %d left %d overwritten %v; want %v %d %d %v", st.Approved, st.ApprovalsRequired,
					st.ApprovalsLeft, st.Overwritten, c.approved, c.required, c.left, c.overwritten)
			}
		})
	}
}

// CanApprove: eligible approvers of an unapproved rule may; others only
// without regular rules or once approved; never twice; the author only
// when allowed.
func TestCanApprove(t *testing.T) {
	const author, alice, bob = 1, 2, 3
	in := Inputs{Settings: model.DefaultApprovalSettings(1), AuthorID: author,
		ProjectRules: []model.ApprovalRule{{ID: 1, RuleType: model.RuleRegular, ApprovalsRequired: 1, UserIDs: []int64{alice}}}}
	st := Compute(in)
	for uid, want := range map[int64]bool{alice: true, bob: false, author: false} {
		if got := st.CanApprove(uid, in); got != want {
			t.Errorf("user %d may approve: %v; want %v", uid, got, want)
		}
	}
	in.Approvals = approvalsBy(alice)
	st = Compute(in)
	if st.CanApprove(alice, in) {
		t.Error("alice may approve twice")
	}
	if !st.CanApprove(bob, in) {
		t.Error("bob may not add an approval to an approved merge request")
	}
	none := Inputs{Settings: model.DefaultApprovalSettings(1), AuthorID: author}
	if !Compute(none).CanApprove(bob, none) {
		t.Error("without rules anyone may approve")
	}
}
