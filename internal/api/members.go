package api

import (
	"fmt"
	"net/http"
	"strconv"

	"quarry/internal/members"
	"quarry/internal/model"
	"quarry/internal/projects"
)

type memberJSON struct {
	userBasicJSON
	AccessLevel       int            `json:"access_level"`
	CreatedAt         apiTime        `json:"created_at"`
	CreatedBy         *userBasicJSON `json:"created_by,omitempty"`
	ExpiresAt         *string        `json:"expires_at"`
	Email             *string        `json:"email,omitempty"`
	GroupSAMLIdentity *struct{}      `json:"group_saml_identity"`
	MembershipState   string         `json:"membership_state"`
	Override          *bool          `json:"override,omitempty"`
}

func (c *call) members(ms []model.Member) ([]memberJSON, error) {
	var creatorIDs []int64
	for _, m := range ms {
		if m.CreatedByID != nil {
			creatorIDs = append(creatorIDs, *m.CreatedByID)
		}
	}
	creators, err := c.s.Users.Basics(c.r.Context(), creatorIDs)
	if err != nil {
		return nil, err
	}
	out := make([]memberJSON, len(ms))
	for i := range ms {
		m := &ms[i]
		j := memberJSON{userBasicJSON: c.s.userBasic(&m.User), AccessLevel: int(m.AccessLevel), CreatedAt: apiTime(m.CreatedAt),
			ExpiresAt: strPtr(m.ExpiresAt), Email: strPtr(m.User.PublicEmail), MembershipState: "active"}
		if m.Pending {
			j.MembershipState = "awaiting"
		}
		if m.SourceType == model.SourceNamespace {
			o := m.Override
			j.Override = &o
		}
		if m.CreatedByID != nil {
			if u, ok := creators[*m.CreatedByID]; ok {
				b := c.s.userBasic(&u)
				j.CreatedBy = &b
			}
		}
		out[i] = j
	}
	return out, nil
}

func (c *call) member(status int, m model.Member) error {
	list, err := c.members([]model.Member{m})
	if err != nil {
		return err
	}
	return c.json(status, list[0])
}

func memberFilter(p *Params) members.Filter {
	f := members.Filter{}
	f.Query, _ = p.String("query")
	if ids, ok := p.Strings("user_ids"); ok {
		for _, s := range ids {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				p.fail("user_ids is invalid")
				break
			}
			f.UserIDs = append(f.UserIDs, n)
		}
	}
	return f
}

func (c *call) listMembers(kind string, all bool) error {
	f := memberFilter(c.p)
	pg, err := c.page()
	if err != nil {
		return err
	}
	list := c.s.Members.List
	if all {
		list = c.s.Members.ListAll
	}
	ms, info, err := list(c.r.Context(), c.actor, kind, c.r.PathValue("id"), f, pg)
	if err != nil {
		return err
	}
	out, err := c.members(ms)
	if err != nil {
		return err
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

func (c *call) getMember(kind string, all bool) error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	get := c.s.Members.Get
	if all {
		get = c.s.Members.GetAll
	}
	m, err := get(c.r.Context(), c.actor, kind, c.r.PathValue("id"), uid)
	if err != nil {
		return err
	}
	return c.member(http.StatusOK, m)
}

var memberLevels = []string{"10", "20", "30", "40", "50"}

func (c *call) addMember(kind string) error {
	p := c.p
	if !p.Has("user_id") && !p.Has("username") {
		p.fail("user_id, username are missing, exactly one parameter must be provided")
	} else if p.Has("user_id") && p.Has("username") {
		p.fail("user_id, username are mutually exclusive")
	}
	p.Require("access_level")
	level, _ := p.Int("access_level")
	var in members.AddInput
	in.AccessLevel = model.AccessLevel(level)
	for _, key := range []string{"user_id", "username"} {
		if refs, ok := p.Strings(key); ok {
			in.UserRefs = refs
		}
	}
	in.ExpiresAt, _ = p.Date("expires_at")
	in.InviteSource, _ = p.String("invite_source")
	p.AllOrNoneOf("tasks_to_be_done", "tasks_project_id")
	if tasks, ok := p.Strings("tasks_to_be_done"); ok {
		for _, t := range tasks {
			if t != "ci" && t != "code" && t != "issues" {
				p.fail("tasks_to_be_done does not have a valid value")
				break
			}
		}
		in.TasksToBeDone = tasks
	}
	if id, ok := p.Int("tasks_project_id"); ok {
		in.TasksProjectID = &id
	}
	if err := p.Err(); err != nil {
		return err
	}
	if len(in.UserRefs) == 0 {
		return model.Param("user_id is empty")
	}
	res, err := c.s.Members.Add(c.r.Context(), c.actor, kind, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	if res.Member != nil {
		return c.member(http.StatusCreated, *res.Member)
	}
	if len(res.Errors) == 0 {
		return c.json(http.StatusCreated, map[string]string{"status": "success"})
	}
	return c.json(http.StatusCreated, map[string]any{"status": "error", "message": res.Errors})
}

func (c *call) updateMember(kind string) error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	c.p.Require("access_level")
	level, _ := c.p.Int("access_level")
	var expires *string
	if c.p.Has("expires_at") {
		e, _ := c.p.Date("expires_at")
		expires = &e
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	m, err := c.s.Members.Update(c.r.Context(), c.actor, kind, c.r.PathValue("id"), uid, model.AccessLevel(level), expires)
	if err != nil {
		return err
	}
	return c.member(http.StatusOK, m)
}

func (c *call) removeMember(kind string) error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	skip := c.p.Flag("skip_subresources")
	_ = c.p.Flag("unassign_issuables") // nothing is assigned yet: no issues or merge requests exist
	if err := c.p.Err(); err != nil {
		return err
	}
	if err := c.s.Members.Remove(c.r.Context(), c.actor, kind, c.r.PathValue("id"), uid, skip); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) memberOverride(on bool) error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	m, err := c.s.Members.SetOverride(c.r.Context(), c.actor, c.r.PathValue("id"), uid, on)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !on {
		status = http.StatusOK
	}
	return c.member(status, m)
}

func (c *call) approveMember() error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	if err := c.s.Members.Approve(c.r.Context(), c.actor, c.r.PathValue("id"), uid); err != nil {
		return err
	}
	return c.json(http.StatusOK, map[string]string{"status": "success"})
}

func (c *call) approveAllMembers() error {
	if err := c.s.Members.ApproveAll(c.r.Context(), c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.json(http.StatusCreated, map[string]string{"status": "success"})
}

func (c *call) pendingMembers() error {
	pg, err := c.page()
	if err != nil {
		return err
	}
	ms, err := c.s.Members.Pending(c.r.Context(), c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	out, err := c.members(ms)
	if err != nil {
		return err
	}
	return c.pageOf(pg, out)
}

// pageOf serves one page of a list computed whole.
func pageOf[T any](c *call, pg model.Page, all []T) error {
	start := min(pg.Offset(), len(all))
	end := min(start+pg.PerPage, len(all))
	c.paginate(pg, model.PageInfo{Total: len(all), TotalKnown: true, HasMore: end < len(all)})
	return c.json(http.StatusOK, all[start:end])
}

func (c *call) pageOf(pg model.Page, all []memberJSON) error { return pageOf(c, pg, all) }

type billableJSON struct {
	userBasicJSON
	Email          *string `json:"email,omitempty"`
	LastActivityOn *string `json:"last_activity_on"`
	MembershipType string  `json:"membership_type"`
	Removable      bool    `json:"removable"`
	CreatedAt      apiTime `json:"created_at"`
	IsLastOwner    bool    `json:"is_last_owner"`
}

func (c *call) billableMembers() error {
	search, _ := c.p.String("search")
	sortBy, _ := c.p.Enum("sort", members.BillableSorts...)
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, err := c.s.Members.BillableMembers(c.r.Context(), c.actor, c.r.PathValue("id"), search, sortBy)
	if err != nil {
		return err
	}
	out := make([]billableJSON, len(list))
	for i := range list {
		b := &list[i]
		out[i] = billableJSON{userBasicJSON: c.s.userBasic(&b.User), Email: strPtr(b.User.PublicEmail), LastActivityOn: strPtr(b.User.LastActivityOn),
			MembershipType: b.MembershipType, Removable: true, CreatedAt: apiTime(b.JoinedAt.CreatedAt)}
	}
	return pageOf(c, pg, out)
}

type billableMembershipJSON struct {
	ID               int64   `json:"id"`
	SourceID         int64   `json:"source_id"`
	SourceFullName   string  `json:"source_full_name"`
	SourceMembersURL string  `json:"source_members_url"`
	CreatedAt        apiTime `json:"created_at"`
	ExpiresAt        *string `json:"expires_at"`
	AccessLevel      struct {
		StringValue  string `json:"string_value"`
		IntegerValue int    `json:"integer_value"`
	} `json:"access_level"`
}

func (c *call) billableMemberships() error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	pg, err := c.page()
	if err != nil {
		return err
	}
	ms, names, err := c.s.Members.BillableMemberships(c.r.Context(), c.actor, c.r.PathValue("id"), uid)
	if err != nil {
		return err
	}
	out := make([]billableMembershipJSON, len(ms))
	for i, m := range ms {
		j := billableMembershipJSON{ID: m.ID, SourceID: m.SourceID, SourceFullName: names[m.SourceType][m.SourceID][0],
			CreatedAt: apiTime(m.CreatedAt), ExpiresAt: strPtr(m.ExpiresAt)}
		path := names[m.SourceType][m.SourceID][1]
		if m.SourceType == model.SourceProject {
			j.SourceMembersURL = c.s.externalURL + "/" + path + "/-/project_members"
		} else {
			j.SourceMembersURL = c.s.externalURL + "/groups/" + path + "/-/group_members"
		}
		j.AccessLevel.StringValue, j.AccessLevel.IntegerValue = model.RoleName(m.AccessLevel), int(m.AccessLevel)
		out[i] = j
	}
	return pageOf(c, pg, out)
}

func (c *call) removeBillable() error {
	uid, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	if err := c.s.Members.RemoveBillable(c.r.Context(), c.actor, c.r.PathValue("id"), uid); err != nil {
		return err
	}
	return c.noContent()
}

// Protected branches.

type branchAccessJSON struct {
	ID                     int64  `json:"id"`
	AccessLevel            *int   `json:"access_level"`
	AccessLevelDescription string `json:"access_level_description"`
	DeployKeyID            *int64 `json:"deploy_key_id"`
	UserID                 *int64 `json:"user_id"`
	GroupID                *int64 `json:"group_id"`
}

type protectedBranchJSON struct {
	ID                        int64              `json:"id"`
	Name                      string             `json:"name"`
	PushAccessLevels          []branchAccessJSON `json:"push_access_levels"`
	MergeAccessLevels         []branchAccessJSON `json:"merge_access_levels"`
	UnprotectAccessLevels     []branchAccessJSON `json:"unprotect_access_levels"`
	AllowForcePush            bool               `json:"allow_force_push"`
	CodeOwnerApprovalRequired bool               `json:"code_owner_approval_required"`
}

func branchAccess(list []model.BranchAccess) []branchAccessJSON {
	out := make([]branchAccessJSON, len(list))
	for i, a := range list {
		j := branchAccessJSON{ID: a.ID, UserID: a.UserID, GroupID: a.GroupID}
		switch {
		case a.AccessLevel != nil:
			l := int(*a.AccessLevel)
			j.AccessLevel, j.AccessLevelDescription = &l, model.BranchAccessDescription(*a.AccessLevel)
		case a.UserID != nil:
			j.AccessLevelDescription = fmt.Sprintf("user %d", *a.UserID)
		case a.GroupID != nil:
			j.AccessLevelDescription = fmt.Sprintf("group %d", *a.GroupID)
		}
		out[i] = j
	}
	return out
}

func protectedBranch(b model.ProtectedBranch) protectedBranchJSON {
	return protectedBranchJSON{ID: b.ID, Name: b.Name, PushAccessLevels: branchAccess(b.Push), MergeAccessLevels: branchAccess(b.Merge),
		UnprotectAccessLevels: branchAccess(b.Unprotect), AllowForcePush: b.AllowForcePush, CodeOwnerApprovalRequired: b.CodeOwnerApprovalRequired}
}

func (c *call) listProtectedBranches() error {
	search, _ := c.p.String("search")
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, err := c.s.Projects.ProtectedBranches(c.r.Context(), c.actor, c.r.PathValue("id"), search)
	if err != nil {
		return err
	}
	out := make([]protectedBranchJSON, len(list))
	for i := range list {
		out[i] = protectedBranch(list[i])
	}
	return pageOf(c, pg, out)
}

func (c *call) getProtectedBranch() error {
	b, err := c.s.Projects.ProtectedBranch(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("name"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, protectedBranch(b))
}

var branchLevels = []string{"0", "30", "40", "60"}

// protectInput reads the levels and grants of a protection.
func protectInput(p *Params) projects.ProtectInput {
	var in projects.ProtectInput
	in.Name, _ = p.String("name")
	for key, dst := range map[string]**model.AccessLevel{"push_access_level": &in.PushAccessLevel,
		"merge_access_level": &in.MergeAccessLevel, "unprotect_access_level": &in.UnprotectAccessLevel} {
		if v, ok := p.Enum(key, branchLevels...); ok {
			n, _ := strconv.Atoi(v)
			l := model.AccessLevel(n)
			*dst = &l
		}
	}
	in.AllowForcePush = p.BoolPtr("allow_force_push")
	in.CodeOwnerApprovalRequired = p.BoolPtr("code_owner_approval_required")
	for key, dst := range map[string]*[]model.BranchAccess{"allowed_to_push": &in.AllowedToPush,
		"allowed_to_merge": &in.AllowedToMerge, "allowed_to_unprotect": &in.AllowedToUnprotect} {
		*dst = grants(p, key)
	}
	return in
}

// grants reads "allowed_to_push[][access_level]=40" style arrays, sent as
// JSON arrays of objects.
func grants(p *Params, key string) []model.BranchAccess {
	vals, ok := p.Strings(key)
	if !ok {
		return nil
	}
	out := []model.BranchAccess{}
	for _, v := range vals {
		var g struct {
			AccessLevel *int   `json:"access_level"`
			UserID      *int64 `json:"user_id"`
			GroupID     *int64 `json:"group_id"`
		}
		if err := jsonUnmarshal(v, &g); err != nil {
			p.fail("%s is invalid", key)
			return nil
		}
		var a model.BranchAccess
		switch {
		case g.AccessLevel != nil:
			l := model.AccessLevel(*g.AccessLevel)
			a.AccessLevel = &l
		case g.UserID != nil:
			a.UserID = g.UserID
		case g.GroupID != nil:
			a.GroupID = g.GroupID
		default:
			p.fail("%s is invalid", key)
			return nil
		}
		out = append(out, a)
	}
	return out
}

func (c *call) protectBranch() error {
	c.p.Require("name")
	in := protectInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	b, err := c.s.Projects.Protect(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, protectedBranch(b))
}

func (c *call) updateProtectedBranch() error {
	in := protectInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	b, err := c.s.Projects.UpdateProtection(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("name"), in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, protectedBranch(b))
}

func (c *call) unprotectBranch() error {
	if err := c.s.Projects.Unprotect(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("name")); err != nil {
		return err
	}
	return c.noContent()
}
