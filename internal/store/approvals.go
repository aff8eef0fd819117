package store

import (
	"context"
	"database/sql"
	"errors"

	"quarry/internal/model"
)

// Approval settings, rules (of projects and of merge requests) with their
// users, groups and protected branches, and approvals.

// ApprovalSettings returns a project's approval settings (the defaults
// when never written).
func (tx *Tx) ApprovalSettings(ctx context.Context, projectID int64) (model.ApprovalSettings, error) {
	s := model.DefaultApprovalSettings(projectID)
	err := tx.row(ctx, []any{&s.ApprovalsBeforeMerge, &s.ResetApprovalsOnPush, &s.SelectiveCodeOwnerRemovals, &s.DisableOverridingApprovers,
		&s.AuthorApproval, &s.DisableCommittersApproval, &s.RequirePassword},
		`SELECT approvals_before_merge, reset_approvals_on_push, selective_code_owner_removals, disable_overriding_approvers,
		author_approval, disable_committers_approval, require_password FROM approval_settings WHERE project_id = ?`, projectID)
	if errors.Is(err, model.ErrNotFound) {
		return s, nil
	}
	return s, err
}

// SaveApprovalSettings writes a project's approval settings.
func (tx *Tx) SaveApprovalSettings(ctx context.Context, s model.ApprovalSettings) error {
	_, err := tx.exec(ctx, `INSERT INTO approval_settings (project_id, approvals_before_merge, reset_approvals_on_push,
		selective_code_owner_removals, disable_overriding_approvers, author_approval, disable_committers_approval, require_password)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id) DO UPDATE SET approvals_before_merge = excluded.approvals_before_merge,
		reset_approvals_on_push = excluded.reset_approvals_on_push, selective_code_owner_removals = excluded.selective_code_owner_removals,
		disable_overriding_approvers = excluded.disable_overriding_approvers, author_approval = excluded.author_approval,
		disable_committers_approval = excluded.disable_committers_approval, require_password = excluded.require_password`,
		s.ProjectID, s.ApprovalsBeforeMerge, s.ResetApprovalsOnPush, s.SelectiveCodeOwnerRemovals, s.DisableOverridingApprovers,
		s.AuthorApproval, s.DisableCommittersApproval, s.RequirePassword)
	return err
}

const ruleColumns = `id, project_id, merge_request_id, name, rule_type, approvals_required, source_rule_id,
	applies_to_all_protected_branches, created_at, updated_at`

func ruleDest(r *model.ApprovalRule) []any {
	return []any{&r.ID, nullInt64{&r.ProjectID}, nullInt64{&r.MergeRequestID}, &r.Name, &r.RuleType, &r.ApprovalsRequired,
		nullInt64{&r.SourceRuleID}, &r.AppliesToAllProtectedBranches, tsScan{&r.CreatedAt}, tsScan{&r.UpdatedAt}}
}

// Unique rule names (any case) per project and per merge request.
const (
	UniqueProjectRuleName = "approval_rules_project_name"
	UniqueMRRuleName      = "approval_rules_mr_name"
)

// IsRuleNameTaken reports a rule name another rule of the same project or
// merge request has (a racing create that passed the first check).
func IsRuleNameTaken(err error) bool {
	return IsUnique(err, UniqueProjectRuleName) || IsUnique(err, UniqueMRRuleName)
}

// CreateApprovalRule stores a rule with its users, groups and branches.
func (tx *Tx) CreateApprovalRule(ctx context.Context, r *model.ApprovalRule) error {
	now := tx.Now()
	r.CreatedAt, r.UpdatedAt = now, now
	var err error
	r.ID, err = tx.insert(ctx, `INSERT INTO approval_rules (project_id, merge_request_id, name, rule_type, approvals_required,
		source_rule_id, applies_to_all_protected_branches, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		zeroNull(r.ProjectID), zeroNull(r.MergeRequestID), r.Name, r.RuleType, r.ApprovalsRequired, zeroNull(r.SourceRuleID),
		r.AppliesToAllProtectedBranches, micros(now), micros(now))
	if err != nil {
		return err
	}
	return tx.setRuleMembers(ctx, r)
}

// UpdateApprovalRule writes a rule and replaces its users, groups and
// branches.
func (tx *Tx) UpdateApprovalRule(ctx context.Context, r *model.ApprovalRule) error {
	r.UpdatedAt = tx.Now()
	if _, err := tx.exec(ctx, `UPDATE approval_rules SET name = ?, rule_type = ?, approvals_required = ?,
		applies_to_all_protected_branches = ?, updated_at = ? WHERE id = ?`,
		r.Name, r.RuleType, r.ApprovalsRequired, r.AppliesToAllProtectedBranches, micros(r.UpdatedAt), r.ID); err != nil {
		return err
	}
	return tx.setRuleMembers(ctx, r)
}

func (tx *Tx) setRuleMembers(ctx context.Context, r *model.ApprovalRule) error {
	for _, t := range []struct {
		table, col string
		ids        []int64
	}{{"approval_rule_users", "user_id", r.UserIDs}, {"approval_rule_groups", "group_id", r.GroupIDs},
		{"approval_rule_protected_branches", "protected_branch_id", r.ProtectedBranchIDs}} {
		if _, err := tx.exec(ctx, "DELETE FROM "+t.table+" WHERE rule_id = ?", r.ID); err != nil {
			return err
		}
		for _, id := range t.ids {
			if _, err := tx.exec(ctx, "INSERT INTO "+t.table+" (rule_id, "+t.col+") VALUES (?, ?) ON CONFLICT DO NOTHING", r.ID, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteApprovalRule removes a rule; false when there was none.
func (tx *Tx) DeleteApprovalRule(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM approval_rules WHERE id = ?", id)
	return n == 1, err
}

// ApprovalsConfigured reports whether anything could require approvals of
// a project's merge request (one statement): approvals_before_merge set,
// a rule of the project or of the merge request, or a protected branch
// requiring code owners' approval. When nothing does, no rule applies.
func (tx *Tx) ApprovalsConfigured(ctx context.Context, projectID, mrID int64) (bool, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, `SELECT
		(SELECT COUNT(*) FROM approval_settings WHERE project_id = ? AND approvals_before_merge > 0) +
		(SELECT COUNT(*) FROM approval_rules WHERE project_id = ?) +
		(SELECT COUNT(*) FROM approval_rules WHERE merge_request_id = ?) +
		(SELECT COUNT(*) FROM protected_branches WHERE project_id = ? AND code_owner_approval_required)`,
		projectID, projectID, mrID, projectID)
	return n > 0, err
}

// ProjectApprovalRules lists a project's rules, by id.
func (tx *Tx) ProjectApprovalRules(ctx context.Context, projectID int64) ([]model.ApprovalRule, error) {
	return tx.rules(ctx, "project_id = ?", projectID)
}

// MergeRequestApprovalRules lists a merge request's own rules, by id.
func (tx *Tx) MergeRequestApprovalRules(ctx context.Context, mrID int64) ([]model.ApprovalRule, error) {
	return tx.rules(ctx, "merge_request_id = ?", mrID)
}

func (tx *Tx) rules(ctx context.Context, cond string, args ...any) ([]model.ApprovalRule, error) {
	var out []model.ApprovalRule
	err := tx.each(ctx, "SELECT "+ruleColumns+" FROM approval_rules WHERE "+cond+" ORDER BY id", args, func(r *sql.Rows) error {
		var x model.ApprovalRule
		if err := r.Scan(ruleDest(&x)...); err != nil {
			return err
		}
		out = append(out, x)
		return nil
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	byID := map[int64]*model.ApprovalRule{}
	ids := make([]int64, len(out))
	for i := range out {
		byID[out[i].ID], ids[i] = &out[i], out[i].ID
	}
	for _, t := range []struct{ table, col string }{{"approval_rule_users", "user_id"}, {"approval_rule_groups", "group_id"},
		{"approval_rule_protected_branches", "protected_branch_id"}} {
		err := tx.each(ctx, "SELECT rule_id, "+t.col+" FROM "+t.table+" WHERE rule_id IN ("+placeholders(len(ids))+") ORDER BY rule_id, "+t.col,
			anys(ids), func(r *sql.Rows) error {
				var rid, id int64
				if err := r.Scan(&rid, &id); err != nil {
					return err
				}
				x := byID[rid]
				switch t.table {
				case "approval_rule_users":
					x.UserIDs = append(x.UserIDs, id)
				case "approval_rule_groups":
					x.GroupIDs = append(x.GroupIDs, id)
				default:
					x.ProtectedBranchIDs = append(x.ProtectedBranchIDs, id)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Approve records a user's approval; false when it exists.
func (tx *Tx) Approve(ctx context.Context, mrID, userID int64) (bool, error) {
	n, err := tx.execN(ctx, "INSERT INTO approvals (merge_request_id, user_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
		mrID, userID, micros(tx.Now()))
	return n == 1, err
}

// Unapprove removes a user's approval; false when there was none.
func (tx *Tx) Unapprove(ctx context.Context, mrID, userID int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM approvals WHERE merge_request_id = ? AND user_id = ?", mrID, userID)
	return n == 1, err
}

// ResetApprovals removes every approval of a merge request.
func (tx *Tx) ResetApprovals(ctx context.Context, mrID int64) error {
	_, err := tx.exec(ctx, "DELETE FROM approvals WHERE merge_request_id = ?", mrID)
	return err
}

// Approvals lists a merge request's approvals, oldest first.
func (tx *Tx) Approvals(ctx context.Context, mrID int64) ([]model.Approval, error) {
	var out []model.Approval
	err := tx.each(ctx, "SELECT merge_request_id, user_id, created_at FROM approvals WHERE merge_request_id = ? ORDER BY created_at, user_id",
		[]any{mrID}, func(r *sql.Rows) error {
			var a model.Approval
			if err := r.Scan(&a.MergeRequestID, &a.UserID, tsScan{&a.CreatedAt}); err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	return out, err
}

// GroupMemberIDs lists the users who are members of a group or of one of
// its ancestors (GitLab's group members an approval rule names).
func (tx *Tx) GroupMemberIDs(ctx context.Context, groupID int64, today string) ([]int64, error) {
	return scanInts(tx.query(ctx, `SELECT DISTINCT user_id FROM namespace_authorizations WHERE namespace_id = ?
		AND (expires_at IS NULL OR expires_at > ?) ORDER BY user_id`, groupID, today))
}

// ProjectUserIDsAtLeast lists the users whose access to a project is at
// least level (CODEOWNERS' @@maintainer and friends).
func (tx *Tx) ProjectUserIDsAtLeast(ctx context.Context, projectID int64, level model.AccessLevel, today string) ([]int64, error) {
	return scanInts(tx.query(ctx, `SELECT DISTINCT user_id FROM project_authorizations WHERE project_id = ? AND access_level >= ?
		AND (expires_at IS NULL OR expires_at > ?) ORDER BY user_id`, projectID, level, today))
}

// ApprovalVersions are the versions of what merge requests' approval
// states are computed from (one statement): the project's (its approval
// settings and rules, its merge requests' rules and approvals, its
// protected branches) and group membership's (every group's members).
// Triggers move them in the transaction of every write, so a reader
// that reads them before the rest never keeps what another process
// changed after (0046_approval_versions).
func (tx *Tx) ApprovalVersions(ctx context.Context, projectID int64) (project, members int64, err error) {
	err = tx.row(ctx, []any{&project, &members}, `SELECT
		COALESCE((SELECT version FROM approval_versions WHERE scope = ?), 0),
		COALESCE((SELECT version FROM approval_versions WHERE scope = 0), 0)`, projectID)
	return project, members, err
}
