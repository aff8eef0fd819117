package store_test

import (
	"context"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestApprovalVersions_moveOnEveryInput: every write to what a merge
// request's approval state is computed from moves its project's approval
// version (and no other project's), or, for group membership, the
// members' version — the approval cache's key (0046_approval_versions).
func TestApprovalVersions_moveOnEveryInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner, dev := storetest.NewUser(t, db), storetest.NewUser(t, db)
		group := storetest.NewGroup(t, db, owner)
		p, other := storetest.NewProject(t, db, owner), storetest.NewProject(t, db, owner)
		m := model.MergeRequest{TargetProjectID: p.ID, SourceProjectID: p.ID, SourceBranch: "topic", TargetBranch: "main",
			Title: "t", State: model.MRStateOpened, AuthorID: owner.ID, MergeStatus: model.MergeUnchecked}
		var branch model.ProtectedBranch
		var projectRule, mrRule model.ApprovalRule
		write := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		write(func(tx *store.Tx) error { return tx.CreateMergeRequest(ctx, &m) })
		versions := func() (project, others, members int64) {
			t.Helper()
			project, members, err := db.ApprovalVersions(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			others, _, err = db.ApprovalVersions(ctx, other.ID)
			if err != nil {
				t.Fatal(err)
			}
			return project, others, members
		}
		const projectWrite, membersWrite = 0, 1
		for _, c := range []struct {
			name string
			kind int
			fn   func(tx *store.Tx) error
		}{
			{"settings", projectWrite, func(tx *store.Tx) error {
				return tx.SaveApprovalSettings(ctx, model.ApprovalSettings{ProjectID: p.ID, ApprovalsBeforeMerge: 1})
			}},
			{"settings changed", projectWrite, func(tx *store.Tx) error {
				return tx.SaveApprovalSettings(ctx, model.ApprovalSettings{ProjectID: p.ID, ApprovalsBeforeMerge: 2})
			}},
			{"protected branch", projectWrite, func(tx *store.Tx) error {
				branch = model.ProtectedBranch{ProjectID: p.ID, Name: "release"}
				return tx.CreateProtectedBranch(ctx, &branch)
			}},
			{"protected branch changed", projectWrite, func(tx *store.Tx) error {
				branch.CodeOwnerApprovalRequired = true
				return tx.UpdateProtectedBranch(ctx, &branch)
			}},
			{"project rule", projectWrite, func(tx *store.Tx) error {
				projectRule = model.ApprovalRule{ProjectID: p.ID, Name: "r", RuleType: model.RuleRegular, ApprovalsRequired: 1}
				return tx.CreateApprovalRule(ctx, &projectRule)
			}},
			{"project rule's users, groups and branches", projectWrite, func(tx *store.Tx) error {
				projectRule.UserIDs, projectRule.GroupIDs, projectRule.ProtectedBranchIDs = []int64{dev.ID}, []int64{group.ID}, []int64{branch.ID}
				return tx.UpdateApprovalRule(ctx, &projectRule)
			}},
			{"merge request rule", projectWrite, func(tx *store.Tx) error {
				mrRule = model.ApprovalRule{MergeRequestID: m.ID, Name: "own", RuleType: model.RuleRegular, ApprovalsRequired: 1}
				return tx.CreateApprovalRule(ctx, &mrRule)
			}},
			{"merge request rule's users", projectWrite, func(tx *store.Tx) error {
				mrRule.UserIDs = []int64{dev.ID}
				return tx.UpdateApprovalRule(ctx, &mrRule)
			}},
			{"approval", projectWrite, func(tx *store.Tx) error { _, err := tx.Approve(ctx, m.ID, dev.ID); return err }},
			{"unapproval", projectWrite, func(tx *store.Tx) error { _, err := tx.Unapprove(ctx, m.ID, dev.ID); return err }},
			{"approvals reset", projectWrite, func(tx *store.Tx) error {
				if _, err := tx.Approve(ctx, m.ID, dev.ID); err != nil {
					return err
				}
				return tx.ResetApprovals(ctx, m.ID)
			}},
			{"merge request rule deleted", projectWrite, func(tx *store.Tx) error { _, err := tx.DeleteApprovalRule(ctx, mrRule.ID); return err }},
			{"protected branch deleted", projectWrite, func(tx *store.Tx) error { return tx.DeleteProtectedBranch(ctx, branch.ID) }},
			{"project rule deleted", projectWrite, func(tx *store.Tx) error { _, err := tx.DeleteApprovalRule(ctx, projectRule.ID); return err }},
			{"group member added", membersWrite, func(tx *store.Tx) error {
				if err := tx.AddMember(ctx, model.SourceNamespace, group.ID, dev.ID, model.Developer, owner.ID, 1); err != nil {
					return err
				}
				return tx.RefreshAuthorizations(ctx, dev.ID)
			}},
			{"group member removed", membersWrite, func(tx *store.Tx) error {
				got, err := tx.Member(ctx, model.SourceNamespace, group.ID, dev.ID)
				if err != nil {
					return err
				}
				if err := tx.DeleteMember(ctx, got.ID); err != nil {
					return err
				}
				return tx.RefreshAuthorizations(ctx, dev.ID)
			}},
		} {
			project, others, members := versions()
			write(c.fn)
			p2, o2, m2 := versions()
			switch {
			case o2 != others:
				t.Errorf("%s: another project's version moved %d → %d", c.name, others, o2)
			case c.kind == projectWrite && p2 <= project:
				t.Errorf("%s: the project's version %d → %d; want it moved", c.name, project, p2)
			case c.kind == membersWrite && m2 <= members:
				t.Errorf("%s: the members' version %d → %d; want it moved", c.name, members, m2)
			}
		}
	})
}
