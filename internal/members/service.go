// Package members holds the rules for memberships of projects and groups:
// direct and inherited member lists, adding, changing and removing members,
// overrides, pending members and their approval, and billable members of
// top-level groups. Every change recomputes the affected users' access.
package members

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// ProjectResolver finds a project the actor may read (the projects service).
type ProjectResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// GroupResolver finds a group the actor may read (the groups service).
type GroupResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Service answers every membership question.
type Service struct {
	db       *store.DB
	projects ProjectResolver
	groups   GroupResolver
	// UserCap, when positive, is how many billable users a top-level group
	// takes before new members wait for an owner's approval.
	userCap int
	now     func() time.Time
}

// New returns the members service.
func New(db *store.DB, projects ProjectResolver, groups GroupResolver, userCap int) *Service {
	return &Service{db: db, projects: projects, groups: groups, userCap: userCap, now: db.Now}
}

func (s *Service) today() string { return s.now().UTC().Format(model.DateLayout) }

// Source is a resolved project or group with the actor's access.
type Source struct {
	Type      string // model.SourceProject or model.SourceNamespace
	ID        int64
	Project   *model.Project
	Group     *model.Group
	Access    model.AccessLevel
	Traversal string // the group tree the source belongs to
}

func (src Source) resource() auth.Resource {
	return auth.Resource{Project: src.Project, Group: src.Group, Access: src.Access}
}

// Kinds of member sources as the API paths name them.
const (
	Projects = "projects"
	Groups   = "groups"
)

// resolve finds the source of a members call; every members endpoint needs
// a signed-in user.
func (s *Service) resolve(ctx context.Context, a auth.Actor, kind, ref string) (Source, error) {
	if !a.SignedIn() {
		return Source{}, model.Unauthorized("")
	}
	if kind == Projects {
		p, acc, err := s.projects.Resolve(ctx, a, ref)
		if err != nil {
			return Source{}, err
		}
		return Source{Type: model.SourceProject, ID: p.ID, Project: &p, Access: acc, Traversal: p.Namespace.Traversal}, nil
	}
	g, acc, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return Source{}, err
	}
	return Source{Type: model.SourceNamespace, ID: g.ID, Group: &g, Access: acc, Traversal: g.Traversal}, nil
}

func (s *Service) canAdmin(a auth.Actor, src Source) bool {
	if src.Type == model.SourceProject {
		return auth.Can(a, auth.AdminProjectMembers, src.resource())
	}
	return auth.Can(a, auth.AdminGroupMembers, src.resource())
}

// Filter narrows member lists.
type Filter struct {
	Query   string
	UserIDs []int64
}

// List returns a source's direct members.
func (s *Service) List(ctx context.Context, a auth.Actor, kind, ref string, f Filter, page model.Page) ([]model.Member, model.PageInfo, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListMembers(ctx, src.Type, src.ID, store.MemberFilter{Query: f.Query, UserIDs: f.UserIDs}, page)
}

// ListAll returns everyone with access to a source: direct members,
// members of the groups above, of groups a project is shared with and of
// groups the source's group (or one above) is shared with — the last only
// for invited groups the actor can see — each user once with their
// highest level.
func (s *Service) ListAll(ctx context.Context, a auth.Actor, kind, ref string, f Filter, page model.Page) ([]model.Member, model.PageInfo, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	all, err := s.inherited(ctx, a, src, f)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info := model.PageOf(all, page)
	return list, info, nil
}

func (s *Service) inherited(ctx context.Context, a auth.Actor, src Source, f Filter) ([]model.Member, error) {
	mf := store.MemberFilter{Query: f.Query, UserIDs: f.UserIDs}
	rows, err := s.db.MembershipsReaching(ctx, src.Type, src.ID, mf, s.today())
	if err != nil {
		return nil, err
	}
	shared, err := s.db.MembershipsSharedInto(ctx, src.Type, src.ID, mf, s.today())
	if err != nil {
		return nil, err
	}
	visible := map[int64]bool{}
	for _, m := range shared {
		ok, seen := visible[m.SourceID]
		if !seen {
			_, _, err := s.groups.Resolve(ctx, a, strconv.FormatInt(m.SourceID, 10))
			if err != nil && model.KindOf(err) != model.KindNotFound {
				return nil, err
			}
			ok = err == nil
			visible[m.SourceID] = ok
		}
		if ok {
			rows = append(rows, m)
		}
	}
	best := map[int64]model.Member{}
	for _, m := range rows {
		cur, ok := best[m.UserID]
		// The highest level wins; on a tie the direct membership does.
		if !ok || m.AccessLevel > cur.AccessLevel || (m.AccessLevel == cur.AccessLevel && m.SourceType == src.Type && m.SourceID == src.ID) {
			best[m.UserID] = m
		}
	}
	out := make([]model.Member, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UserID < out[j].UserID })
	return out, nil
}

// Get returns a user's direct membership, or 404 Not found.
func (s *Service) Get(ctx context.Context, a auth.Actor, kind, ref string, userID int64) (model.Member, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return model.Member{}, err
	}
	m, err := s.db.Member(ctx, src.Type, src.ID, userID)
	if errors.Is(err, model.ErrNotFound) {
		return m, model.RecordNotFound()
	}
	return m, err
}

// GetAll returns a user's highest membership reaching a source.
func (s *Service) GetAll(ctx context.Context, a auth.Actor, kind, ref string, userID int64) (model.Member, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return model.Member{}, err
	}
	all, err := s.inherited(ctx, a, src, Filter{UserIDs: []int64{userID}})
	if err != nil {
		return model.Member{}, err
	}
	if len(all) == 0 {
		return model.Member{}, model.RecordNotFound()
	}
	return all[0], nil
}

// AddInput adds one or several users.
type AddInput struct {
	UserRefs       []string // ids or usernames
	AccessLevel    model.AccessLevel
	ExpiresAt      string
	InviteSource   string
	TasksToBeDone  []string
	TasksProjectID *int64
}

// AddResult reports a multi-user add: which users failed and why.
type AddResult struct {
	Member *model.Member     // single add
	Errors map[string]string // multi-user add, by user reference
}

// Add makes users members of a source.
func (s *Service) Add(ctx context.Context, a auth.Actor, kind, ref string, in AddInput) (AddResult, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return AddResult{}, err
	}
	if !s.canAdmin(a, src) {
		return AddResult{}, model.Forbidden("")
	}
	if err := s.checkLevel(src, in.AccessLevel, in.ExpiresAt); err != nil {
		return AddResult{}, err
	}
	if in.TasksProjectID != nil {
		p, _, err := s.projects.Resolve(ctx, a, strconv.FormatInt(*in.TasksProjectID, 10))
		if err != nil {
			return AddResult{}, model.NotFound("Project")
		}
		if src.Type == model.SourceNamespace && !strings.HasPrefix(p.Namespace.Traversal, src.Traversal) {
			return AddResult{}, model.Invalid("tasks_project_id", "is not in the group")
		}
	}
	single := len(in.UserRefs) == 1
	res := AddResult{Errors: map[string]string{}}
	for _, uref := range in.UserRefs {
		m, err := s.addOne(ctx, a, src, uref, in)
		if single {
			if err != nil {
				return res, err
			}
			res.Member = &m
			return res, nil
		}
		if err != nil {
			res.Errors[uref] = errorText(err)
		}
	}
	return res, nil
}

// errorText is the message of a failed add in a multi-user answer.
func errorText(err error) string {
	var e *model.Error
	if errors.As(err, &e) {
		if len(e.Fields) > 0 {
			var parts []string
			for k, v := range e.Fields {
				parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+strings.Join(v, ", "))
			}
			sort.Strings(parts)
			return strings.Join(parts, "; ")
		}
		return e.Message
	}
	return err.Error()
}

func (s *Service) checkLevel(src Source, level model.AccessLevel, expiresAt string) error {
	var f model.FieldErrors
	if !model.ValidMemberLevel(src.Type, level) {
		f.Add("access_level", "is not included in the list")
	}
	if expiresAt != "" && expiresAt < s.today() {
		f.Add("expires_at", "cannot be a date in the past")
	}
	return f.Err()
}

func (s *Service) user(ctx context.Context, ref string) (model.User, error) {
	u, err := s.db.UserByRef(ctx, ref)
	return u, model.NotFoundAs(err, "User")
}

func (s *Service) addOne(ctx context.Context, a auth.Actor, src Source, uref string, in AddInput) (model.Member, error) {
	u, err := s.user(ctx, uref)
	if err != nil {
		return model.Member{}, err
	}
	if _, err := s.db.Member(ctx, src.Type, src.ID, u.ID); err == nil {
		return model.Member{}, model.Conflict("Member already exists")
	} else if !errors.Is(err, model.ErrNotFound) {
		return model.Member{}, err
	}
	if err := s.checkInherited(ctx, src, u.ID, in.AccessLevel); err != nil {
		return model.Member{}, err
	}
	pending, err := s.overCap(ctx, src, u.ID)
	if err != nil {
		return model.Member{}, err
	}
	now := s.now().UTC()
	creator := a.UserID()
	m := model.Member{SourceType: src.Type, SourceID: src.ID, UserID: u.ID, AccessLevel: in.AccessLevel, ExpiresAt: in.ExpiresAt,
		CreatedByID: &creator, Pending: pending, InviteSource: in.InviteSource, CreatedAt: now, UpdatedAt: now, User: u}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateMember(ctx, &m); err != nil {
			return err
		}
		if src.Type == model.SourceProject && !pending {
			// GitLab's feed: the new member joined the project.
			if err := tx.AddEvent(ctx, &model.Event{ProjectID: src.ID, AuthorID: u.ID, Action: model.EventJoined}); err != nil {
				return err
			}
		}
		return tx.RefreshAuthorizations(ctx, u.ID)
	})
	if store.IsUnique(err, store.UniqueMember) {
		return m, model.Conflict("Member already exists")
	}
	return m, err
}

// checkInherited refuses a direct membership below what the user already
// has from a group above.
func (s *Service) checkInherited(ctx context.Context, src Source, userID int64, level model.AccessLevel) error {
	rows, err := s.db.MembershipsReaching(ctx, src.Type, src.ID, store.MemberFilter{UserIDs: []int64{userID}}, s.today())
	if err != nil {
		return err
	}
	for _, m := range rows {
		if m.SourceType == src.Type && m.SourceID == src.ID {
			continue
		}
		if m.SourceType == model.SourceNamespace && m.AccessLevel > level {
			names, err := s.db.SourceNames(ctx, model.SourceNamespace, []int64{m.SourceID})
			if err != nil {
				return err
			}
			return model.Invalid("access_level", fmt.Sprintf("should be greater than or equal to %s inherited membership from group %s",
				model.RoleName(m.AccessLevel), names[m.SourceID][0]))
		}
	}
	return nil
}

// overCap reports whether a new member of the source's tree must wait for
// approval because the top-level group reached its user cap.
func (s *Service) overCap(ctx context.Context, src Source, userID int64) (bool, error) {
	if s.userCap <= 0 {
		return false, nil
	}
	root := rootTraversal(src.Traversal)
	users, err := s.db.BillableUsers(ctx, root)
	if err != nil {
		return false, err
	}
	seen := map[int64]bool{}
	for _, m := range users {
		if !m.Pending {
			seen[m.UserID] = true
		}
	}
	return !seen[userID] && len(seen) >= s.userCap, nil
}

func rootTraversal(t string) string {
	if i := strings.Index(t, "/"); i >= 0 {
		return t[:i+1]
	}
	return t
}

// Update changes a direct member's level and expiry.
func (s *Service) Update(ctx context.Context, a auth.Actor, kind, ref string, userID int64, level model.AccessLevel, expiresAt *string) (model.Member, error) {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return model.Member{}, err
	}
	if !s.canAdmin(a, src) {
		return model.Member{}, model.Forbidden("")
	}
	m, err := s.db.Member(ctx, src.Type, src.ID, userID)
	if errors.Is(err, model.ErrNotFound) {
		return m, model.RecordNotFound()
	}
	if err != nil {
		return m, err
	}
	exp := m.ExpiresAt
	if expiresAt != nil {
		exp = *expiresAt
	}
	if err := s.checkLevel(src, level, exp); err != nil {
		return m, err
	}
	if err := s.checkInherited(ctx, src, userID, level); err != nil {
		return m, err
	}
	if m.AccessLevel == model.Owner && level < model.Owner {
		if err := s.keepOwner(ctx, src); err != nil {
			return m, err
		}
	}
	m.AccessLevel, m.ExpiresAt = level, exp
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateMember(ctx, &m); err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, userID)
	})
	return m, err
}

// keepOwner refuses a change that would leave a group without an owner.
func (s *Service) keepOwner(ctx context.Context, src Source) error {
	if src.Type != model.SourceNamespace {
		return nil
	}
	n, err := s.db.OwnerCount(ctx, src.ID, s.today())
	if err != nil {
		return err
	}
	if n <= 1 {
		return model.Forbidden("A group must keep at least one owner")
	}
	return nil
}

// Remove ends a direct membership; for a group, the user's memberships in
// its subgroups and projects go too unless skipSubresources.
func (s *Service) Remove(ctx context.Context, a auth.Actor, kind, ref string, userID int64, skipSubresources bool) error {
	src, err := s.resolve(ctx, a, kind, ref)
	if err != nil {
		return err
	}
	m, err := s.db.Member(ctx, src.Type, src.ID, userID)
	if errors.Is(err, model.ErrNotFound) {
		return model.RecordNotFound()
	}
	if err != nil {
		return err
	}
	// Members may leave; others need the right to manage members.
	if !s.canAdmin(a, src) && !a.Is(userID) {
		return model.Forbidden("")
	}
	if m.AccessLevel == model.Owner {
		if err := s.keepOwner(ctx, src); err != nil {
			return err
		}
	}
	var below []model.Member
	if src.Type == model.SourceNamespace && !skipSubresources {
		if below, err = s.db.MembershipsInTree(ctx, src.Traversal, userID); err != nil {
			return err
		}
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteMember(ctx, m.ID); err != nil {
			return err
		}
		for _, b := range below {
			if b.ID != m.ID {
				if err := tx.DeleteMember(ctx, b.ID); err != nil {
					return err
				}
			}
		}
		if src.Type == model.SourceProject && !m.Pending {
			// GitLab's feed: the member left the project.
			if err := tx.AddEvent(ctx, &model.Event{ProjectID: src.ID, AuthorID: userID, Action: model.EventLeft}); err != nil {
				return err
			}
		}
		return tx.RefreshAuthorizations(ctx, userID)
	})
}

// SetOverride marks a group member so directory sync leaves their level.
func (s *Service) SetOverride(ctx context.Context, a auth.Actor, ref string, userID int64, on bool) (model.Member, error) {
	src, err := s.resolve(ctx, a, Groups, ref)
	if err != nil {
		return model.Member{}, err
	}
	if !s.canAdmin(a, src) {
		return model.Member{}, model.Forbidden("")
	}
	m, err := s.db.Member(ctx, src.Type, src.ID, userID)
	if errors.Is(err, model.ErrNotFound) {
		return m, model.RecordNotFound()
	}
	if err != nil {
		return m, err
	}
	m.Override = on
	return m, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateMember(ctx, &m) })
}
