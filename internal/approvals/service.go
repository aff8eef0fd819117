package approvals

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
	ProtectedRules(ctx context.Context, projectID int64) ([]model.ProtectedBranch, error)
}

// Service is the approvals service.
type Service struct {
	db       *store.DB
	projects Projects
	storages *gitrepo.Storages
	log      *slog.Logger
	caches   codeOwnerCaches
	// inputsCache holds merge requests' stored approval inputs.
	inputsCache *inputsCache
}

// New returns the service.
func New(db *store.DB, projects Projects, storages *gitrepo.Storages, log *slog.Logger) *Service {
	return &Service{db: db, projects: projects, storages: storages, log: log, caches: newCodeOwnerCaches(),
		inputsCache: newInputsCache(inputsCacheEntries, inputsCacheBytes)}
}

func (s *Service) today() string { return s.db.Now().UTC().Format(model.DateLayout) }

// project resolves a project whose merge requests the actor reads and
// checks action (401 without a user: GitLab's approval rules and settings
// authenticate first).
func (s *Service) project(ctx context.Context, a auth.Actor, ref string, maintainer bool) (model.Project, model.AccessLevel, error) {
	if !a.SignedIn() {
		return model.Project{}, 0, model.Unauthorized("")
	}
	return s.readable(ctx, a, ref, maintainer, model.Forbidden(""))
}

// readable is project for any caller, anonymous too (GitLab's merge
// request approvals authenticate only what is not a GET); closed is the
// answer when the project's merge requests are closed to the actor: 403
// where GitLab authorizes read_merge_request on the project found, 404
// where it looks the merge request up among those the actor reads.
func (s *Service) readable(ctx context.Context, a auth.Actor, ref string, maintainer bool, closed error) (model.Project, model.AccessLevel, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, acc, err
	}
	if !auth.Can(a, auth.ReadMergeRequest, auth.Resource{Project: &p, Access: acc}) {
		return p, acc, closed
	}
	if maintainer && !a.Admin() && acc < model.Maintainer {
		return p, acc, model.Forbidden("")
	}
	return p, acc, nil
}

// Settings returns a project's approval settings.
func (s *Service) Settings(ctx context.Context, a auth.Actor, ref string) (model.ApprovalSettings, error) {
	p, _, err := s.project(ctx, a, ref, false)
	if err != nil {
		return model.ApprovalSettings{}, err
	}
	return s.db.ApprovalSettings(ctx, p.ID)
}

// SettingsInput changes approval settings; nil means "not given".
type SettingsInput struct {
	ApprovalsBeforeMerge                                                  *int
	ResetApprovalsOnPush, SelectiveCodeOwnerRemovals                      *bool
	DisableOverridingApprovers, AuthorApproval, DisableCommittersApproval *bool
	RequirePassword                                                       *bool
}

// UpdateSettings changes a project's approval settings (maintainers).
func (s *Service) UpdateSettings(ctx context.Context, a auth.Actor, ref string, in SettingsInput) (model.ApprovalSettings, error) {
	p, _, err := s.project(ctx, a, ref, true)
	if err != nil {
		return model.ApprovalSettings{}, err
	}
	var out model.ApprovalSettings
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		st, err := tx.ApprovalSettings(ctx, p.ID)
		if err != nil {
			return err
		}
		if v := in.ApprovalsBeforeMerge; v != nil {
			if *v < 0 {
				return model.Invalid("approvals_before_merge", "must be greater than or equal to 0")
			}
			st.ApprovalsBeforeMerge = *v
		}
		for _, f := range []struct {
			in  *bool
			out *bool
		}{{in.ResetApprovalsOnPush, &st.ResetApprovalsOnPush}, {in.SelectiveCodeOwnerRemovals, &st.SelectiveCodeOwnerRemovals},
			{in.DisableOverridingApprovers, &st.DisableOverridingApprovers}, {in.AuthorApproval, &st.AuthorApproval},
			{in.DisableCommittersApproval, &st.DisableCommittersApproval}, {in.RequirePassword, &st.RequirePassword}} {
			if f.in != nil {
				*f.out = *f.in
			}
		}
		if st.ResetApprovalsOnPush {
			st.SelectiveCodeOwnerRemovals = false
		}
		out = st
		return tx.SaveApprovalSettings(ctx, st)
	})
	return out, err
}

// RuleInput makes or changes a rule; nil means "not given".
type RuleInput struct {
	Name                          *string
	ApprovalsRequired             *int
	RuleType                      *string
	UserIDs, GroupIDs             *[]int64
	ProtectedBranchIDs            *[]int64
	AppliesToAllProtectedBranches *bool
	// ApprovalProjectRuleID copies a project rule (merge request rules).
	ApprovalProjectRuleID int64
}

// apply sets the given attributes on r, checking users, groups and
// branches exist (unknown ones are left out, as GitLab leaves out those it
// cannot find).
func (s *Service) apply(ctx context.Context, p model.Project, r *model.ApprovalRule, in RuleInput) error {
	if in.Name != nil {
		if strings.TrimSpace(*in.Name) == "" {
			return model.Invalid("name", "can't be blank")
		}
		r.Name = strings.TrimSpace(*in.Name)
	}
	if in.ApprovalsRequired != nil {
		if *in.ApprovalsRequired < 0 {
			return model.Invalid("approvals_required", "must be greater than or equal to 0")
		}
		r.ApprovalsRequired = *in.ApprovalsRequired
	}
	if in.UserIDs != nil {
		r.UserIDs = nil
		for _, id := range *in.UserIDs {
			if _, err := s.db.UserByID(ctx, id); err == nil && !slices.Contains(r.UserIDs, id) {
				r.UserIDs = append(r.UserIDs, id)
			}
		}
	}
	if in.GroupIDs != nil {
		r.GroupIDs = nil
		for _, id := range *in.GroupIDs {
			if _, err := s.db.GroupByID(ctx, id); err == nil && !slices.Contains(r.GroupIDs, id) {
				r.GroupIDs = append(r.GroupIDs, id)
			}
		}
	}
	if in.ProtectedBranchIDs != nil {
		rules, err := s.projects.ProtectedRules(ctx, p.ID)
		if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
		r.ProtectedBranchIDs = nil
		for _, id := range *in.ProtectedBranchIDs {
			if slices.ContainsFunc(rules, func(b model.ProtectedBranch) bool { return b.ID == id }) {
				r.ProtectedBranchIDs = append(r.ProtectedBranchIDs, id)
			} else {
				return model.Invalid("protected_branch_ids", "must belong to the project")
			}
		}
	}
	if in.AppliesToAllProtectedBranches != nil {
		r.AppliesToAllProtectedBranches = *in.AppliesToAllProtectedBranches
	}
	switch {
	case in.RuleType != nil && *in.RuleType == model.RuleAnyApprover:
		r.RuleType = model.RuleAnyApprover
	case in.RuleType != nil && *in.RuleType == model.RuleRegular:
		r.RuleType = model.RuleRegular
	case in.RuleType != nil:
		return model.Param("rule_type does not have a valid value")
	case r.RuleType == "":
		r.RuleType = model.RuleRegular
		if len(r.UserIDs) == 0 && len(r.GroupIDs) == 0 {
			r.RuleType = model.RuleAnyApprover
		}
	}
	return nil
}

// Rules lists a project's rules.
func (s *Service) Rules(ctx context.Context, a auth.Actor, ref string) (model.Project, []model.ApprovalRule, error) {
	p, _, err := s.project(ctx, a, ref, false)
	if err != nil {
		return p, nil, err
	}
	rules, err := s.db.ProjectApprovalRules(ctx, p.ID)
	return p, rules, err
}

// Rule returns a project's rule (404 Rule Not Found).
func (s *Service) Rule(ctx context.Context, a auth.Actor, ref string, id int64) (model.Project, model.ApprovalRule, error) {
	p, rules, err := s.Rules(ctx, a, ref)
	if err != nil {
		return p, model.ApprovalRule{}, err
	}
	for _, r := range rules {
		if r.ID == id {
			return p, r, nil
		}
	}
	return p, model.ApprovalRule{}, model.NotFound("Rule")
}

// CreateRule makes a project rule (maintainers). Only one any_approver
// rule per project; names are unique.
func (s *Service) CreateRule(ctx context.Context, a auth.Actor, ref string, in RuleInput) (model.Project, model.ApprovalRule, error) {
	p, _, err := s.project(ctx, a, ref, true)
	if err != nil {
		return p, model.ApprovalRule{}, err
	}
	r := model.ApprovalRule{ProjectID: p.ID}
	if err := s.apply(ctx, p, &r, in); err != nil {
		return p, r, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.ProjectApprovalRules(ctx, p.ID)
		if err != nil {
			return err
		}
		if err := uniqueRule(existing, r); err != nil {
			return err
		}
		return nameTaken(tx.CreateApprovalRule(ctx, &r))
	})
	return p, r, err
}

// uniqueRule refuses a second rule of a name, or a second any_approver
// rule.
func uniqueRule(existing []model.ApprovalRule, r model.ApprovalRule) error {
	for _, x := range existing {
		if x.ID == r.ID {
			continue
		}
		if strings.EqualFold(x.Name, r.Name) {
			return model.Invalid("name", "has already been taken")
		}
		if x.RuleType == model.RuleAnyApprover && r.RuleType == model.RuleAnyApprover {
			return model.Invalid("rule_type", "any-approver for the project already exists")
		}
	}
	return nil
}

// replaceRule changes rule id among existing (a project's or a merge
// request's rules): users and groups not listed are removed; with
// mrRule, code owner and report rules are refused.
func (s *Service) replaceRule(ctx context.Context, tx *store.Tx, p model.Project, existing []model.ApprovalRule, id int64,
	in RuleInput, mrRule bool) (model.ApprovalRule, error) {
	i := slices.IndexFunc(existing, func(r model.ApprovalRule) bool { return r.ID == id })
	if i < 0 {
		return model.ApprovalRule{}, model.NotFound("Rule")
	}
	r := existing[i]
	if mrRule && (r.RuleType == model.RuleCodeOwner || r.RuleType == model.RuleReportApprover) {
		return r, model.Forbidden("")
	}
	if in.UserIDs == nil {
		in.UserIDs = &[]int64{}
	}
	if in.GroupIDs == nil {
		in.GroupIDs = &[]int64{}
	}
	if err := s.apply(ctx, p, &r, in); err != nil {
		return r, err
	}
	if err := uniqueRule(existing, r); err != nil {
		return r, err
	}
	return r, nameTaken(tx.UpdateApprovalRule(ctx, &r))
}

// UpdateRule changes a project rule (maintainers): users and groups not
// listed are removed.
func (s *Service) UpdateRule(ctx context.Context, a auth.Actor, ref string, id int64, in RuleInput) (model.Project, model.ApprovalRule, error) {
	p, _, err := s.project(ctx, a, ref, true)
	if err != nil {
		return p, model.ApprovalRule{}, err
	}
	var out model.ApprovalRule
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.ProjectApprovalRules(ctx, p.ID)
		if err != nil {
			return err
		}
		out, err = s.replaceRule(ctx, tx, p, existing, id, in, false)
		return err
	})
	return p, out, err
}

// DeleteRule removes a project rule (maintainers).
func (s *Service) DeleteRule(ctx context.Context, a auth.Actor, ref string, id int64) error {
	p, _, err := s.project(ctx, a, ref, true)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.ProjectApprovalRules(ctx, p.ID)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(existing, func(r model.ApprovalRule) bool { return r.ID == id }) {
			return model.NotFound("Rule")
		}
		_, err = tx.DeleteApprovalRule(ctx, id)
		return err
	})
}

// inputs gathers what a merge request's state is computed from: the
// database state of its approvals from the cache (stored), what follows
// from users, groups and git fresh (code owner rules, their groups'
// members, committers).
func (s *Service) inputs(ctx context.Context, p model.Project, m model.MergeRequest) (Inputs, error) {
	e, err := s.stored(ctx, p, m, true)
	if err != nil {
		return Inputs{}, err
	}
	return s.inputsFrom(ctx, p, m, e)
}

// inputsFrom completes the stored inputs of a merge request.
func (s *Service) inputsFrom(ctx context.Context, p model.Project, m model.MergeRequest, e *storedInputs) (Inputs, error) {
	in := storedOnly(p, m, e)
	owners, err := s.codeOwnerRules(ctx, p, m, e.protected)
	if err != nil {
		return in, err
	}
	in.MRRules = append(slices.Clone(e.mrRules), owners...)
	in.GroupMembers = e.groupMembers
	if len(owners) > 0 {
		in.GroupMembers = make(map[int64][]int64, len(e.groupMembers))
		for gid, ids := range e.groupMembers {
			in.GroupMembers[gid] = ids
		}
		for _, r := range owners {
			if err := s.addGroupMembers(ctx, in.GroupMembers, r.GroupIDs); err != nil {
				return in, err
			}
		}
	}
	if in.Settings.DisableCommittersApproval {
		if in.CommitterIDs, err = s.committers(ctx, p, m); err != nil {
			return in, err
		}
	}
	return in, nil
}

// storedOnly are the inputs the stored part gives: settings, rules
// (the deprecated approvals_before_merge as an any_approver rule),
// approvals and the groups' members; no code owner rules nor committers.
func storedOnly(p model.Project, m model.MergeRequest, e *storedInputs) Inputs {
	in := Inputs{Settings: e.settings, ProjectRules: slices.Clone(e.projectRules), AuthorID: m.AuthorID,
		Approvals: slices.Clone(e.approvals), MRRules: slices.Clone(e.mrRules), GroupMembers: e.groupMembers}
	if n := in.Settings.ApprovalsBeforeMerge; n > 0 && !slices.ContainsFunc(in.ProjectRules, func(r model.ApprovalRule) bool {
		return r.RuleType == model.RuleAnyApprover
	}) {
		// The deprecated project setting: that many approvals from anyone.
		in.ProjectRules = append(in.ProjectRules, model.ApprovalRule{ProjectID: p.ID, Name: "All Members", RuleType: model.RuleAnyApprover,
			ApprovalsRequired: n})
	}
	return in
}

// protected lists the project's protected branches (none on error).
func (s *Service) protected(ctx context.Context, projectID int64) []model.ProtectedBranch {
	rules, _ := s.projects.ProtectedRules(ctx, projectID)
	return rules
}

// rulesForBranch keeps the project rules that apply to a target branch:
// rules scoped to protected branches apply when one of them matches it.
func rulesForBranch(rules []model.ApprovalRule, branch string, protected []model.ProtectedBranch) []model.ApprovalRule {
	var out []model.ApprovalRule
	for _, r := range rules {
		if len(r.ProtectedBranchIDs) == 0 && !r.AppliesToAllProtectedBranches {
			out = append(out, r)
			continue
		}
		for _, b := range protected {
			if (r.AppliesToAllProtectedBranches || slices.Contains(r.ProtectedBranchIDs, b.ID)) && model.MatchesBranch(b.Name, branch) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// committers are the users whose e-mail authored or committed a commit
// of the merge request.
func (s *Service) committers(ctx context.Context, p model.Project, m model.MergeRequest) ([]int64, error) {
	if m.HeadSHA == "" || m.HeadSHA == m.BaseSHA {
		return nil, nil
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return nil, err
	}
	ids, err := repo.Log(ctx, gitrepo.LogOptions{Rev: m.BaseSHA + ".." + m.HeadSHA, Max: 1000})
	if err != nil {
		return nil, err
	}
	var out []int64
	seen := map[string]bool{}
	for _, id := range ids {
		c, err := repo.ReadCommit(ctx, string(id))
		if err != nil {
			return nil, err
		}
		for _, email := range []string{c.Author.Email, c.Committer.Email} {
			email = strings.ToLower(email)
			if email == "" || seen[email] {
				continue
			}
			seen[email] = true
			if u, err := s.db.UserByEmail(ctx, email); err == nil && !slices.Contains(out, u.ID) {
				out = append(out, u.ID)
			}
		}
	}
	return out, nil
}

// View is a merge request's approval state for a viewer.
type View struct {
	Project                         model.Project
	MR                              model.MergeRequest
	State                           State
	Users                           map[int64]model.User
	Groups                          map[int64]model.Group
	UserHasApproved, UserCanApprove bool
	RequirePassword                 bool
}

// mr resolves a merge request the actor reads, for a signed-in caller
// (401 otherwise).
func (s *Service) mr(ctx context.Context, a auth.Actor, ref string, iid int64) (model.Project, model.AccessLevel, model.MergeRequest, error) {
	if !a.SignedIn() {
		return model.Project{}, 0, model.MergeRequest{}, model.Unauthorized("")
	}
	return s.mrOf(ctx, a, ref, iid, model.Forbidden(""))
}

// mrOf is mr for any caller; closed as in readable.
func (s *Service) mrOf(ctx context.Context, a auth.Actor, ref string, iid int64, closed error) (model.Project, model.AccessLevel, model.MergeRequest, error) {
	p, acc, err := s.readable(ctx, a, ref, false, closed)
	if err != nil {
		return p, acc, model.MergeRequest{}, err
	}
	m, err := s.db.MergeRequest(ctx, p.ID, iid)
	if errors.Is(err, model.ErrNotFound) {
		return p, acc, m, model.NotFound("Merge Request")
	}
	return p, acc, m, err
}

// view computes the state and loads its users and groups.
func (s *Service) view(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, m model.MergeRequest) (View, Inputs, error) {
	in, err := s.inputs(ctx, p, m)
	if err != nil {
		return View{}, in, err
	}
	st := Compute(in)
	v := View{Project: p, MR: m, State: st, Users: map[int64]model.User{}, Groups: map[int64]model.Group{},
		RequirePassword: in.Settings.RequirePassword}
	uid := a.UserID()
	v.UserHasApproved = slices.Contains(st.ApprovedBy, uid)
	v.UserCanApprove = m.State == model.MRStateOpened && (a.Admin() || acc >= model.Developer || st.Eligible(uid)) && st.CanApprove(uid, in)
	ids := append(slices.Clone(st.ApprovedBy), m.AuthorID)
	for _, r := range st.Rules {
		ids = append(ids, r.Eligible...)
		ids = append(ids, r.UserIDs...)
		for _, gid := range r.GroupIDs {
			if _, ok := v.Groups[gid]; !ok {
				if g, err := s.db.GroupByID(ctx, gid); err == nil {
					v.Groups[gid] = g
				}
			}
		}
	}
	if v.Users, err = s.db.UsersByIDs(ctx, ids); err != nil {
		return View{}, in, err
	}
	return v, in, nil
}

// State is a merge request's approval state (GET …/approvals,
// …/approval_state), for whoever reads the merge request, anonymous
// callers of a public project too: GitLab's merge request approvals API
// (lib/api/merge_request_approvals.rb and its EE prepend) authenticates
// only what is not a GET and reads with find_merge_request_with_access.
func (s *Service) State(ctx context.Context, a auth.Actor, ref string, iid int64) (View, error) {
	p, acc, m, err := s.mrOf(ctx, a, ref, iid, model.Forbidden(""))
	if err != nil {
		return View{}, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, err
}

// Approve records the actor's approval (201). Who may not approve at all
// (neither may edit the merge request nor is an eligible approver of it:
// GitLab's approve_merge_request) is 403; then a sha other than the
// head's is 409; a refusal of the approval itself (ineligible while a
// rule waits, already approved, the author or a committer where the
// settings forbid it, a wrong password where the project requires one)
// 401.
func (s *Service) Approve(ctx context.Context, a auth.Actor, ref string, iid int64, sha, password string) (View, error) {
	p, acc, m, err := s.mr(ctx, a, ref, iid)
	if err != nil {
		return View{}, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	if err != nil {
		return View{}, err
	}
	if !mayApprove(a, p, acc, m, v) {
		return View{}, model.Forbidden("")
	}
	if sha != "" && sha != m.HeadSHA {
		return View{}, model.Conflict("SHA does not match HEAD of source branch: " + m.HeadSHA)
	}
	if !v.UserCanApprove {
		return View{}, model.Unauthorized("")
	}
	if v.RequirePassword {
		u, err := s.db.UserByID(ctx, a.UserID())
		if err != nil || !auth.CheckPassword(u.PasswordHash, password) {
			return View{}, model.Unauthorized("")
		}
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.Approve(ctx, m.ID, a.UserID())
		if err == nil && !ok {
			return model.Unauthorized("")
		}
		if err != nil {
			return err
		}
		return tx.AddMergeRequestEvent(ctx, m.ID, a.UserID(), model.EventApproved)
	}); err != nil {
		return View{}, err
	}
	v, _, err = s.view(ctx, a, p, acc, m)
	return v, err
}

// mayApprove is GitLab's approve_merge_request: who may edit the merge
// request (its author, developers up) or is an eligible approver of one
// of its rules.
func mayApprove(a auth.Actor, p model.Project, acc model.AccessLevel, m model.MergeRequest, v View) bool {
	return auth.Can(a, auth.UpdateMergeRequest, auth.Resource{Project: &p, Access: acc, User: &model.User{ID: m.AuthorID}}) ||
		v.State.Eligible(a.UserID())
}

// Unapprove removes the actor's approval (403 for who may not approve,
// as GitLab authorizes approve_merge_request first; 404 when there is
// none).
func (s *Service) Unapprove(ctx context.Context, a auth.Actor, ref string, iid int64) (View, error) {
	p, acc, m, err := s.mr(ctx, a, ref, iid)
	if err != nil {
		return View{}, err
	}
	if v, _, err := s.view(ctx, a, p, acc, m); err != nil {
		return View{}, err
	} else if !mayApprove(a, p, acc, m, v) {
		return View{}, model.Forbidden("")
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.Unapprove(ctx, m.ID, a.UserID())
		if err == nil && !ok {
			return model.RecordNotFound() // reference §4.2: "404 Not found"
		}
		return err
	}); err != nil {
		return View{}, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, err
}

// ResetApprovals removes every approval of a merge request not merged
// yet (maintainers; others, and a merged one, 401: reference §4.2).
func (s *Service) ResetApprovals(ctx context.Context, a auth.Actor, ref string, iid int64) error {
	if !a.SignedIn() {
		return model.Unauthorized("")
	}
	// GitLab looks the merge request up among those the actor reads.
	_, acc, m, err := s.mrOf(ctx, a, ref, iid, model.NotFound(""))
	if err != nil {
		return err
	}
	if (!a.Admin() && acc < model.Maintainer) || m.State == model.MRStateMerged {
		return model.Unauthorized("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.ResetApprovals(ctx, m.ID) })
}

// MRRules lists a merge request's own rules.
func (s *Service) MRRules(ctx context.Context, a auth.Actor, ref string, iid int64) (View, []model.ApprovalRule, error) {
	p, acc, m, err := s.mr(ctx, a, ref, iid)
	if err != nil {
		return View{}, nil, err
	}
	rules, err := s.db.MergeRequestApprovalRules(ctx, m.ID)
	if err != nil {
		return View{}, nil, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, rules, err
}

// mrWritable resolves a merge request whose rules the actor may change:
// its author, developers up; overriding must be allowed.
func (s *Service) mrWritable(ctx context.Context, a auth.Actor, ref string, iid int64) (model.Project, model.AccessLevel, model.MergeRequest, error) {
	p, acc, m, err := s.mr(ctx, a, ref, iid)
	if err != nil {
		return p, acc, m, err
	}
	if !auth.Can(a, auth.UpdateMergeRequest, auth.Resource{Project: &p, Access: acc, User: &model.User{ID: m.AuthorID}}) {
		return p, acc, m, model.Forbidden("")
	}
	if m.State != model.MRStateOpened {
		return p, acc, m, model.Forbidden("")
	}
	st, err := s.db.ApprovalSettings(ctx, p.ID)
	if err != nil {
		return p, acc, m, err
	}
	if st.DisableOverridingApprovers {
		return p, acc, m, model.Unprocessable("Overriding approvals is disabled")
	}
	return p, acc, m, nil
}

// CreateMRRule makes a merge request rule; with ApprovalProjectRuleID it
// copies that project rule's name, users and groups.
func (s *Service) CreateMRRule(ctx context.Context, a auth.Actor, ref string, iid int64, in RuleInput) (View, model.ApprovalRule, error) {
	p, acc, m, err := s.mrWritable(ctx, a, ref, iid)
	if err != nil {
		return View{}, model.ApprovalRule{}, err
	}
	r := model.ApprovalRule{MergeRequestID: m.ID}
	if in.ApprovalProjectRuleID != 0 {
		rules, err := s.db.ProjectApprovalRules(ctx, p.ID)
		if err != nil {
			return View{}, r, err
		}
		i := slices.IndexFunc(rules, func(x model.ApprovalRule) bool { return x.ID == in.ApprovalProjectRuleID })
		if i < 0 {
			return View{}, r, model.NotFound("Rule")
		}
		src := rules[i]
		name, users, groups := src.Name, src.UserIDs, src.GroupIDs
		in.Name, in.UserIDs, in.GroupIDs = &name, &users, &groups
		rt := src.RuleType
		in.RuleType = &rt
		r.SourceRuleID = src.ID
	}
	if err := s.apply(ctx, p, &r, in); err != nil {
		return View{}, r, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.MergeRequestApprovalRules(ctx, m.ID)
		if err != nil {
			return err
		}
		if err := uniqueRule(existing, r); err != nil {
			return err
		}
		return nameTaken(tx.CreateApprovalRule(ctx, &r))
	})
	if err != nil {
		return View{}, r, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, r, err
}

// UpdateMRRule changes a merge request rule (code owner and report
// rules are refused): users and groups not listed are removed.
func (s *Service) UpdateMRRule(ctx context.Context, a auth.Actor, ref string, iid, id int64, in RuleInput) (View, model.ApprovalRule, error) {
	p, acc, m, err := s.mrWritable(ctx, a, ref, iid)
	if err != nil {
		return View{}, model.ApprovalRule{}, err
	}
	var out model.ApprovalRule
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.MergeRequestApprovalRules(ctx, m.ID)
		if err != nil {
			return err
		}
		out, err = s.replaceRule(ctx, tx, p, existing, id, in, true)
		return err
	})
	if err != nil {
		return View{}, out, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, out, err
}

// DeleteMRRule removes a merge request rule (code owner and report rules
// are refused).
func (s *Service) DeleteMRRule(ctx context.Context, a auth.Actor, ref string, iid, id int64) error {
	_, _, m, err := s.mrWritable(ctx, a, ref, iid)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.MergeRequestApprovalRules(ctx, m.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(existing, func(r model.ApprovalRule) bool { return r.ID == id })
		if i < 0 {
			return model.NotFound("Rule")
		}
		if t := existing[i].RuleType; t == model.RuleCodeOwner || t == model.RuleReportApprover {
			return model.Forbidden("")
		}
		_, err = tx.DeleteApprovalRule(ctx, id)
		return err
	})
}

// SetApprovalsRequired is the deprecated POST …/approvals: the merge
// request's any_approver rule requires n approvals.
func (s *Service) SetApprovalsRequired(ctx context.Context, a auth.Actor, ref string, iid int64, n int) (View, error) {
	p, acc, m, err := s.mrWritable(ctx, a, ref, iid)
	if err != nil {
		return View{}, err
	}
	if n < 0 {
		return View{}, model.Invalid("approvals_required", "must be greater than or equal to 0")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		existing, err := tx.MergeRequestApprovalRules(ctx, m.ID)
		if err != nil {
			return err
		}
		for _, r := range existing {
			if r.RuleType == model.RuleAnyApprover {
				r.ApprovalsRequired = n
				return nameTaken(tx.UpdateApprovalRule(ctx, &r))
			}
		}
		r := model.ApprovalRule{MergeRequestID: m.ID, Name: "All Members", RuleType: model.RuleAnyApprover, ApprovalsRequired: n}
		return nameTaken(tx.CreateApprovalRule(ctx, &r))
	})
	if err != nil {
		return View{}, err
	}
	v, _, err := s.view(ctx, a, p, acc, m)
	return v, err
}

// Approved reports whether a merge request's approval state lets it be
// merged (the merge check of the merge requests service).
func (s *Service) Approved(ctx context.Context, p model.Project, m model.MergeRequest) (bool, error) {
	// Most projects require no approval: the cache or one statement
	// says so, and no rule then applies (Compute of no rules is
	// approved). An entry of a configured merge request is loaded.
	e, err := s.stored(ctx, p, m, false)
	if err != nil {
		return false, err
	}
	if !e.configured {
		return true, nil
	}
	in, err := s.inputsFrom(ctx, p, m, e)
	if err != nil {
		return false, err
	}
	return Compute(in).Approved, nil
}

// HeadMoved follows a push to a merge request's source branch: its
// approvals go when the project resets them on push.
func (s *Service) HeadMoved(ctx context.Context, p model.Project, m model.MergeRequest) error {
	st, err := s.db.ApprovalSettings(ctx, p.ID)
	if err != nil || !st.ResetApprovalsOnPush {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.ResetApprovals(ctx, m.ID) })
}

// Related are the users, groups, protected branches and group members
// rules name, and the project rules merge request rules copy (for
// rendering them).
type Related struct {
	Users    map[int64]model.User
	Groups   map[int64]model.Group
	Branches []model.ProtectedBranch
	Members  map[int64][]int64
	Sources  map[int64]model.ApprovalRule
}

// RelatedOf loads what rules of a project name.
func (s *Service) RelatedOf(ctx context.Context, p model.Project, rules []model.ApprovalRule) (Related, error) {
	out := Related{Users: map[int64]model.User{}, Groups: map[int64]model.Group{}, Members: map[int64][]int64{},
		Branches: s.protected(ctx, p.ID), Sources: map[int64]model.ApprovalRule{}}
	if slices.ContainsFunc(rules, func(r model.ApprovalRule) bool { return r.SourceRuleID != 0 }) {
		project, err := s.db.ProjectApprovalRules(ctx, p.ID)
		if err != nil {
			return out, err
		}
		for _, r := range project {
			out.Sources[r.ID] = r
		}
	}
	var uids []int64
	for _, r := range rules {
		uids = append(uids, r.UserIDs...)
		for _, gid := range r.GroupIDs {
			if _, ok := out.Groups[gid]; ok {
				continue
			}
			g, err := s.db.GroupByID(ctx, gid)
			if err != nil {
				continue
			}
			out.Groups[gid] = g
			members, err := s.db.GroupMemberIDs(ctx, gid, s.today())
			if err != nil {
				return out, err
			}
			out.Members[gid] = members
			uids = append(uids, members...)
		}
	}
	var err error
	out.Users, err = s.db.UsersByIDs(ctx, uids)
	return out, err
}

// nameTaken turns a racing duplicate rule name into GitLab's 400.
func nameTaken(err error) error {
	if store.IsRuleNameTaken(err) {
		return model.Invalid("name", "has already been taken")
	}
	return err
}
