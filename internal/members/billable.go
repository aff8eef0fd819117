package members

import (
	"context"
	"sort"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// rootGroup resolves a top-level group whose memberships the actor
// administers; subgroups are refused.
func (s *Service) rootGroup(ctx context.Context, a auth.Actor, ref string) (Source, error) {
	src, err := s.resolve(ctx, a, Groups, ref)
	if err != nil {
		return src, err
	}
	if src.Group.ParentID != 0 {
		return src, model.BadRequest("")
	}
	if !s.canAdmin(a, src) {
		return src, model.Forbidden("")
	}
	return src, nil
}

// Approve lets a pending member of a top-level group's tree in.
func (s *Service) Approve(ctx context.Context, a auth.Actor, ref string, userID int64) error {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return err
	}
	ms, err := s.db.MembershipsInTree(ctx, src.Traversal, userID)
	if err != nil {
		return err
	}
	var pending []model.Member
	for _, m := range ms {
		if m.Pending {
			pending = append(pending, m)
		}
	}
	if len(pending) == 0 {
		return model.RecordNotFound()
	}
	return s.activate(ctx, pending)
}

// ApproveAll lets every pending member of a top-level group's tree in.
func (s *Service) ApproveAll(ctx context.Context, a auth.Actor, ref string) error {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return err
	}
	all, err := s.db.BillableUsers(ctx, src.Traversal)
	if err != nil {
		return err
	}
	var pending []model.Member
	for _, m := range all {
		if m.Pending {
			pending = append(pending, m)
		}
	}
	return s.activate(ctx, pending)
}

func (s *Service) activate(ctx context.Context, ms []model.Member) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		var users []int64
		for i := range ms {
			ms[i].Pending = false
			if err := tx.UpdateMember(ctx, &ms[i]); err != nil {
				return err
			}
			users = append(users, ms[i].UserID)
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
}

// Pending lists the users waiting for approval in a top-level group's tree.
func (s *Service) Pending(ctx context.Context, a auth.Actor, ref string, page model.Page) ([]model.Member, model.PageInfo, error) {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	all, err := s.db.BillableUsers(ctx, src.Traversal)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	seen := map[int64]bool{}
	var out []model.Member
	for _, m := range all {
		if m.Pending && !seen[m.UserID] {
			seen[m.UserID] = true
			out = append(out, m)
		}
	}
	list, info := model.PageOf(out, page)
	return list, info, nil
}

// Billable is a user counted against a top-level group.
type Billable struct {
	User           model.User
	MembershipType string // "group_member" or "project_member"
	HighestLevel   model.AccessLevel
	JoinedAt       model.Member // the earliest membership
}

// BillableSorts are the accepted sort orders.
var BillableSorts = []string{"access_level_asc", "access_level_desc", "last_joined", "name_asc", "name_desc",
	"oldest_joined", "oldest_sign_in", "recent_sign_in", "last_activity_on_asc", "last_activity_on_desc"}

// BillableMembers lists the users with a membership anywhere in a
// top-level group's tree, each once.
func (s *Service) BillableMembers(ctx context.Context, a auth.Actor, ref, search, sortBy string, page model.Page) ([]Billable, model.PageInfo, error) {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	all, err := s.db.BillableUsers(ctx, src.Traversal)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	byUser := map[int64]*Billable{}
	var order []int64
	for _, m := range all {
		if m.Pending {
			continue
		}
		b, ok := byUser[m.UserID]
		if !ok {
			b = &Billable{User: m.User, MembershipType: "project_member", JoinedAt: m}
			byUser[m.UserID] = b
			order = append(order, m.UserID)
		}
		if m.SourceType == model.SourceNamespace {
			b.MembershipType = "group_member"
		}
		if m.AccessLevel > b.HighestLevel {
			b.HighestLevel = m.AccessLevel
		}
		if m.CreatedAt.Before(b.JoinedAt.CreatedAt) {
			b.JoinedAt = m
		}
	}
	q := strings.ToLower(search)
	var out []Billable
	for _, id := range order {
		b := byUser[id]
		if q != "" && !strings.Contains(strings.ToLower(b.User.Name), q) && !strings.Contains(strings.ToLower(b.User.Username), q) &&
			!strings.EqualFold(b.User.PublicEmail, search) {
			continue
		}
		out = append(out, *b)
	}
	less := map[string]func(x, y *Billable) bool{
		"access_level_asc":  func(x, y *Billable) bool { return x.HighestLevel < y.HighestLevel },
		"access_level_desc": func(x, y *Billable) bool { return x.HighestLevel > y.HighestLevel },
		"last_joined":       func(x, y *Billable) bool { return x.JoinedAt.CreatedAt.After(y.JoinedAt.CreatedAt) },
		"oldest_joined":     func(x, y *Billable) bool { return x.JoinedAt.CreatedAt.Before(y.JoinedAt.CreatedAt) },
		"name_asc":          func(x, y *Billable) bool { return strings.ToLower(x.User.Name) < strings.ToLower(y.User.Name) },
		"name_desc":         func(x, y *Billable) bool { return strings.ToLower(x.User.Name) > strings.ToLower(y.User.Name) },
		"oldest_sign_in":    func(x, y *Billable) bool { return signIn(x) < signIn(y) },
		"recent_sign_in":    func(x, y *Billable) bool { return signIn(x) > signIn(y) },
		"last_activity_on_asc": func(x, y *Billable) bool {
			return x.User.LastActivityOn < y.User.LastActivityOn
		},
		"last_activity_on_desc": func(x, y *Billable) bool {
			return x.User.LastActivityOn > y.User.LastActivityOn
		},
	}
	if f, ok := less[sortBy]; ok {
		sort.SliceStable(out, func(i, j int) bool { return f(&out[i], &out[j]) })
	}
	list, info := model.PageOf(out, page)
	return list, info, nil
}

func signIn(b *Billable) int64 {
	if b.User.LastSignInAt == nil {
		return 0
	}
	return b.User.LastSignInAt.UnixMicro()
}

// BillableMemberships lists one billable user's direct memberships in the
// tree, with the sources' names.
func (s *Service) BillableMemberships(ctx context.Context, a auth.Actor, ref string, userID int64, page model.Page) ([]model.Member, model.PageInfo, map[string]map[int64][2]string, error) {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, nil, err
	}
	ms, err := s.db.MembershipsInTree(ctx, src.Traversal, userID)
	if err != nil {
		return nil, model.PageInfo{}, nil, err
	}
	if len(ms) == 0 {
		return nil, model.PageInfo{}, nil, model.NotFound("User")
	}
	ms, info := model.PageOf(ms, page)
	ids := map[string][]int64{}
	for _, m := range ms {
		ids[m.SourceType] = append(ids[m.SourceType], m.SourceID)
	}
	names := map[string]map[int64][2]string{}
	for t, list := range ids {
		if names[t], err = s.db.SourceNames(ctx, t, list); err != nil {
			return nil, model.PageInfo{}, nil, err
		}
	}
	return ms, info, names, nil
}

// RemoveBillable removes a user from a top-level group, its subgroups and
// projects.
func (s *Service) RemoveBillable(ctx context.Context, a auth.Actor, ref string, userID int64) error {
	src, err := s.rootGroup(ctx, a, ref)
	if err != nil {
		return err
	}
	ms, err := s.db.MembershipsInTree(ctx, src.Traversal, userID)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return model.NotFound("User")
	}
	for _, m := range ms {
		if m.SourceType == model.SourceNamespace && m.SourceID == src.ID && m.AccessLevel == model.Owner {
			if err := s.keepOwner(ctx, src); err != nil {
				return err
			}
		}
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, m := range ms {
			if err := tx.DeleteMember(ctx, m.ID); err != nil {
				return err
			}
		}
		return tx.RefreshAuthorizations(ctx, userID)
	})
}
