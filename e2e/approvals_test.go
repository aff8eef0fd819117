package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"quarry/internal/apitest"
)

// Merge request approvals end to end (reference §4.2–4.4): a project's
// configuration and rules, a merge request's own rules and approval
// state, approving and unapproving, merging once approved, and pushes to
// the source branch resetting approvals; with real repositories written
// through the API.

// Access levels.
const (
	apReporter   = 20
	apDeveloper  = 30
	apMaintainer = 40
)

// apUser is a user as approvals show one.
type apUser struct {
	ID       int64   `json:"id"`
	Username string  `json:"username"`
	Name     string  `json:"name"`
	State    string  `json:"state"`
	Avatar   *string `json:"avatar_url"`
	WebURL   string  `json:"web_url"`
}

// apRuleRef names a rule (approval_rules_left).
type apRuleRef struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	RuleType string `json:"rule_type"`
}

// apRule is an approval rule: a project's, a merge request's, or one of
// an approval state.
type apRule struct {
	ID                int64    `json:"id"`
	Name              string   `json:"name"`
	RuleType          string   `json:"rule_type"`
	EligibleApprovers []apUser `json:"eligible_approvers"`
	ApprovalsRequired int      `json:"approvals_required"`
	Users             []apUser `json:"users"`
	Groups            []struct {
		ID       int64  `json:"id"`
		FullPath string `json:"full_path"`
	} `json:"groups"`
	ContainsHiddenGroups bool `json:"contains_hidden_groups"`
	ProtectedBranches    []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"protected_branches"`
	AppliesToAllProtectedBranches bool `json:"applies_to_all_protected_branches"`
	SourceRule                    *struct {
		ApprovalsRequired int `json:"approvals_required"`
	} `json:"source_rule"`
	Overridden *bool    `json:"overridden"`
	ApprovedBy []apUser `json:"approved_by"`
	Approved   *bool    `json:"approved"`
}

// apState is a merge request's approvals (GET …/approvals, approve,
// unapprove).
type apState struct {
	ID                       int64  `json:"id"`
	IID                      int64  `json:"iid"`
	ProjectID                int64  `json:"project_id"`
	Title                    string `json:"title"`
	Description              string `json:"description"`
	State                    string `json:"state"`
	CreatedAt                string `json:"created_at"`
	UpdatedAt                string `json:"updated_at"`
	MergeStatus              string `json:"merge_status"`
	Approved                 bool   `json:"approved"`
	ApprovalsRequired        int    `json:"approvals_required"`
	ApprovalsLeft            int    `json:"approvals_left"`
	RequirePasswordToApprove bool   `json:"require_password_to_approve"`
	ApprovedBy               []struct {
		User apUser `json:"user"`
	} `json:"approved_by"`
	SuggestedApprovers []apUser `json:"suggested_approvers"`
	Approvers          []struct {
		User apUser `json:"user"`
	} `json:"approvers"`
	ApproverGroups                 []any       `json:"approver_groups"`
	UserHasApproved                bool        `json:"user_has_approved"`
	UserCanApprove                 bool        `json:"user_can_approve"`
	ApprovalRulesLeft              []apRuleRef `json:"approval_rules_left"`
	HasApprovalRules               bool        `json:"has_approval_rules"`
	MergeRequestApproversAvailable bool        `json:"merge_request_approvers_available"`
	MultipleApprovalRulesAvailable bool        `json:"multiple_approval_rules_available"`
	InvalidApproversRules          []apRuleRef `json:"invalid_approvers_rules"`
}

// approvers are the ids of approved_by, in order.
func (st apState) approvers() []int64 {
	out := []int64{}
	for _, a := range st.ApprovedBy {
		out = append(out, a.User.ID)
	}
	return out
}

// apStateRules is GET …/approval_state.
type apStateRules struct {
	Overwritten bool     `json:"approval_rules_overwritten"`
	Rules       []apRule `json:"rules"`
}

// The keys of each shape, exactly.
var (
	apStateKeys = []string{"id", "iid", "project_id", "title", "description", "state", "created_at", "updated_at", "merge_status",
		"approved", "approvals_required", "approvals_left", "require_password_to_approve", "approved_by", "suggested_approvers",
		"approvers", "approver_groups", "user_has_approved", "user_can_approve", "approval_rules_left", "has_approval_rules",
		"merge_request_approvers_available", "multiple_approval_rules_available", "invalid_approvers_rules"}
	apProjectRuleKeys = []string{"id", "name", "rule_type", "eligible_approvers", "approvals_required", "users", "groups",
		"contains_hidden_groups", "protected_branches", "applies_to_all_protected_branches"}
	apMRRuleKeys    = append(slices.Clone(apProjectRuleKeys), "source_rule", "overridden")
	apStateRuleKeys = append(slices.Clone(apMRRuleKeys), "approved_by", "approved")
)

// apKeys fails unless obj has exactly the keys want.
func apKeys(t *testing.T, what string, obj map[string]json.RawMessage, want []string) {
	t.Helper()
	got := make([]string, 0, len(obj))
	for k := range obj {
		got = append(got, k)
	}
	slices.Sort(got)
	w := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, w) {
		t.Fatalf("%s keys %v; want %v", what, got, w)
	}
}

// apDecode checks a JSON object's keys and decodes it into v (a field of
// another type fails the decoding).
func apDecode(t *testing.T, what string, body []byte, keys []string, v any) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("%s: decode %s: %v", what, body, err)
	}
	apKeys(t, what, obj, keys)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: decode %s: %v", what, body, err)
	}
}

// apRuleOf decodes a rule answer, checking its keys.
func apRuleOf(t *testing.T, r *apitest.Response, keys []string) apRule {
	t.Helper()
	var out apRule
	apDecode(t, "rule", r.Body, keys, &out)
	return out
}

// apRulesOf decodes a list of rules, checking each one's keys.
func apRulesOf(t *testing.T, body []byte, keys []string) []apRule {
	t.Helper()
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	out := []apRule{}
	for i, b := range raw {
		var r apRule
		apDecode(t, fmt.Sprintf("rule %d", i), b, keys, &r)
		out = append(out, r)
	}
	return out
}

// apStateOf decodes an approvals answer, checking its keys.
func apStateOf(t *testing.T, r *apitest.Response) apState {
	t.Helper()
	var st apState
	apDecode(t, "approvals", r.Body, apStateKeys, &st)
	return st
}

// apBool shows an optional boolean.
func apBool(b *bool) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprint(*b)
}

// apIDs are the sorted ids of users.
func apIDs(users []apUser) []int64 {
	out := []int64{}
	for _, u := range users {
		out = append(out, u.ID)
	}
	slices.Sort(out)
	return out
}

// apSet is ids sorted.
func apSet(ids ...int64) []int64 {
	out := append([]int64{}, ids...)
	slices.Sort(out)
	return out
}

// apWant fails unless got equals want.
func apWant(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v; want %v", what, got, want)
	}
}

// apProject makes a private project with a README, owned by owner.
func apProject(t *testing.T, s *apitest.Server, owner apitest.User, name string) ciProject {
	t.Helper()
	var p struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/projects", Token: owner.Token, JSON: map[string]any{"name": name,
		"visibility": "private", "initialize_with_readme": true}}).Want(t, http.StatusCreated).JSON(t, &p)
	return ciProject{s: s, ID: p.ID, Path: p.PathWithNamespace, Token: owner.Token}
}

// apMember adds users to p at an access level.
func apMember(t *testing.T, p ciProject, level int, users ...apitest.User) {
	t.Helper()
	for _, u := range users {
		p.s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/members", p.ID), Token: p.Token,
			JSON: map[string]any{"user_id": u.ID, "access_level": level}}).Want(t, http.StatusCreated)
	}
}

// apGroup makes a private group as creator (its owner, so a member) with
// more members as developers, and gives its id.
func apGroup(t *testing.T, s *apitest.Server, creator apitest.User, path string, members ...apitest.User) int64 {
	t.Helper()
	var g struct {
		ID int64 `json:"id"`
	}
	s.Do(t, apitest.Request{Method: "POST", Path: "/groups", Token: creator.Token, JSON: map[string]any{"name": path, "path": path,
		"visibility": "private"}}).Want(t, http.StatusCreated).JSON(t, &g)
	for _, u := range members {
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/groups/%d/members", g.ID), Token: creator.Token,
			JSON: map[string]any{"user_id": u.ID, "access_level": apDeveloper}}).Want(t, http.StatusCreated)
	}
	return g.ID
}

// apDo sends a request about p (suffix follows /projects/:id); body nil
// sends none.
func apDo(t *testing.T, p ciProject, method, token, suffix string, body map[string]any) *apitest.Response {
	t.Helper()
	r := apitest.Request{Method: method, Path: fmt.Sprintf("/projects/%d%s", p.ID, suffix), Token: token}
	if body != nil {
		r.JSON = body
	}
	return p.s.Do(t, r)
}

// apMRDo sends a request about merge request iid of p.
func apMRDo(t *testing.T, p ciProject, method, token string, iid int64, suffix string, body map[string]any) *apitest.Response {
	t.Helper()
	return apDo(t, p, method, token, fmt.Sprintf("/merge_requests/%d%s", iid, suffix), body)
}

// apOpen commits a file on a new branch and opens a merge request from it
// into main as p's owner.
func apOpen(t *testing.T, p ciProject, branch string) mrJSON {
	t.Helper()
	head := p.commit(t, branch, map[string]string{branch + ".txt": "change on " + branch + "\n"})
	var mr mrJSON
	apDo(t, p, "POST", p.Token, "/merge_requests", map[string]any{"source_branch": branch, "target_branch": "main",
		"title": "Change " + branch}).Want(t, http.StatusCreated).JSON(t, &mr)
	if mr.SHA != head {
		t.Fatalf("merge request sha %s; want %s", mr.SHA, head)
	}
	return mr
}

// apApprovals reads a merge request's approvals as token's user.
func apApprovals(t *testing.T, p ciProject, token string, iid int64) apState {
	t.Helper()
	return apStateOf(t, apMRDo(t, p, "GET", token, iid, "/approvals", nil).Want(t, http.StatusOK))
}

// apApprove approves as token's user and wants a 201.
func apApprove(t *testing.T, p ciProject, token string, iid int64, body map[string]any) apState {
	t.Helper()
	return apStateOf(t, apMRDo(t, p, "POST", token, iid, "/approve", body).Want(t, http.StatusCreated))
}

// apApprovalState reads GET …/approval_state, checking every rule's keys.
func apApprovalState(t *testing.T, p ciProject, token string, iid int64) apStateRules {
	t.Helper()
	r := apMRDo(t, p, "GET", token, iid, "/approval_state", nil).Want(t, http.StatusOK)
	var obj map[string]json.RawMessage
	r.JSON(t, &obj)
	apKeys(t, "approval_state", obj, []string{"approval_rules_overwritten", "rules"})
	var out apStateRules
	if err := json.Unmarshal(obj["approval_rules_overwritten"], &out.Overwritten); err != nil {
		t.Fatalf("approval_rules_overwritten %s: %v", obj["approval_rules_overwritten"], err)
	}
	out.Rules = apRulesOf(t, obj["rules"], apStateRuleKeys)
	return out
}

// apSettings changes the project's approval configuration as its owner.
func apSettings(t *testing.T, p ciProject, body map[string]any) {
	t.Helper()
	apDo(t, p, "POST", p.Token, "/approvals", body).Want(t, http.StatusCreated)
}

// apCreateRule makes a project rule as the owner.
func apCreateRule(t *testing.T, p ciProject, body map[string]any) apRule {
	t.Helper()
	return apRuleOf(t, apDo(t, p, "POST", p.Token, "/approval_rules", body).Want(t, http.StatusCreated), apProjectRuleKeys)
}

const (
	ap401 = `{"message":"401 Unauthorized"}`
	ap403 = `{"message":"403 Forbidden"}`
)

// TestApprovals_projectConfiguration: GET/POST /projects/:id/approvals
// with GitLab's fields, types and defaults; who may read and change it;
// bad values; the deprecated approvals_before_merge making every merge
// request need that many approvals; a public project read by anyone.
func TestApprovals_projectConfiguration(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, maint, dev, stranger := s.NewUser(t, "apcowner"), s.NewUser(t, "apcmaint"), s.NewUser(t, "apcdev"), s.NewUser(t, "apcstranger")
		p := apProject(t, s, owner, "config")
		apMember(t, p, apMaintainer, maint)
		apMember(t, p, apDeveloper, dev)
		body := func(before int, reset, selective, noOverride, author, noCommitters, password bool) string {
			return fmt.Sprintf(`{"approvers":[],"approver_groups":[],"approvals_before_merge":%d,"reset_approvals_on_push":%t,`+
				`"selective_code_owner_removals":%t,"disable_overriding_approvers_per_merge_request":%t,"merge_requests_author_approval":%t,`+
				`"merge_requests_disable_committers_approval":%t,"require_password_to_approve":%t}`,
				before, reset, selective, noOverride, author, noCommitters, password)
		}
		defaults := body(0, true, false, false, false, false, false)
		for _, u := range []apitest.User{owner, maint, dev} {
			apDo(t, p, "GET", u.Token, "/approvals", nil).Want(t, http.StatusOK).WantBody(t, defaults)
		}
		s.Get(t, "/projects/"+url.PathEscape(p.Path)+"/approvals", dev.Token).Want(t, http.StatusOK).WantBody(t, defaults)
		apDo(t, p, "GET", stranger.Token, "/approvals", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		apDo(t, p, "GET", "", "/approvals", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)

		all := map[string]any{"approvals_before_merge": 2, "reset_approvals_on_push": false, "selective_code_owner_removals": true,
			"disable_overriding_approvers_per_merge_request": true, "merge_requests_author_approval": true,
			"merge_requests_disable_committers_approval": true, "require_password_to_approve": true}
		apDo(t, p, "POST", dev.Token, "/approvals", all).Want(t, http.StatusForbidden).WantBody(t, ap403)
		apDo(t, p, "POST", stranger.Token, "/approvals", all).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		apDo(t, p, "POST", "", "/approvals", all).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		apDo(t, p, "GET", owner.Token, "/approvals", nil).Want(t, http.StatusOK).WantBody(t, defaults)

		changed := body(2, false, true, true, true, true, true)
		apDo(t, p, "POST", maint.Token, "/approvals", all).Want(t, http.StatusCreated).WantBody(t, changed)
		apDo(t, p, "GET", dev.Token, "/approvals", nil).Want(t, http.StatusOK).WantBody(t, changed)
		// Only what is given changes; selective code owner removals only
		// hold while approvals are not reset on push.
		apDo(t, p, "POST", owner.Token, "/approvals", map[string]any{"reset_approvals_on_push": true}).Want(t, http.StatusCreated).
			WantBody(t, body(2, true, false, true, true, true, true))
		// Form bodies and Grape's booleans work too.
		s.Do(t, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/approvals", p.ID), Token: owner.Token,
			Form: url.Values{"approvals_before_merge": {"1"}, "disable_overriding_approvers_per_merge_request": {"false"},
				"merge_requests_author_approval": {"0"}, "merge_requests_disable_committers_approval": {"no"},
				"require_password_to_approve": {"f"}}}).Want(t, http.StatusCreated).WantBody(t, body(1, true, false, false, false, false, false))

		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"approvals_before_merge": -1}, `{"message":{"approvals_before_merge":["must be greater than or equal to 0"]}}`},
			{map[string]any{"approvals_before_merge": "many"}, `{"error":"approvals_before_merge is invalid"}`},
			{map[string]any{"reset_approvals_on_push": "maybe"}, `{"error":"reset_approvals_on_push is invalid"}`},
		} {
			apDo(t, p, "POST", owner.Token, "/approvals", c.body).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		apDo(t, p, "GET", owner.Token, "/approvals", nil).Want(t, http.StatusOK).WantBody(t, body(1, true, false, false, false, false, false))

		// approvals_before_merge: one approval from anyone, until a project
		// any_approver rule says otherwise.
		mr := apOpen(t, p, "feature")
		st := apApprovals(t, p, dev.Token, mr.IID)
		if st.ApprovalsRequired != 1 || st.ApprovalsLeft != 1 || st.Approved || !st.UserCanApprove {
			t.Errorf("with approvals_before_merge 1: %+v", st)
		}
		apCreateRule(t, p, map[string]any{"name": "Anyone", "approvals_required": 0})
		if st := apApprovals(t, p, dev.Token, mr.IID); st.ApprovalsRequired != 0 || st.ApprovalsLeft != 0 || !st.Approved {
			t.Errorf("with an any_approver rule of 0: %+v", st)
		}

		// A public project: anyone signed in reads the configuration and the
		// approvals, but changes nothing and approves nothing.
		apDo(t, p, "PUT", owner.Token, "", map[string]any{"visibility": "public"}).Want(t, http.StatusOK)
		apDo(t, p, "GET", stranger.Token, "/approvals", nil).Want(t, http.StatusOK).WantBody(t, body(1, true, false, false, false, false, false))
		apDo(t, p, "POST", stranger.Token, "/approvals", all).Want(t, http.StatusForbidden).WantBody(t, ap403)
		apDo(t, p, "GET", "", "/approvals", nil).Want(t, http.StatusUnauthorized)
		if st := apApprovals(t, p, stranger.Token, mr.IID); st.UserCanApprove {
			t.Errorf("a stranger can approve: %+v", st)
		}
		// (Who may not edit the merge request and approves for no rule may
		// not approve at all: 403, as GitLab's approve_merge_request.)
		apMRDo(t, p, "POST", stranger.Token, mr.IID, "/approve", nil).Want(t, http.StatusForbidden).WantBody(t, ap403)
		apMRDo(t, p, "PUT", stranger.Token, mr.IID, "/reset_approvals", nil).Want(t, http.StatusUnauthorized)
		apMRDo(t, p, "POST", stranger.Token, mr.IID, "/approval_rules", map[string]any{"name": "S", "approvals_required": 1}).
			Want(t, http.StatusForbidden)
	})
}

// TestApprovals_projectRules: a project's rules: any_approver without
// users or groups (one per project), regular with users and groups whose
// members become eligible approvers, protected branches, names unique,
// PUT replacing users and groups, 404 for unknown rules, maintainers only.
func TestApprovals_projectRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, stranger := s.NewUser(t, "aprowner"), s.NewUser(t, "aprdev"), s.NewUser(t, "aprstranger")
		u1, u2, gm := s.NewUser(t, "apru1"), s.NewUser(t, "apru2"), s.NewUser(t, "aprgm")
		p := apProject(t, s, owner, "rules")
		apMember(t, p, apDeveloper, dev, u1, u2)
		g := apGroup(t, s, owner, "aprgroup", gm)
		var branches []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		apDo(t, p, "GET", owner.Token, "/protected_branches", nil).Want(t, http.StatusOK).JSON(t, &branches)
		if len(branches) != 1 || branches[0].Name != "main" {
			t.Fatalf("protected branches %+v", branches)
		}
		mainID := branches[0].ID

		apDo(t, p, "GET", dev.Token, "/approval_rules", nil).Want(t, http.StatusOK).WantBody(t, `[]`)
		apDo(t, p, "GET", stranger.Token, "/approval_rules", nil).Want(t, http.StatusNotFound)
		apDo(t, p, "GET", "", "/approval_rules", nil).Want(t, http.StatusUnauthorized)

		anyone := apCreateRule(t, p, map[string]any{"name": "All Members", "approvals_required": 1})
		if anyone.RuleType != "any_approver" || anyone.Name != "All Members" || anyone.ApprovalsRequired != 1 || len(anyone.Users) != 0 ||
			len(anyone.Groups) != 0 || len(anyone.EligibleApprovers) != 0 || len(anyone.ProtectedBranches) != 0 ||
			anyone.ContainsHiddenGroups || anyone.AppliesToAllProtectedBranches || anyone.ID == 0 {
			t.Errorf("any_approver rule %+v", anyone)
		}
		// One any_approver rule per project, given or implied.
		for _, b := range []map[string]any{
			{"name": "Everyone", "approvals_required": 0},
			{"name": "Everyone", "approvals_required": 0, "rule_type": "any_approver"},
		} {
			apDo(t, p, "POST", owner.Token, "/approval_rules", b).Want(t, http.StatusBadRequest).
				WantBody(t, `{"message":{"rule_type":["any-approver for the project already exists"]}}`)
		}

		backend := apCreateRule(t, p, map[string]any{"name": "Backend", "approvals_required": 2, "user_ids": []int64{u1.ID, u2.ID},
			"group_ids": []int64{g}})
		if backend.RuleType != "regular" || backend.ApprovalsRequired != 2 || len(backend.Groups) != 1 || backend.Groups[0].ID != g ||
			backend.Groups[0].FullPath != "aprgroup" {
			t.Errorf("regular rule %+v", backend)
		}
		apWant(t, "backend users", apIDs(backend.Users), apSet(u1.ID, u2.ID))
		apWant(t, "backend eligible approvers", apIDs(backend.EligibleApprovers), apSet(u1.ID, u2.ID, owner.ID, gm.ID))
		apDo(t, p, "POST", owner.Token, "/approval_rules", map[string]any{"name": "Backend", "approvals_required": 1, "user_ids": []int64{u1.ID}}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"name":["has already been taken"]}}`)

		// A regular rule scoped to a protected branch; unknown branches are
		// refused.
		scoped := apCreateRule(t, p, map[string]any{"name": "Release", "approvals_required": 1, "rule_type": "regular",
			"user_ids": []int64{u2.ID}, "protected_branch_ids": []int64{mainID}})
		if len(scoped.ProtectedBranches) != 1 || scoped.ProtectedBranches[0].ID != mainID || scoped.ProtectedBranches[0].Name != "main" ||
			scoped.RuleType != "regular" {
			t.Errorf("scoped rule %+v", scoped)
		}
		apDo(t, p, "POST", owner.Token, "/approval_rules", map[string]any{"name": "Nowhere", "approvals_required": 1,
			"user_ids": []int64{u1.ID}, "protected_branch_ids": []int64{s.AbsentID(t)}}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"message":{"protected_branch_ids":["must belong to the project"]}}`)

		for _, c := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"approvals_required": 1}, `{"error":"name is missing"}`},
			{map[string]any{"name": "X"}, `{"error":"approvals_required is missing"}`},
			{map[string]any{"name": "X", "approvals_required": -1}, `{"message":{"approvals_required":["must be greater than or equal to 0"]}}`},
			{map[string]any{"name": "X", "approvals_required": 1, "rule_type": "code_owner"}, `{"error":"rule_type does not have a valid value"}`},
			{map[string]any{"name": "X", "approvals_required": 1, "user_ids": []string{"one"}}, `{"error":"user_ids is invalid"}`},
			{map[string]any{"name": " ", "approvals_required": 1}, `{"message":{"name":["can't be blank"]}}`},
		} {
			apDo(t, p, "POST", owner.Token, "/approval_rules", c.body).Want(t, http.StatusBadRequest).WantBody(t, c.want)
		}
		apDo(t, p, "POST", dev.Token, "/approval_rules", map[string]any{"name": "Dev", "approvals_required": 1}).
			Want(t, http.StatusForbidden).WantBody(t, ap403)
		apDo(t, p, "POST", stranger.Token, "/approval_rules", map[string]any{"name": "Dev", "approvals_required": 1}).
			Want(t, http.StatusNotFound)

		list := apRulesOf(t, apDo(t, p, "GET", dev.Token, "/approval_rules", nil).Want(t, http.StatusOK).Body, apProjectRuleKeys)
		if len(list) != 3 || list[0].ID != anyone.ID || list[1].ID != backend.ID || list[2].ID != scoped.ID {
			t.Fatalf("rules %+v", list)
		}
		apWant(t, "listed eligible approvers", apIDs(list[1].EligibleApprovers), apSet(u1.ID, u2.ID, owner.ID, gm.ID))
		one := apRuleOf(t, apDo(t, p, "GET", dev.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusOK), apProjectRuleKeys)
		if one.Name != "Backend" || one.ApprovalsRequired != 2 || len(one.Groups) != 1 {
			t.Errorf("GET rule %+v", one)
		}
		absent := fmt.Sprintf("/approval_rules/%d", s.AbsentID(t))
		apDo(t, p, "GET", dev.Token, absent, nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Rule Not Found"}`)

		// PUT: unlisted users and groups are removed.
		upd := apRuleOf(t, apDo(t, p, "PUT", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID),
			map[string]any{"name": "Server", "approvals_required": 1, "user_ids": []int64{u1.ID}}).Want(t, http.StatusOK), apProjectRuleKeys)
		if upd.Name != "Server" || upd.ApprovalsRequired != 1 || len(upd.Groups) != 0 || upd.RuleType != "regular" {
			t.Errorf("updated rule %+v", upd)
		}
		apWant(t, "updated users", apIDs(upd.Users), apSet(u1.ID))
		apWant(t, "updated eligible approvers", apIDs(upd.EligibleApprovers), apSet(u1.ID))
		again := apRuleOf(t, apDo(t, p, "GET", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusOK), apProjectRuleKeys)
		apWant(t, "read back users", apIDs(again.Users), apSet(u1.ID))
		if again.Name != "Server" || len(again.Groups) != 0 {
			t.Errorf("read back %+v", again)
		}
		apDo(t, p, "PUT", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), map[string]any{"name": "Release", "approvals_required": 1}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"name":["has already been taken"]}}`)
		apDo(t, p, "PUT", owner.Token, fmt.Sprintf("/approval_rules/%d", scoped.ID), map[string]any{"name": "Release", "approvals_required": 1,
			"protected_branch_ids": []int64{s.AbsentID(t)}}).Want(t, http.StatusBadRequest)
		apDo(t, p, "PUT", owner.Token, absent, map[string]any{"name": "Gone", "approvals_required": 1}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Rule Not Found"}`)
		apDo(t, p, "PUT", dev.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), map[string]any{"name": "Mine", "approvals_required": 0}).
			Want(t, http.StatusForbidden)

		apDo(t, p, "DELETE", dev.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusForbidden)
		apDo(t, p, "DELETE", stranger.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNotFound)
		apDo(t, p, "DELETE", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNoContent)
		apDo(t, p, "GET", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNotFound)
		apDo(t, p, "DELETE", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Rule Not Found"}`)
		// A rule of another project is not found through this one.
		other := apProject(t, s, owner, "other")
		apDo(t, other, "GET", owner.Token, fmt.Sprintf("/approval_rules/%d", scoped.ID), nil).Want(t, http.StatusNotFound)
		apDo(t, other, "DELETE", owner.Token, fmt.Sprintf("/approval_rules/%d", scoped.ID), nil).Want(t, http.StatusNotFound)
		if list := apRulesOf(t, apDo(t, p, "GET", owner.Token, "/approval_rules", nil).Want(t, http.StatusOK).Body, apProjectRuleKeys); len(list) != 2 {
			t.Errorf("rules after delete %+v", list)
		}

		// A rule scoped to a protected branch applies to merge requests
		// into it only; elsewhere the any_approver rule does.
		toMain := apOpen(t, p, "feature")
		if as := apApprovalState(t, p, owner.Token, toMain.IID); len(as.Rules) != 1 || as.Rules[0].ID != scoped.ID {
			t.Errorf("approval state into main %+v", as)
		}
		p.commit(t, "develop", map[string]string{"develop.txt": "develop\n"})
		p.commit(t, "topic", map[string]string{"topic.txt": "topic\n"})
		var toDevelop mrJSON
		apDo(t, p, "POST", owner.Token, "/merge_requests", map[string]any{"source_branch": "topic", "target_branch": "develop",
			"title": "Into develop"}).Want(t, http.StatusCreated).JSON(t, &toDevelop)
		as := apApprovalState(t, p, owner.Token, toDevelop.IID)
		if len(as.Rules) != 1 || as.Rules[0].ID != anyone.ID || as.Rules[0].RuleType != "any_approver" {
			t.Errorf("approval state into develop %+v", as)
		}
		if st := apApprovals(t, p, owner.Token, toDevelop.IID); st.ApprovalsRequired != 1 || st.Approved {
			t.Errorf("approvals into develop %+v", st)
		}
	})
}

// TestApprovals_mergeRequestRules: a merge request's approval state
// follows the project's rules until the merge request has a rule of its
// own with approvers (approval_rules_overwritten); its own rules copy a
// project rule or name users and groups; PUT replaces users and groups;
// the deprecated POST …/approvals; overriding disabled by the project.
func TestApprovals_mergeRequestRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, u1, u2, rep, gm := s.NewUser(t, "apmowner"), s.NewUser(t, "apmu1"), s.NewUser(t, "apmu2"), s.NewUser(t, "apmrep"), s.NewUser(t, "apmgm")
		p := apProject(t, s, owner, "mrrules")
		apMember(t, p, apDeveloper, u1, u2)
		apMember(t, p, apReporter, rep, gm)
		g := apGroup(t, s, owner, "apmgroup", gm)
		backend := apCreateRule(t, p, map[string]any{"name": "Backend", "approvals_required": 1, "user_ids": []int64{u1.ID}})
		mr := apOpen(t, p, "feature")

		apMRDo(t, p, "GET", u1.Token, mr.IID, "/approval_rules", nil).Want(t, http.StatusOK).WantBody(t, `[]`)
		as := apApprovalState(t, p, u1.Token, mr.IID)
		if as.Overwritten || len(as.Rules) != 1 || as.Rules[0].ID != backend.ID || as.Rules[0].Name != "Backend" ||
			as.Rules[0].Approved == nil || *as.Rules[0].Approved || len(as.Rules[0].ApprovedBy) != 0 {
			t.Fatalf("approval state from the project %+v", as)
		}
		apWant(t, "state eligible approvers", apIDs(as.Rules[0].EligibleApprovers), apSet(u1.ID))

		// A copy of the project rule: its name, users and groups, the
		// approvals given.
		cp := apRuleOf(t, apMRDo(t, p, "POST", u2.Token, mr.IID, "/approval_rules", map[string]any{"name": "Ignored", "approvals_required": 2,
			"approval_project_rule_id": backend.ID}).Want(t, http.StatusCreated), apMRRuleKeys)
		if cp.Name != "Backend" || cp.RuleType != "regular" || cp.ApprovalsRequired != 2 || len(cp.Groups) != 0 || cp.ID == backend.ID {
			t.Errorf("copied rule %+v", cp)
		}
		if cp.SourceRule == nil || cp.SourceRule.ApprovalsRequired != 1 {
			t.Errorf("copied rule's source_rule %+v; want approvals_required 1", cp.SourceRule)
		}
		if cp.Overridden == nil || !*cp.Overridden {
			t.Errorf("copied rule with other approvals: overridden %s; want true", apBool(cp.Overridden))
		}
		apWant(t, "copied users", apIDs(cp.Users), apSet(u1.ID))
		as = apApprovalState(t, p, u1.Token, mr.IID)
		if !as.Overwritten || len(as.Rules) != 1 || as.Rules[0].ID != cp.ID || as.Rules[0].ApprovalsRequired != 2 {
			t.Fatalf("approval state with a merge request rule %+v", as)
		}
		if st := apApprovals(t, p, u1.Token, mr.IID); st.ApprovalsRequired != 2 || st.ApprovalsLeft != 2 || st.Approved ||
			!slices.Equal(st.ApprovalRulesLeft, []apRuleRef{{cp.ID, "Backend", "regular"}}) || !st.HasApprovalRules {
			t.Errorf("approvals with the copy %+v", st)
		}
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "X", "approvals_required": 1,
			"approval_project_rule_id": s.AbsentID(t)}).Want(t, http.StatusNotFound)

		// A rule of the merge request's own, with users and a group.
		fe := apRuleOf(t, apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "Frontend",
			"approvals_required": 1, "user_ids": []int64{u2.ID}, "group_ids": []int64{g}}).Want(t, http.StatusCreated), apMRRuleKeys)
		if fe.Name != "Frontend" || fe.RuleType != "regular" || len(fe.Groups) != 1 || fe.Groups[0].ID != g || fe.SourceRule != nil ||
			fe.Overridden == nil || *fe.Overridden {
			t.Errorf("merge request rule %+v", fe)
		}
		apWant(t, "merge request rule eligible approvers", apIDs(fe.EligibleApprovers), apSet(u2.ID, owner.ID, gm.ID))
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "Frontend", "approvals_required": 1,
			"user_ids": []int64{u1.ID}}).Want(t, http.StatusBadRequest).WantBody(t, `{"message":{"name":["has already been taken"]}}`)
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "NoCount"}).
			Want(t, http.StatusBadRequest).WantBody(t, `{"error":"approvals_required is missing"}`)
		apMRDo(t, p, "POST", rep.Token, mr.IID, "/approval_rules", map[string]any{"name": "Reporter", "approvals_required": 1}).
			Want(t, http.StatusForbidden)
		rules := apRulesOf(t, apMRDo(t, p, "GET", rep.Token, mr.IID, "/approval_rules", nil).Want(t, http.StatusOK).Body, apMRRuleKeys)
		if len(rules) != 2 || rules[0].ID != cp.ID || rules[1].ID != fe.ID || rules[0].SourceRule == nil || rules[1].SourceRule != nil {
			t.Fatalf("merge request rules %+v", rules)
		}
		// The approval state: the author is no eligible approver.
		as = apApprovalState(t, p, rep.Token, mr.IID)
		if !as.Overwritten || len(as.Rules) != 2 || as.Rules[1].ID != fe.ID {
			t.Fatalf("approval state with two rules %+v", as)
		}
		apWant(t, "state eligible approvers of Frontend", apIDs(as.Rules[1].EligibleApprovers), apSet(u2.ID, gm.ID))

		// PUT: unlisted users and groups are removed.
		put := apRuleOf(t, apMRDo(t, p, "PUT", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", fe.ID),
			map[string]any{"approvals_required": 0, "user_ids": []int64{u1.ID}}).Want(t, http.StatusOK), apMRRuleKeys)
		if put.Name != "Frontend" || put.ApprovalsRequired != 0 || len(put.Groups) != 0 {
			t.Errorf("updated merge request rule %+v", put)
		}
		apWant(t, "updated merge request rule users", apIDs(put.Users), apSet(u1.ID))
		apMRDo(t, p, "PUT", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", s.AbsentID(t)), map[string]any{"approvals_required": 1}).
			Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Rule Not Found"}`)
		// A project rule is no rule of the merge request.
		apMRDo(t, p, "PUT", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", backend.ID), map[string]any{"approvals_required": 1}).
			Want(t, http.StatusNotFound)
		apMRDo(t, p, "DELETE", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNotFound)
		apMRDo(t, p, "DELETE", rep.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", fe.ID), nil).Want(t, http.StatusForbidden)
		apMRDo(t, p, "DELETE", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", fe.ID), nil).Want(t, http.StatusNoContent)
		apMRDo(t, p, "DELETE", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", fe.ID), nil).Want(t, http.StatusNotFound)
		// A copy made equal to its source again is no longer overridden.
		same := apRuleOf(t, apMRDo(t, p, "PUT", owner.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", cp.ID),
			map[string]any{"approvals_required": 1, "user_ids": []int64{u1.ID}}).Want(t, http.StatusOK), apMRRuleKeys)
		if same.Overridden == nil || *same.Overridden || same.SourceRule == nil || same.SourceRule.ApprovalsRequired != 1 {
			t.Errorf("copy equal to its source: overridden %s, source %+v", apBool(same.Overridden), same.SourceRule)
		}
		apMRDo(t, p, "DELETE", u1.Token, mr.IID, fmt.Sprintf("/approval_rules/%d", cp.ID), nil).Want(t, http.StatusNoContent)
		apMRDo(t, p, "GET", owner.Token, mr.IID, "/approval_rules", nil).Want(t, http.StatusOK).WantBody(t, `[]`)
		if as := apApprovalState(t, p, owner.Token, mr.IID); as.Overwritten || len(as.Rules) != 1 || as.Rules[0].ID != backend.ID {
			t.Errorf("approval state back to the project's %+v", as)
		}

		// The deprecated POST …/approvals: that many approvals from anyone
		// (no regular rule with approvers left).
		apDo(t, p, "DELETE", owner.Token, fmt.Sprintf("/approval_rules/%d", backend.ID), nil).Want(t, http.StatusNoContent)
		st := apStateOf(t, apMRDo(t, p, "POST", u1.Token, mr.IID, "/approvals", map[string]any{"approvals_required": 2}).Want(t, http.StatusCreated))
		if st.ApprovalsRequired != 2 || st.ApprovalsLeft != 2 || st.Approved || st.HasApprovalRules {
			t.Errorf("approvals_required 2: %+v", st)
		}
		if st := apApprovals(t, p, owner.Token, mr.IID); st.ApprovalsRequired != 2 || st.ApprovalsLeft != 2 {
			t.Errorf("read back approvals_required 2: %+v", st)
		}
		apMRDo(t, p, "POST", u1.Token, mr.IID, "/approvals", map[string]any{}).Want(t, http.StatusBadRequest).
			WantBody(t, `{"error":"approvals_required is missing"}`)
		apMRDo(t, p, "POST", rep.Token, mr.IID, "/approvals", map[string]any{"approvals_required": 0}).Want(t, http.StatusForbidden)

		// The project disables overriding: the merge request's rules no
		// longer count, and none may be set.
		apRuleOf(t, apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "Own", "approvals_required": 1,
			"user_ids": []int64{u2.ID}}).Want(t, http.StatusCreated), apMRRuleKeys)
		if as := apApprovalState(t, p, owner.Token, mr.IID); !as.Overwritten {
			t.Errorf("approval state with an own rule: not overwritten")
		}
		apSettings(t, p, map[string]any{"disable_overriding_approvers_per_merge_request": true})
		const disabled = `{"message":"Overriding approvals is disabled"}`
		apMRDo(t, p, "POST", u1.Token, mr.IID, "/approvals", map[string]any{"approvals_required": 1}).
			Want(t, http.StatusUnprocessableEntity).WantBody(t, disabled)
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approval_rules", map[string]any{"name": "More", "approvals_required": 1}).
			Want(t, http.StatusUnprocessableEntity).WantBody(t, disabled)
		if as := apApprovalState(t, p, owner.Token, mr.IID); as.Overwritten || len(as.Rules) != 0 {
			t.Errorf("approval state with overriding disabled %+v", as)
		}
		if st := apApprovals(t, p, owner.Token, mr.IID); st.ApprovalsRequired != 0 || !st.Approved {
			t.Errorf("approvals with overriding disabled %+v", st)
		}

		apMRDo(t, p, "GET", owner.Token, s.AbsentID(t), "/approval_state", nil).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Merge Request Not Found"}`)
		apMRDo(t, p, "GET", owner.Token, s.AbsentID(t), "/approval_rules", nil).Want(t, http.StatusNotFound)
	})
}

// TestApprovals_approveAndUnapprove: who may approve (an eligible
// approver of an unapproved rule, a member through a rule's group even
// as a reporter; other developers only once the merge request is
// approved; never twice, never the author), the sha check, the state
// each answer carries, unapprove and reset.
func TestApprovals_approveAndUnapprove(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, rep, named, gm, stranger := s.NewUser(t, "apaowner"), s.NewUser(t, "apadev"), s.NewUser(t, "aparep"),
			s.NewUser(t, "apanamed"), s.NewUser(t, "apagm"), s.NewUser(t, "apastranger")
		p := apProject(t, s, owner, "approve")
		apMember(t, p, apDeveloper, dev)
		apMember(t, p, apReporter, rep, named, gm)
		g := apGroup(t, s, owner, "apagroup", gm)
		rule := apCreateRule(t, p, map[string]any{"name": "Backend", "approvals_required": 1, "user_ids": []int64{named.ID}, "group_ids": []int64{g}})
		mr := apOpen(t, p, "feature")

		st := apApprovals(t, p, dev.Token, mr.IID)
		if st.ID != mr.ID || st.IID != mr.IID || st.ProjectID != p.ID || st.Title != mr.Title || st.State != "opened" || st.CreatedAt == "" ||
			st.ApprovalsRequired != 1 || st.ApprovalsLeft != 1 || st.Approved || st.UserCanApprove || st.UserHasApproved ||
			len(st.ApprovedBy) != 0 || !st.HasApprovalRules || st.RequirePasswordToApprove ||
			!slices.Equal(st.ApprovalRulesLeft, []apRuleRef{{rule.ID, "Backend", "regular"}}) {
			t.Fatalf("approvals before any %+v", st)
		}
		// The author is no suggested approver though a member of the group.
		apWant(t, "suggested approvers", apIDs(st.SuggestedApprovers), apSet(named.ID, gm.ID))
		if st := apApprovals(t, p, named.Token, mr.IID); !st.UserCanApprove {
			t.Errorf("a named approver cannot approve: %+v", st)
		}
		apMRDo(t, p, "GET", stranger.Token, mr.IID, "/approvals", nil).Want(t, http.StatusNotFound)
		// Reading approvals needs no token (GitLab authenticates only what
		// is not a GET): the private project is hidden.
		apMRDo(t, p, "GET", "", mr.IID, "/approvals", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Project Not Found"}`)
		apMRDo(t, p, "GET", dev.Token, s.AbsentID(t), "/approvals", nil).Want(t, http.StatusNotFound).
			WantBody(t, `{"message":"404 Merge Request Not Found"}`)

		// Ineligible while the rule waits: a developer outside it, the
		// author (401); a reporter outside it may not approve at all
		// (403); a stranger sees nothing.
		for _, u := range []apitest.User{dev, owner} {
			apMRDo(t, p, "POST", u.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		}
		apMRDo(t, p, "POST", rep.Token, mr.IID, "/approve", nil).Want(t, http.StatusForbidden).WantBody(t, ap403)
		apMRDo(t, p, "POST", stranger.Token, mr.IID, "/approve", nil).Want(t, http.StatusNotFound)
		apMRDo(t, p, "POST", "", mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized)
		// The sha must be the head's.
		apMRDo(t, p, "POST", named.Token, mr.IID, "/approve", map[string]any{"sha": strings.Repeat("0", 40)}).
			Want(t, http.StatusConflict).WantBody(t, `{"message":"SHA does not match HEAD of source branch: `+mr.SHA+`"}`)
		if st := apApprovals(t, p, named.Token, mr.IID); len(st.ApprovedBy) != 0 {
			t.Fatalf("a refused approval was kept: %+v", st)
		}

		st = apApprove(t, p, named.Token, mr.IID, map[string]any{"sha": mr.SHA})
		if !st.Approved || st.ApprovalsLeft != 0 || st.ApprovalsRequired != 1 || !st.UserHasApproved || st.UserCanApprove ||
			len(st.ApprovalRulesLeft) != 0 {
			t.Errorf("after the named approver %+v", st)
		}
		apWant(t, "approved by", st.approvers(), []int64{named.ID})
		apWant(t, "suggested approvers after one", apIDs(st.SuggestedApprovers), apSet(gm.ID))
		apMRDo(t, p, "POST", named.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)

		// Approved: any developer may add an approval; a reporter outside
		// the rule still may not.
		if st := apApprovals(t, p, dev.Token, mr.IID); !st.UserCanApprove || st.UserHasApproved {
			t.Errorf("a developer of an approved merge request: %+v", st)
		}
		st = apApprove(t, p, dev.Token, mr.IID, nil)
		apWant(t, "approved by, oldest first", st.approvers(), []int64{named.ID, dev.ID})
		if !st.UserHasApproved || st.UserCanApprove || !st.Approved {
			t.Errorf("after the developer %+v", st)
		}
		apMRDo(t, p, "POST", rep.Token, mr.IID, "/approve", nil).Want(t, http.StatusForbidden)
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized)

		as := apApprovalState(t, p, rep.Token, mr.IID)
		if as.Overwritten || len(as.Rules) != 1 || as.Rules[0].Approved == nil || !*as.Rules[0].Approved {
			t.Fatalf("approval state %+v", as)
		}
		apWant(t, "rule approved by (its eligible approvers only)", apIDs(as.Rules[0].ApprovedBy), apSet(named.ID))
		apWant(t, "rule eligible approvers (not the author)", apIDs(as.Rules[0].EligibleApprovers), apSet(named.ID, gm.ID))

		// Unapprove: only one's own approval, 404 when there is none.
		st = apStateOf(t, apMRDo(t, p, "POST", dev.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusCreated))
		apWant(t, "after the developer unapproved", st.approvers(), []int64{named.ID})
		if st.UserHasApproved || !st.UserCanApprove || !st.Approved {
			t.Errorf("after the developer unapproved %+v", st)
		}
		apMRDo(t, p, "POST", dev.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusNotFound).WantBody(t, `{"message":"404 Not found"}`)
		apMRDo(t, p, "POST", rep.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusForbidden).WantBody(t, ap403)
		apMRDo(t, p, "POST", stranger.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusNotFound)
		st = apStateOf(t, apMRDo(t, p, "POST", named.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusCreated))
		if st.Approved || st.ApprovalsLeft != 1 || len(st.ApprovedBy) != 0 || st.UserHasApproved || !st.UserCanApprove {
			t.Errorf("after the named approver unapproved %+v", st)
		}
		// A reporter who is a member of the rule's group approves.
		st = apApprove(t, p, gm.Token, mr.IID, map[string]any{"sha": mr.SHA})
		apWant(t, "approved through the group", st.approvers(), []int64{gm.ID})
		if !st.Approved {
			t.Errorf("after the group member %+v", st)
		}

		// Reset: maintainers only; every approval goes.
		apApprove(t, p, dev.Token, mr.IID, nil)
		for _, u := range []apitest.User{dev, rep, gm} {
			apMRDo(t, p, "PUT", u.Token, mr.IID, "/reset_approvals", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		}
		apMRDo(t, p, "PUT", stranger.Token, mr.IID, "/reset_approvals", nil).Want(t, http.StatusNotFound)
		if st := apApprovals(t, p, owner.Token, mr.IID); len(st.ApprovedBy) != 2 {
			t.Fatalf("before the reset %+v", st)
		}
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/reset_approvals", nil).Want(t, http.StatusAccepted).WantBody(t, `{"message":"202 Accepted"}`)
		st = apApprovals(t, p, gm.Token, mr.IID)
		if len(st.ApprovedBy) != 0 || st.Approved || st.ApprovalsLeft != 1 || !st.UserCanApprove || st.UserHasApproved {
			t.Errorf("after the reset %+v", st)
		}

		// A password where the project requires one: the approver's own.
		apSettings(t, p, map[string]any{"require_password_to_approve": true})
		if st := apApprovals(t, p, named.Token, mr.IID); !st.RequirePasswordToApprove || !st.UserCanApprove {
			t.Errorf("with a password required %+v", st)
		}
		for _, b := range []map[string]any{nil, {"approval_password": "wrong"}, {"approval_password": "Quarry-test-pass-1x"}} {
			apMRDo(t, p, "POST", named.Token, mr.IID, "/approve", b).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		}
		if st := apApprovals(t, p, named.Token, mr.IID); len(st.ApprovedBy) != 0 {
			t.Fatalf("approved without the password: %+v", st)
		}
		st = apApprove(t, p, named.Token, mr.IID, map[string]any{"approval_password": "Quarry-test-pass-1", "sha": mr.SHA})
		apWant(t, "approved with the password", st.approvers(), []int64{named.ID})
	})
}

// TestApprovals_authorAndCommitters: the author approves only when
// merge_requests_author_approval is on; a user whose e-mail authored a
// commit of the merge request may not approve while
// merge_requests_disable_committers_approval is on, and is no eligible
// approver of its rules then.
func TestApprovals_authorAndCommitters(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, dev2 := s.NewUser(t, "apwowner"), s.NewUser(t, "apwdev"), s.NewUser(t, "apwdev2")
		p := apProject(t, s, owner, "committers")
		apMember(t, p, apDeveloper, dev, dev2)
		// The owner commits on dev's behalf: dev is the commit's author,
		// the owner its committer.
		var c struct {
			ID          string `json:"id"`
			AuthorEmail string `json:"author_email"`
		}
		apDo(t, p, "POST", owner.Token, "/repository/commits", map[string]any{"branch": "feature", "start_branch": "main",
			"commit_message": "dev's change", "author_name": "Dev", "author_email": "apwdev@example.com",
			"actions": []map[string]any{{"action": "create", "file_path": "dev.txt", "content": "by dev\n"}}}).
			Want(t, http.StatusCreated).JSON(t, &c)
		if c.AuthorEmail != "apwdev@example.com" {
			t.Fatalf("commit %+v", c)
		}
		var mr mrJSON
		apDo(t, p, "POST", owner.Token, "/merge_requests", map[string]any{"source_branch": "feature", "target_branch": "main",
			"title": "Dev's change"}).Want(t, http.StatusCreated).JSON(t, &mr)
		if mr.SHA != c.ID {
			t.Fatalf("merge request sha %s; want %s", mr.SHA, c.ID)
		}

		// Defaults: the author may not approve, committers may.
		if st := apApprovals(t, p, owner.Token, mr.IID); st.UserCanApprove {
			t.Errorf("the author can approve by default: %+v", st)
		}
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		apApprove(t, p, dev.Token, mr.IID, nil)
		apMRDo(t, p, "POST", dev.Token, mr.IID, "/unapprove", nil).Want(t, http.StatusCreated)

		apSettings(t, p, map[string]any{"merge_requests_disable_committers_approval": true})
		if st := apApprovals(t, p, dev.Token, mr.IID); st.UserCanApprove {
			t.Errorf("a committer can approve: %+v", st)
		}
		apMRDo(t, p, "POST", dev.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		st := apApprove(t, p, dev2.Token, mr.IID, nil)
		apWant(t, "approved by the non-committer", st.approvers(), []int64{dev2.ID})
		// Committers are no eligible approvers of a rule naming them.
		apCreateRule(t, p, map[string]any{"name": "Pair", "approvals_required": 1, "user_ids": []int64{dev.ID, dev2.ID}})
		as := apApprovalState(t, p, dev2.Token, mr.IID)
		if len(as.Rules) != 1 {
			t.Fatalf("approval state %+v", as)
		}
		apWant(t, "eligible approvers without the committer", apIDs(as.Rules[0].EligibleApprovers), apSet(dev2.ID))

		// The author may approve once allowed, unless also a committer
		// while committers may not.
		apSettings(t, p, map[string]any{"merge_requests_author_approval": true})
		apMRDo(t, p, "POST", owner.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized).WantBody(t, ap401)
		apSettings(t, p, map[string]any{"merge_requests_disable_committers_approval": false})
		if st := apApprovals(t, p, owner.Token, mr.IID); !st.UserCanApprove {
			t.Errorf("the author cannot approve when allowed: %+v", st)
		}
		st = apApprove(t, p, owner.Token, mr.IID, nil)
		apWant(t, "approved by the author too", st.approvers(), []int64{dev2.ID, owner.ID})
		st = apApprove(t, p, dev.Token, mr.IID, nil)
		apWant(t, "approved by all three", st.approvers(), []int64{dev2.ID, owner.ID, dev.ID})
		as = apApprovalState(t, p, dev2.Token, mr.IID)
		apWant(t, "eligible approvers with committers allowed", apIDs(as.Rules[0].EligibleApprovers), apSet(dev.ID, dev2.ID))
		apWant(t, "rule approved by", apIDs(as.Rules[0].ApprovedBy), apSet(dev.ID, dev2.ID))
	})
}

// TestApprovals_mergeWaitsForApproval: merging answers 405 until the
// approval state is approved, then merges; a merged merge request can
// be neither approved nor reset.
func TestApprovals_mergeWaitsForApproval(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev, dev2 := s.NewUser(t, "apgowner"), s.NewUser(t, "apgdev"), s.NewUser(t, "apgdev2")
		p := apProject(t, s, owner, "gate")
		apMember(t, p, apDeveloper, dev, dev2)
		apCreateRule(t, p, map[string]any{"name": "All Members", "approvals_required": 1})
		mr := apOpen(t, p, "feature")
		if st := apApprovals(t, p, owner.Token, mr.IID); st.Approved || st.ApprovalsLeft != 1 || st.HasApprovalRules {
			t.Fatalf("before approval %+v", st)
		}
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/merge", map[string]any{"sha": mr.SHA}).Want(t, http.StatusMethodNotAllowed)
		var got mrJSON
		apMRDo(t, p, "GET", owner.Token, mr.IID, "", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.State != "opened" {
			t.Fatalf("refused merge left state %q", got.State)
		}
		st := apApprove(t, p, dev.Token, mr.IID, map[string]any{"sha": mr.SHA})
		if !st.Approved || st.ApprovalsLeft != 0 {
			t.Fatalf("after approval %+v", st)
		}
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/merge", map[string]any{"sha": mr.SHA}).Want(t, http.StatusOK).JSON(t, &got)
		if got.State != "merged" || got.MergeCommitSHA == "" {
			t.Fatalf("merged %+v", got)
		}
		if tip := capiBranchSHA(t, p, "main"); tip != got.MergeCommitSHA {
			t.Errorf("main at %s; want the merge commit %s", tip, got.MergeCommitSHA)
		}

		// Merged: no more approvals, no reset.
		apMRDo(t, p, "POST", dev2.Token, mr.IID, "/approve", nil).Want(t, http.StatusUnauthorized)
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/reset_approvals", nil).Want(t, http.StatusUnauthorized)
		st = apApprovals(t, p, owner.Token, mr.IID)
		apWant(t, "approvals of the merged merge request", st.approvers(), []int64{dev.ID})
		if st.State != "merged" || !st.Approved || st.UserCanApprove {
			t.Errorf("approvals of the merged merge request %+v", st)
		}
	})
}

// TestApprovals_resetOnPush: a push to the source branch removes the
// approvals when the project resets them on push (the default), and
// keeps them when it does not.
func TestApprovals_resetOnPush(t *testing.T) {
	apitest.Each(t, func(t *testing.T, s *apitest.Server) {
		owner, dev := s.NewUser(t, "apsowner"), s.NewUser(t, "apsdev")
		p := apProject(t, s, owner, "push")
		apMember(t, p, apDeveloper, dev)
		apCreateRule(t, p, map[string]any{"name": "All Members", "approvals_required": 1})
		mr := apOpen(t, p, "feature")
		apApprove(t, p, dev.Token, mr.IID, map[string]any{"sha": mr.SHA})

		// mrHeadRef is the merge request's head ref as git sees it: the
		// follow-up of a push moves it last.
		mrHeadRef := func() string {
			out, err := gitRun(t.TempDir(), "ls-remote", cloneURL(s, p.Path, "owner", owner.Token), fmt.Sprintf("refs/merge-requests/%d/head", mr.IID))
			if err != nil {
				t.Fatalf("ls-remote: %v\n%s", err, out)
			}
			sha, _, _ := strings.Cut(out, "\t")
			return sha
		}
		push := func(content string) string {
			t.Helper()
			apDo(t, p, "PUT", owner.Token, "/repository/files/feature.txt", map[string]any{"branch": "feature", "content": content,
				"commit_message": "push " + content}).Want(t, http.StatusOK)
			return capiBranchSHA(t, p, "feature")
		}
		head := push("second\n")
		eventually(t, "the push reset the approvals", func() bool {
			return len(apApprovals(t, p, dev.Token, mr.IID).ApprovedBy) == 0
		})
		var got mrJSON
		apMRDo(t, p, "GET", owner.Token, mr.IID, "", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.SHA != head {
			t.Errorf("merge request sha %s; want %s", got.SHA, head)
		}
		st := apApprovals(t, p, dev.Token, mr.IID)
		if st.UserHasApproved || !st.UserCanApprove || st.Approved || st.ApprovalsLeft != 1 {
			t.Errorf("after the reset %+v", st)
		}
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/merge", map[string]any{"sha": head}).Want(t, http.StatusMethodNotAllowed)
		apMRDo(t, p, "POST", dev.Token, mr.IID, "/approve", map[string]any{"sha": mr.SHA}).Want(t, http.StatusConflict).
			WantBody(t, `{"message":"SHA does not match HEAD of source branch: `+head+`"}`)
		apApprove(t, p, dev.Token, mr.IID, map[string]any{"sha": head})

		// Not reset on push: the approval survives the push's follow-up
		// (done once the merge request's head ref has moved).
		apSettings(t, p, map[string]any{"reset_approvals_on_push": false})
		head = push("third\n")
		eventually(t, "the merge request followed the push", func() bool { return mrHeadRef() == head })
		apMRDo(t, p, "GET", owner.Token, mr.IID, "", nil).Want(t, http.StatusOK).JSON(t, &got)
		if got.SHA != head {
			t.Errorf("merge request sha %s; want %s", got.SHA, head)
		}
		st = apApprovals(t, p, dev.Token, mr.IID)
		apWant(t, "approvals kept across the push", st.approvers(), []int64{dev.ID})
		if !st.UserHasApproved || !st.Approved {
			t.Errorf("after the kept push %+v", st)
		}
		apMRDo(t, p, "PUT", owner.Token, mr.IID, "/merge", map[string]any{"sha": head}).Want(t, http.StatusOK).JSON(t, &got)
		if got.State != "merged" {
			t.Errorf("merged %+v", got)
		}
	})
}
