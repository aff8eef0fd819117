package entity

import (
	"encoding/json"
	"slices"

	"quarry/internal/approvals"
	"quarry/internal/model"
)

// ApprovalSettings is a project's approval configuration.
type ApprovalSettings struct {
	Approvers                                 []any `json:"approvers"`
	ApproverGroups                            []any `json:"approver_groups"`
	ApprovalsBeforeMerge                      int   `json:"approvals_before_merge"`
	ResetApprovalsOnPush                      bool  `json:"reset_approvals_on_push"`
	SelectiveCodeOwnerRemovals                bool  `json:"selective_code_owner_removals"`
	DisableOverridingApproversPerMergeRequest bool  `json:"disable_overriding_approvers_per_merge_request"`
	MergeRequestsAuthorApproval               bool  `json:"merge_requests_author_approval"`
	MergeRequestsDisableCommittersApproval    bool  `json:"merge_requests_disable_committers_approval"`
	RequirePasswordToApprove                  bool  `json:"require_password_to_approve"`
}

// ApprovalSettings renders a project's approval configuration.
func (r *Renderer) ApprovalSettings(s model.ApprovalSettings) ApprovalSettings {
	return ApprovalSettings{Approvers: []any{}, ApproverGroups: []any{}, ApprovalsBeforeMerge: s.ApprovalsBeforeMerge,
		ResetApprovalsOnPush: s.ResetApprovalsOnPush, SelectiveCodeOwnerRemovals: s.SelectiveCodeOwnerRemovals,
		DisableOverridingApproversPerMergeRequest: s.DisableOverridingApprovers, MergeRequestsAuthorApproval: s.AuthorApproval,
		MergeRequestsDisableCommittersApproval: s.DisableCommittersApproval, RequirePasswordToApprove: s.RequirePassword}
}

// ApprovalRule is a project's or a merge request's approval rule.
type ApprovalRule struct {
	ID                            int64             `json:"id"`
	Name                          string            `json:"name"`
	RuleType                      string            `json:"rule_type"`
	EligibleApprovers             []UserBasic       `json:"eligible_approvers"`
	ApprovalsRequired             int               `json:"approvals_required"`
	Users                         []UserBasic       `json:"users"`
	Groups                        []Group           `json:"groups"`
	ContainsHiddenGroups          bool              `json:"contains_hidden_groups"`
	ProtectedBranches             []ProtectedBranch `json:"protected_branches"`
	AppliesToAllProtectedBranches bool              `json:"applies_to_all_protected_branches"`
	// Merge request rules (and the rules of an approval state).
	SourceRule MRSourceRule `json:"source_rule,omitzero"`
	Overridden *bool        `json:"overridden,omitempty"`
	// In approval state (omitzero: present, [] too, when set).
	ApprovedBy []UserBasic `json:"approved_by,omitzero"`
	Approved   *bool       `json:"approved,omitempty"`
}

// SourceRule is the project rule a merge request rule copies.
type SourceRule struct {
	ApprovalsRequired int `json:"approvals_required"`
}

// MRSourceRule is a merge request rule's source_rule: absent on project
// rules, null on a merge request rule that copies none.
type MRSourceRule struct {
	Set  bool
	Rule *SourceRule
}

// IsZero leaves the key out of project rules.
func (s MRSourceRule) IsZero() bool { return !s.Set }

// MarshalJSON implements json.Marshaler.
func (s MRSourceRule) MarshalJSON() ([]byte, error) { return json.Marshal(s.Rule) }

// RuleContext is what rendering rules needs: users, groups, protected
// branches, the group members for eligible approvers, and the project
// rules merge request rules copy.
type RuleContext struct {
	Users     map[int64]model.User
	Groups    map[int64]model.Group
	Branches  []model.ProtectedBranch
	Members   map[int64][]int64
	Sources   map[int64]model.ApprovalRule
	Author    int64
	MRRule    bool
	AuthorMay bool
}

// overridden reports whether a merge request rule differs from the
// project rule it copies (GitLab's overridden?): its name, approvals,
// users or groups.
func overridden(r, src model.ApprovalRule) bool {
	same := func(a, b []int64) bool {
		return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
	}
	return r.Name != src.Name || r.ApprovalsRequired != src.ApprovalsRequired || !same(r.UserIDs, src.UserIDs) || !same(r.GroupIDs, src.GroupIDs)
}

// ApprovalRule renders a rule.
func (r *Renderer) ApprovalRule(x model.ApprovalRule, c RuleContext) ApprovalRule {
	users := func(ids []int64) []UserBasic {
		out := []UserBasic{}
		for _, id := range ids {
			if u, ok := c.Users[id]; ok {
				out = append(out, r.UserBasic(&u))
			}
		}
		return out
	}
	eligible := slices.Clone(x.UserIDs)
	for _, gid := range x.GroupIDs {
		for _, uid := range c.Members[gid] {
			if !slices.Contains(eligible, uid) {
				eligible = append(eligible, uid)
			}
		}
	}
	out := ApprovalRule{ID: x.ID, Name: x.Name, RuleType: x.RuleType, EligibleApprovers: users(eligible), ApprovalsRequired: x.ApprovalsRequired,
		Users: users(x.UserIDs), Groups: []Group{}, ProtectedBranches: []ProtectedBranch{},
		AppliesToAllProtectedBranches: x.AppliesToAllProtectedBranches}
	for _, gid := range x.GroupIDs {
		if g, ok := c.Groups[gid]; ok {
			out.Groups = append(out.Groups, r.Group(&g))
		}
	}
	for _, b := range c.Branches {
		if slices.Contains(x.ProtectedBranchIDs, b.ID) {
			out.ProtectedBranches = append(out.ProtectedBranches, r.ProtectedBranch(b))
		}
	}
	if c.MRRule {
		o := false
		out.SourceRule.Set = true
		if src, ok := c.Sources[x.SourceRuleID]; ok && x.SourceRuleID != 0 {
			out.SourceRule.Rule = &SourceRule{ApprovalsRequired: src.ApprovalsRequired}
			o = overridden(x, src)
		}
		out.Overridden = &o
	}
	return out
}

// ApprovalState is a merge request's approvals (GET …/approvals and the
// answers to approve and unapprove).
type ApprovalState struct {
	ID                             int64        `json:"id"`
	IID                            int64        `json:"iid"`
	ProjectID                      int64        `json:"project_id"`
	Title                          string       `json:"title"`
	Description                    string       `json:"description"`
	State                          string       `json:"state"`
	CreatedAt                      Time         `json:"created_at"`
	UpdatedAt                      Time         `json:"updated_at"`
	MergeStatus                    string       `json:"merge_status"`
	Approved                       bool         `json:"approved"`
	ApprovalsRequired              int          `json:"approvals_required"`
	ApprovalsLeft                  int          `json:"approvals_left"`
	RequirePasswordToApprove       bool         `json:"require_password_to_approve"`
	ApprovedBy                     []ApprovedBy `json:"approved_by"`
	SuggestedApprovers             []UserBasic  `json:"suggested_approvers"`
	Approvers                      []ApprovedBy `json:"approvers"`
	ApproverGroups                 []any        `json:"approver_groups"`
	UserHasApproved                bool         `json:"user_has_approved"`
	UserCanApprove                 bool         `json:"user_can_approve"`
	ApprovalRulesLeft              []RuleRef    `json:"approval_rules_left"`
	HasApprovalRules               bool         `json:"has_approval_rules"`
	MergeRequestApproversAvailable bool         `json:"merge_request_approvers_available"`
	MultipleApprovalRulesAvailable bool         `json:"multiple_approval_rules_available"`
	InvalidApproversRules          []RuleRef    `json:"invalid_approvers_rules"`
}

// ApprovedBy wraps a user.
type ApprovedBy struct {
	User UserBasic `json:"user"`
}

// RuleRef names a rule.
type RuleRef struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	RuleType string `json:"rule_type"`
}

// ApprovalState renders a merge request's approvals.
func (r *Renderer) ApprovalState(v approvals.View) ApprovalState {
	m, st := v.MR, v.State
	out := ApprovalState{ID: m.ID, IID: m.IID, ProjectID: m.TargetProjectID, Title: m.Title, Description: m.Description, State: m.State,
		CreatedAt: Time(m.CreatedAt), UpdatedAt: Time(m.UpdatedAt), MergeStatus: m.MergeStatus, Approved: st.Approved,
		ApprovalsRequired: st.ApprovalsRequired, ApprovalsLeft: st.ApprovalsLeft, RequirePasswordToApprove: v.RequirePassword,
		ApprovedBy: []ApprovedBy{}, SuggestedApprovers: []UserBasic{}, Approvers: []ApprovedBy{}, ApproverGroups: []any{},
		UserHasApproved: v.UserHasApproved, UserCanApprove: v.UserCanApprove, ApprovalRulesLeft: []RuleRef{},
		MergeRequestApproversAvailable: true, MultipleApprovalRulesAvailable: true, InvalidApproversRules: []RuleRef{}}
	for _, id := range st.ApprovedBy {
		if u, ok := v.Users[id]; ok {
			out.ApprovedBy = append(out.ApprovedBy, ApprovedBy{User: r.UserBasic(&u)})
		}
	}
	for _, rule := range st.Rules {
		out.HasApprovalRules = out.HasApprovalRules || rule.RuleType != model.RuleAnyApprover
		if !rule.Approved {
			out.ApprovalRulesLeft = append(out.ApprovalRulesLeft, RuleRef{ID: rule.ID, Name: rule.Name, RuleType: rule.RuleType})
		}
		for _, uid := range rule.Eligible {
			if u, ok := v.Users[uid]; ok && !slices.Contains(st.ApprovedBy, uid) &&
				!slices.ContainsFunc(out.SuggestedApprovers, func(b UserBasic) bool { return b.ID == uid }) {
				out.SuggestedApprovers = append(out.SuggestedApprovers, r.UserBasic(&u))
			}
		}
	}
	return out
}

// ApprovalStateRules is GET …/approval_state.
type ApprovalStateRules struct {
	ApprovalRulesOverwritten bool           `json:"approval_rules_overwritten"`
	Rules                    []ApprovalRule `json:"rules"`
}

// ApprovalStateRules renders the rules of a merge request's state.
func (r *Renderer) ApprovalStateRules(v approvals.View, c RuleContext) ApprovalStateRules {
	out := ApprovalStateRules{ApprovalRulesOverwritten: v.State.Overwritten, Rules: []ApprovalRule{}}
	c.MRRule = true // the state's rules are the merge request's, copied or not
	for _, rs := range v.State.Rules {
		e := r.ApprovalRule(rs.ApprovalRule, c)
		e.EligibleApprovers = []UserBasic{}
		for _, uid := range rs.Eligible {
			if u, ok := v.Users[uid]; ok {
				e.EligibleApprovers = append(e.EligibleApprovers, r.UserBasic(&u))
			}
		}
		e.ApprovedBy = []UserBasic{}
		for _, uid := range rs.ApprovedBy {
			if u, ok := v.Users[uid]; ok {
				e.ApprovedBy = append(e.ApprovedBy, r.UserBasic(&u))
			}
		}
		approved := rs.Approved
		e.Approved = &approved
		out.Rules = append(out.Rules, e)
	}
	return out
}
