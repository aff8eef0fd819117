package approvals

import (
	"context"
	"errors"
	"slices"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// Summary is what a list of merge requests shows of one's approvals.
type Summary struct {
	// Approvals counts the approvals given (State.ApprovedBy).
	Approvals int
	// Required is what its rules require (State.ApprovalsRequired).
	Required int
}

// Summaries returns the approval summaries of a page of a project's
// merge requests, by merge request id, for whoever reads them (as State):
// the project is resolved once, the stored inputs come from the cache or
// from one batch read for all those missing, and the code owners are
// resolved once for the page, so a page costs a fixed number of
// statements whatever its length. A merge request of another project is
// a 404. The numbers are State's: the approvals given and the approvals
// its rules require (neither depends on the committers nor on the
// groups' members, which only decide who is eligible).
func (s *Service) Summaries(ctx context.Context, a auth.Actor, ref string, mrs []model.MergeRequest) (map[int64]Summary, error) {
	p, _, err := s.readable(ctx, a, ref, false, model.Forbidden(""))
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Summary, len(mrs))
	if len(mrs) == 0 {
		return out, nil
	}
	pv, mv, err := s.db.ApprovalVersions(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	today := s.today()
	keys := make([]inputsKey, len(mrs))
	entries := make([]*storedInputs, len(mrs))
	var missing []model.MergeRequest
	for i, m := range mrs {
		if m.TargetProjectID != p.ID {
			return nil, model.NotFound("Merge Request")
		}
		keys[i] = inputsKey{projectID: p.ID, mrID: m.ID, targetBranch: m.TargetBranch, projectVersion: pv, members: mv, today: today}
		if e, ok := s.inputsCache.get(keys[i]); ok && e.loaded {
			entries[i] = e
		} else {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		read, err := s.readStoredMany(ctx, p, missing)
		if err != nil {
			return nil, err
		}
		for i, m := range mrs {
			if e, ok := read[m.ID]; ok && entries[i] == nil {
				entries[i] = e
				s.inputsCache.add(keys[i], e)
			}
		}
	}
	res := s.newOwnerResolver(p)
	for i, m := range mrs {
		in := storedOnly(p, m, entries[i])
		owners, err := s.codeOwnerRulesWith(ctx, res, p, m, entries[i].protected)
		if err != nil {
			return nil, err
		}
		in.MRRules = append(in.MRRules, owners...)
		st := Compute(in)
		out[m.ID] = Summary{Approvals: len(st.ApprovedBy), Required: st.ApprovalsRequired}
	}
	return out, nil
}

// readStoredMany is readStored of several merge requests of a project
// in a fixed number of statements: the project's settings, rules and
// protected branches once, then the merge requests' rules, approvals and
// the members of every group their rules name each in one read.
func (s *Service) readStoredMany(ctx context.Context, p model.Project, mrs []model.MergeRequest) (map[int64]*storedInputs, error) {
	settings, err := s.db.ApprovalSettings(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	rules, err := s.db.ProjectApprovalRules(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	all, err := s.projects.ProtectedRules(ctx, p.ID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return nil, err
	}
	var protected []model.ProtectedBranch
	for _, b := range all {
		protected = append(protected, model.ProtectedBranch{ID: b.ID, ProjectID: b.ProjectID, Name: b.Name,
			CodeOwnerApprovalRequired: b.CodeOwnerApprovalRequired})
	}
	ids := make([]int64, len(mrs))
	for i, m := range mrs {
		ids[i] = m.ID
	}
	mrRules, err := s.db.MergeRequestsApprovalRules(ctx, ids)
	if err != nil {
		return nil, err
	}
	approvals, err := s.db.ApprovalsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*storedInputs, len(mrs))
	var groups []int64
	for _, m := range mrs {
		e := &storedInputs{loaded: true, settings: settings, protected: protected, mrRules: mrRules[m.ID], approvals: approvals[m.ID],
			projectRules: rulesForBranch(rules, m.TargetBranch, protected)}
		e.configured = settings.ApprovalsBeforeMerge > 0 || len(rules) > 0 || len(e.mrRules) > 0 ||
			slices.ContainsFunc(protected, func(b model.ProtectedBranch) bool { return b.CodeOwnerApprovalRequired })
		for _, r := range append(slices.Clone(e.projectRules), e.mrRules...) {
			for _, g := range r.GroupIDs {
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
		}
		out[m.ID] = e
	}
	members, err := s.db.GroupsMemberIDs(ctx, groups, s.today())
	if err != nil {
		return nil, err
	}
	for _, e := range out {
		e.groupMembers = map[int64][]int64{}
		for _, r := range append(slices.Clone(e.projectRules), e.mrRules...) {
			for _, g := range r.GroupIDs {
				e.groupMembers[g] = members[g]
			}
		}
	}
	return out, nil
}
