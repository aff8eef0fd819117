// Package approvals holds merge request approvals: a project's approval
// settings and rules, a merge request's own rules, approving and
// unapproving, and the approval state that decides whether a merge
// request may be merged (reference §4.4).
package approvals

import (
	"slices"

	"quarry/internal/model"
)

// RuleState is one rule as it stands for a merge request.
type RuleState struct {
	model.ApprovalRule
	// Eligible are the users who may approve for it (after the author
	// and committer settings).
	Eligible []int64
	// ApprovedBy are the eligible users who approved.
	ApprovedBy    []int64
	ApprovalsLeft int
	Approved      bool
	// Overridden: a project rule a merge request rule replaces.
	Overridden bool
}

// State is a merge request's approval state.
type State struct {
	Rules             []RuleState
	Overwritten       bool // the merge request's own rules apply
	ApprovalsRequired int
	ApprovalsLeft     int
	Approved          bool
	ApprovedBy        []int64 // every approval, oldest first
}

// Inputs are what the state is computed from.
type Inputs struct {
	Settings     model.ApprovalSettings
	ProjectRules []model.ApprovalRule
	MRRules      []model.ApprovalRule
	// GroupMembers are the members of every group a rule names.
	GroupMembers map[int64][]int64
	AuthorID     int64
	CommitterIDs []int64
	Approvals    []model.Approval
}

// Compute is the approval state of §4.4: the merge request's own regular
// rules when it has any with approvers and overriding is allowed, else
// the project's; code owner and report rules of the merge request always;
// the any_approver rule when no regular rule has approvers. A rule's
// eligible approvers are its users and its groups' members, without the
// author (unless authors may approve) and the committers (when they may
// not); it is approved when its approvals left are none, or (regular
// rules) every eligible approver approved.
func Compute(in Inputs) State {
	var st State
	for _, a := range in.Approvals {
		st.ApprovedBy = append(st.ApprovedBy, a.UserID)
	}
	hasApprovers := func(r model.ApprovalRule) bool { return len(r.UserIDs) > 0 || len(r.GroupIDs) > 0 }
	mrRegular := false
	for _, r := range in.MRRules {
		if r.RuleType == model.RuleRegular && hasApprovers(r) {
			mrRegular = true
		}
	}
	st.Overwritten = mrRegular && !in.Settings.DisableOverridingApprovers
	var rules []model.ApprovalRule
	if st.Overwritten {
		for _, r := range in.MRRules {
			if r.RuleType == model.RuleRegular || r.RuleType == model.RuleAnyApprover {
				rules = append(rules, r)
			}
		}
	} else {
		rules = append(rules, in.ProjectRules...)
		if !in.Settings.DisableOverridingApprovers {
			// A merge request's any_approver rule (approvals_required set
			// on it) replaces the project's.
			for _, r := range in.MRRules {
				if r.RuleType == model.RuleAnyApprover {
					rules = slices.DeleteFunc(rules, func(x model.ApprovalRule) bool { return x.RuleType == model.RuleAnyApprover })
					rules = append(rules, r)
				}
			}
		}
	}
	for _, r := range in.MRRules {
		if r.RuleType == model.RuleCodeOwner || r.RuleType == model.RuleReportApprover {
			rules = append(rules, r)
		}
	}
	anyRegular := false
	for _, r := range rules {
		if r.RuleType != model.RuleAnyApprover && hasApprovers(r) {
			anyRegular = true
		}
	}
	blocked := func(uid int64) bool {
		return (uid == in.AuthorID && !in.Settings.AuthorApproval) ||
			(in.Settings.DisableCommittersApproval && slices.Contains(in.CommitterIDs, uid))
	}
	st.Approved = true
	for _, r := range rules {
		if r.RuleType == model.RuleAnyApprover && anyRegular {
			continue
		}
		rs := RuleState{ApprovalRule: r}
		if r.RuleType == model.RuleAnyApprover {
			for _, uid := range st.ApprovedBy {
				if !blocked(uid) {
					rs.ApprovedBy = append(rs.ApprovedBy, uid)
				}
			}
		} else {
			seen := map[int64]bool{}
			add := func(uid int64) {
				if !seen[uid] && !blocked(uid) {
					seen[uid] = true
					rs.Eligible = append(rs.Eligible, uid)
				}
			}
			for _, uid := range r.UserIDs {
				add(uid)
			}
			for _, gid := range r.GroupIDs {
				for _, uid := range in.GroupMembers[gid] {
					add(uid)
				}
			}
			for _, uid := range st.ApprovedBy {
				if seen[uid] {
					rs.ApprovedBy = append(rs.ApprovedBy, uid)
				}
			}
		}
		rs.ApprovalsLeft = max(r.ApprovalsRequired-len(rs.ApprovedBy), 0)
		rs.Approved = rs.ApprovalsLeft == 0 ||
			(r.RuleType != model.RuleAnyApprover && len(rs.Eligible) > 0 && len(rs.ApprovedBy) == len(rs.Eligible))
		st.ApprovalsRequired += r.ApprovalsRequired
		st.ApprovalsLeft += rs.ApprovalsLeft
		st.Approved = st.Approved && rs.Approved
		st.Rules = append(st.Rules, rs)
	}
	return st
}

// CanApprove reports whether user may approve (§4.4): not twice, not
// when the author or committer settings forbid it; an eligible approver
// of an unapproved rule may; anyone else only when no regular rule has
// approvers, or the merge request is approved already. The caller checks
// the user's role (developers up, or named in a rule).
func (st State) CanApprove(uid int64, in Inputs) bool {
	if slices.Contains(st.ApprovedBy, uid) {
		return false
	}
	if (uid == in.AuthorID && !in.Settings.AuthorApproval) || (in.Settings.DisableCommittersApproval && slices.Contains(in.CommitterIDs, uid)) {
		return false
	}
	regular := false
	for _, r := range st.Rules {
		if r.RuleType == model.RuleAnyApprover {
			continue
		}
		regular = regular || len(r.Eligible) > 0
		if slices.Contains(r.Eligible, uid) {
			return true
		}
	}
	return !regular || st.Approved
}

// Eligible reports whether a rule names the user (directly or through a
// group) — such a user may approve whatever their role.
func (st State) Eligible(uid int64) bool {
	for _, r := range st.Rules {
		if slices.Contains(r.Eligible, uid) {
			return true
		}
	}
	return false
}
