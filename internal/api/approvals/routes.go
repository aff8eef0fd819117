// Package approvals serves merge request approvals: a project's approval
// configuration and rules, a merge request's approvals, approval state
// and own rules, approving, unapproving and resetting.
package approvals

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/approvals"
	"quarry/internal/model"
)

// Handlers answer the approvals area.
type Handlers struct {
	ap *approvals.Service
	r  *entity.Renderer
}

// New returns the area.
func New(s *approvals.Service, r *entity.Renderer) *Handlers { return &Handlers{ap: s, r: r} }

// Routes are the area's rows (GitLab's paid tier area, built in here):
// authentication required, but for reading a merge request's approvals,
// which GitLab's merge request approvals API leaves to read_merge_request
// (authenticate_non_get!).
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, public, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.Public, endpoint.ScopeAPI
	const (
		project = "/projects/{id}"
		mr      = project + "/merge_requests/{merge_request_iid}"
	)
	return []endpoint.Route{
		row("GET", project+"/approvals", token, api, parsed, h.settings),
		row("POST", project+"/approvals", token, api, parsed, h.updateSettings),
		row("GET", project+"/approval_rules", token, api, parsed, h.rules),
		row("POST", project+"/approval_rules", token, api, parsed, h.createRule),
		row("GET", project+"/approval_rules/{approval_rule_id}", token, api, parsed, h.rule),
		row("PUT", project+"/approval_rules/{approval_rule_id}", token, api, parsed, h.updateRule),
		row("DELETE", project+"/approval_rules/{approval_rule_id}", token, api, parsed, h.deleteRule),
		row("GET", mr+"/approvals", public, api, parsed, h.state),
		row("POST", mr+"/approvals", token, api, parsed, h.setRequired),
		row("GET", mr+"/approval_state", public, api, parsed, h.approvalState),
		row("GET", mr+"/approval_rules", token, api, parsed, h.mrRules),
		row("POST", mr+"/approval_rules", token, api, parsed, h.createMRRule),
		row("PUT", mr+"/approval_rules/{approval_rule_id}", token, api, parsed, h.updateMRRule),
		row("DELETE", mr+"/approval_rules/{approval_rule_id}", token, api, parsed, h.deleteMRRule),
		row("POST", mr+"/approve", token, api, parsed, h.approve),
		row("POST", mr+"/unapprove", token, api, parsed, h.unapprove),
		row("PUT", mr+"/reset_approvals", token, api, parsed, h.reset),
	}
}

func (h *Handlers) settings(c *endpoint.Call) error {
	st, err := h.ap.Settings(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ApprovalSettings(st))
}

func (h *Handlers) updateSettings(c *endpoint.Call) error {
	p := c.P
	in := approvals.SettingsInput{ApprovalsBeforeMerge: p.IntPtr("approvals_before_merge"), ResetApprovalsOnPush: p.BoolPtr("reset_approvals_on_push"),
		SelectiveCodeOwnerRemovals: p.BoolPtr("selective_code_owner_removals"),
		DisableOverridingApprovers: p.BoolPtr("disable_overriding_approvers_per_merge_request"),
		AuthorApproval:             p.BoolPtr("merge_requests_author_approval"),
		DisableCommittersApproval:  p.BoolPtr("merge_requests_disable_committers_approval"),
		RequirePassword:            p.BoolPtr("require_password_to_approve")}
	if err := p.Err(); err != nil {
		return err
	}
	st, err := h.ap.UpdateSettings(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ApprovalSettings(st))
}

// ids reads a set of ids; nil when absent.
func ids(c *endpoint.Call, key string) *[]int64 {
	if v, ok := c.P.IDs(key); ok {
		return &v
	}
	return nil
}

// ruleInput reads a rule's parameters; create requires name and
// approvals_required.
func ruleInput(c *endpoint.Call, create bool) approvals.RuleInput {
	p := c.P
	if create {
		p.Require("name", "approvals_required")
	}
	in := approvals.RuleInput{Name: p.StringPtr("name"), ApprovalsRequired: p.IntPtr("approvals_required"),
		UserIDs: ids(c, "user_ids"), GroupIDs: ids(c, "group_ids"), ProtectedBranchIDs: ids(c, "protected_branch_ids"),
		AppliesToAllProtectedBranches: p.BoolPtr("applies_to_all_protected_branches")}
	if v, ok := p.Enum("rule_type", model.RuleAnyApprover, model.RuleRegular); ok {
		in.RuleType = &v
	}
	if n, ok := p.Int("approval_project_rule_id"); ok {
		in.ApprovalProjectRuleID = n
	}
	return in
}

func (h *Handlers) ruleContext(rel approvals.Related, mr bool) entity.RuleContext {
	return entity.RuleContext{Users: rel.Users, Groups: rel.Groups, Branches: rel.Branches, Members: rel.Members, Sources: rel.Sources,
		MRRule: mr}
}

func (h *Handlers) renderRules(c *endpoint.Call, p model.Project, rules []model.ApprovalRule, mr bool) ([]entity.ApprovalRule, error) {
	rel, err := h.ap.RelatedOf(c.Ctx(), p, rules)
	if err != nil {
		return nil, err
	}
	out := make([]entity.ApprovalRule, len(rules))
	for i, r := range rules {
		out[i] = h.r.ApprovalRule(r, h.ruleContext(rel, mr))
	}
	return out, nil
}

func (h *Handlers) rules(c *endpoint.Call) error {
	p, rules, err := h.ap.Rules(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, p, rules, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func ruleID(c *endpoint.Call) (int64, error) { return c.PathID("approval_rule_id") }

func (h *Handlers) rule(c *endpoint.Call) error {
	id, err := ruleID(c)
	if err != nil {
		return err
	}
	p, r, err := h.ap.Rule(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, p, []model.ApprovalRule{r}, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

func (h *Handlers) createRule(c *endpoint.Call) error {
	in := ruleInput(c, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	p, r, err := h.ap.CreateRule(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, p, []model.ApprovalRule{r}, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out[0])
}

func (h *Handlers) updateRule(c *endpoint.Call) error {
	id, err := ruleID(c)
	if err != nil {
		return err
	}
	in := ruleInput(c, false)
	if err := c.P.Err(); err != nil {
		return err
	}
	p, r, err := h.ap.UpdateRule(c.Ctx(), c.Actor, c.Path("id"), id, in)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, p, []model.ApprovalRule{r}, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

func (h *Handlers) deleteRule(c *endpoint.Call) error {
	id, err := ruleID(c)
	if err != nil {
		return err
	}
	if err := h.ap.DeleteRule(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func mrIID(c *endpoint.Call) (int64, error) { return c.PathID("merge_request_iid") }

func (h *Handlers) state(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	v, err := h.ap.State(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ApprovalState(v))
}

func (h *Handlers) setRequired(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	c.P.Require("approvals_required")
	n, _ := c.P.Int("approvals_required")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ap.SetApprovalsRequired(c.Ctx(), c.Actor, c.Path("id"), iid, int(min(n, 1<<20)))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ApprovalState(v))
}

func (h *Handlers) approvalState(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	v, err := h.ap.State(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	var rules []model.ApprovalRule
	for _, r := range v.State.Rules {
		rules = append(rules, r.ApprovalRule)
	}
	rel, err := h.ap.RelatedOf(c.Ctx(), v.Project, rules)
	if err != nil {
		return err
	}
	for id, u := range v.Users {
		rel.Users[id] = u
	}
	return c.JSON(http.StatusOK, h.r.ApprovalStateRules(v, h.ruleContext(rel, true)))
}

func (h *Handlers) mrRules(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	v, rules, err := h.ap.MRRules(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, v.Project, rules, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) createMRRule(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	in := ruleInput(c, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, r, err := h.ap.CreateMRRule(c.Ctx(), c.Actor, c.Path("id"), iid, in)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, v.Project, []model.ApprovalRule{r}, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out[0])
}

func (h *Handlers) updateMRRule(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	id, err := ruleID(c)
	if err != nil {
		return err
	}
	in := ruleInput(c, false)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, r, err := h.ap.UpdateMRRule(c.Ctx(), c.Actor, c.Path("id"), iid, id, in)
	if err != nil {
		return err
	}
	out, err := h.renderRules(c, v.Project, []model.ApprovalRule{r}, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

func (h *Handlers) deleteMRRule(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	id, err := ruleID(c)
	if err != nil {
		return err
	}
	if err := h.ap.DeleteMRRule(c.Ctx(), c.Actor, c.Path("id"), iid, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) approve(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	v, err := h.ap.Approve(c.Ctx(), c.Actor, c.Path("id"), iid, c.P.Value("sha"), c.P.Value("approval_password"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ApprovalState(v))
}

func (h *Handlers) unapprove(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	v, err := h.ap.Unapprove(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ApprovalState(v))
}

func (h *Handlers) reset(c *endpoint.Call) error {
	iid, err := mrIID(c)
	if err != nil {
		return err
	}
	if err := h.ap.ResetApprovals(c.Ctx(), c.Actor, c.Path("id"), iid); err != nil {
		return err
	}
	return c.Accepted()
}
