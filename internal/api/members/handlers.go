package members

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/members"
	"quarry/internal/model"
)

func (h *Handlers) render(c *endpoint.Call, ms []model.Member) ([]entity.Member, error) {
	var creatorIDs []int64
	for _, m := range ms {
		if m.CreatedByID != nil {
			creatorIDs = append(creatorIDs, *m.CreatedByID)
		}
	}
	creators, err := h.users.Basics(c.Ctx(), creatorIDs)
	if err != nil {
		return nil, err
	}
	out := make([]entity.Member, len(ms))
	for i := range ms {
		m := &ms[i]
		j := entity.Member{UserBasic: h.r.UserBasic(&m.User), AccessLevel: int(m.AccessLevel), CreatedAt: entity.Time(m.CreatedAt),
			ExpiresAt: entity.StrPtr(m.ExpiresAt), Email: entity.StrPtr(m.User.PublicEmail), MembershipState: "active"}
		if m.Pending {
			j.MembershipState = "awaiting"
		}
		if m.SourceType == model.SourceNamespace {
			o := m.Override
			j.Override = &o
		}
		if m.CreatedByID != nil {
			if u, ok := creators[*m.CreatedByID]; ok {
				b := h.r.UserBasic(&u)
				j.CreatedBy = &b
			}
		}
		out[i] = j
	}
	return out, nil
}

func (h *Handlers) member(c *endpoint.Call, status int, m model.Member) error {
	list, err := h.render(c, []model.Member{m})
	if err != nil {
		return err
	}
	return c.JSON(status, list[0])
}

func memberFilter(p *endpoint.Params) members.Filter {
	f := members.Filter{}
	f.Query, _ = p.String("query")
	f.UserIDs, _ = p.IDs("user_ids")
	return f
}

func (h *Handlers) listMembers(c *endpoint.Call, kind string, all bool) error {
	f := memberFilter(c.P)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list := h.members.List
	if all {
		list = h.members.ListAll
	}
	ms, info, err := list(c.Ctx(), c.Actor, kind, c.Path("id"), f, pg)
	if err != nil {
		return err
	}
	out, err := h.render(c, ms)
	if err != nil {
		return err
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getMember(c *endpoint.Call, kind string, all bool) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	get := h.members.Get
	if all {
		get = h.members.GetAll
	}
	m, err := get(c.Ctx(), c.Actor, kind, c.Path("id"), uid)
	if err != nil {
		return err
	}
	return h.member(c, http.StatusOK, m)
}

func (h *Handlers) addMember(c *endpoint.Call, kind string) error {
	p := c.P
	if !p.Has("user_id") && !p.Has("username") {
		p.Fail("user_id, username are missing, exactly one parameter must be provided")
	} else if p.Has("user_id") && p.Has("username") {
		p.Fail("user_id, username are mutually exclusive")
	}
	p.Require("access_level")
	level, _ := p.Int("access_level")
	var in members.AddInput
	in.AccessLevel = model.AccessLevel(level)
	for _, key := range []string{"user_id", "username"} {
		if refs, ok := p.Unique(key); ok {
			in.UserRefs = refs
		}
	}
	in.ExpiresAt, _ = p.Date("expires_at")
	in.InviteSource, _ = p.String("invite_source")
	p.AllOrNoneOf("tasks_to_be_done", "tasks_project_id")
	if tasks, ok := p.Unique("tasks_to_be_done"); ok {
		for _, t := range tasks {
			if t != "ci" && t != "code" && t != "issues" {
				p.Fail("tasks_to_be_done does not have a valid value")
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
	res, err := h.members.Add(c.Ctx(), c.Actor, kind, c.Path("id"), in)
	if err != nil {
		return err
	}
	if res.Member != nil {
		return h.member(c, http.StatusCreated, *res.Member)
	}
	if len(res.Errors) == 0 {
		return c.JSON(http.StatusCreated, map[string]string{"status": "success"})
	}
	return c.JSON(http.StatusCreated, map[string]any{"status": "error", "message": res.Errors})
}

func (h *Handlers) updateMember(c *endpoint.Call, kind string) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	c.P.Require("access_level")
	level, _ := c.P.Int("access_level")
	var expires *string
	if c.P.Has("expires_at") {
		e, _ := c.P.Date("expires_at")
		expires = &e
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.members.Update(c.Ctx(), c.Actor, kind, c.Path("id"), uid, model.AccessLevel(level), expires)
	if err != nil {
		return err
	}
	return h.member(c, http.StatusOK, m)
}

func (h *Handlers) removeMember(c *endpoint.Call, kind string) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	skip := c.P.Flag("skip_subresources")
	_ = c.P.Flag("unassign_issuables") // nothing is assigned yet: no issues or merge requests exist
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.members.Remove(c.Ctx(), c.Actor, kind, c.Path("id"), uid, skip); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) memberOverride(c *endpoint.Call, on bool) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	m, err := h.members.SetOverride(c.Ctx(), c.Actor, c.Path("id"), uid, on)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !on {
		status = http.StatusOK
	}
	return h.member(c, status, m)
}

func (h *Handlers) approveMember(c *endpoint.Call) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	if err := h.members.Approve(c.Ctx(), c.Actor, c.Path("id"), uid); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "success"})
}

func (h *Handlers) approveAllMembers(c *endpoint.Call) error {
	if err := h.members.ApproveAll(c.Ctx(), c.Actor, c.Path("id")); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"status": "success"})
}

func (h *Handlers) pendingMembers(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ms, info, err := h.members.Pending(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out, err := h.render(c, ms)
	if err != nil {
		return err
	}
	return c.List(pg, info, out)
}

func (h *Handlers) billableMembers(c *endpoint.Call) error {
	search, _ := c.P.String("search")
	sortBy, _ := c.P.Enum("sort", members.BillableSorts...)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.members.BillableMembers(c.Ctx(), c.Actor, c.Path("id"), search, sortBy, pg)
	if err != nil {
		return err
	}
	out := make([]entity.BillableMember, len(list))
	for i := range list {
		b := &list[i]
		out[i] = entity.BillableMember{UserBasic: h.r.UserBasic(&b.User), Email: entity.StrPtr(b.User.PublicEmail), LastActivityOn: entity.StrPtr(b.User.LastActivityOn),
			MembershipType: b.MembershipType, Removable: true, CreatedAt: entity.Time(b.JoinedAt.CreatedAt)}
	}
	return c.List(pg, info, out)
}

func (h *Handlers) billableMemberships(c *endpoint.Call) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ms, info, names, err := h.members.BillableMemberships(c.Ctx(), c.Actor, c.Path("id"), uid, pg)
	if err != nil {
		return err
	}
	out := make([]entity.BillableMembership, len(ms))
	for i, m := range ms {
		j := entity.BillableMembership{ID: m.ID, SourceID: m.SourceID, SourceFullName: names[m.SourceType][m.SourceID][0],
			CreatedAt: entity.Time(m.CreatedAt), ExpiresAt: entity.StrPtr(m.ExpiresAt)}
		path := names[m.SourceType][m.SourceID][1]
		if m.SourceType == model.SourceProject {
			j.SourceMembersURL = h.r.ExternalURL + "/" + path + "/-/project_members"
		} else {
			j.SourceMembersURL = h.r.ExternalURL + "/groups/" + path + "/-/group_members"
		}
		j.AccessLevel.StringValue, j.AccessLevel.IntegerValue = model.RoleName(m.AccessLevel), int(m.AccessLevel)
		out[i] = j
	}
	return c.List(pg, info, out)
}

func (h *Handlers) removeBillable(c *endpoint.Call) error {
	uid, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	if err := h.members.RemoveBillable(c.Ctx(), c.Actor, c.Path("id"), uid); err != nil {
		return err
	}
	return c.NoContent()
}
