// Package milestones serves project and group milestones.
package milestones

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/milestones"
	"quarry/internal/model"
)

// Handlers answer the milestones area.
type Handlers struct {
	milestones *milestones.Service
	r          *entity.Renderer
}

// New returns the milestones area.
func New(m *milestones.Service, r *entity.Renderer) *Handlers { return &Handlers{milestones: m, r: r} }

// Routes are the area's rows: the same endpoints under projects and
// groups. Every row needs a signed-in caller (GitLab's authenticate!);
// the service answers 404 for a project or group the caller does not
// see and 403 for what its role does not allow.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, owner := range []struct {
		base  string
		group bool
	}{{"/projects/{id}/milestones", false}, {"/groups/{id}/milestones", true}} {
		o := func(c *endpoint.Call) model.OwnerRef {
			return model.OwnerRef{Group: owner.group, Ref: c.Path("id")}
		}
		group := owner.group
		rows = append(rows,
			row("GET", owner.base, token, api, parsed, func(c *endpoint.Call) error { return h.list(c, o(c), group) }),
			row("POST", owner.base, token, api, parsed, func(c *endpoint.Call) error { return h.create(c, o(c)) }),
			row("GET", owner.base+"/{milestone_id}", token, api, parsed, func(c *endpoint.Call) error { return h.get(c, o(c)) }),
			row("PUT", owner.base+"/{milestone_id}", token, api, parsed, func(c *endpoint.Call) error { return h.update(c, o(c)) }),
			row("DELETE", owner.base+"/{milestone_id}", token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, o(c)) }),
			row("GET", owner.base+"/{milestone_id}/merge_requests", token, api, parsed, func(c *endpoint.Call) error { return h.issuables(c, o(c)) }),
		)
	}
	return rows
}

func (h *Handlers) list(c *endpoint.Call, o model.OwnerRef, group bool) error {
	var in milestones.ListInput
	p := c.P
	if p.Has("include_ancestors") && p.Has("include_parent_milestones") {
		p.Fail("include_ancestors, include_parent_milestones are mutually exclusive")
	}
	in.State, _ = p.Enum("state", "active", "closed", "all")
	if ids, ok := p.IDs("iids"); ok {
		if len(ids) > milestones.MaxIIDs {
			p.Fail("iids has more than %d values", milestones.MaxIIDs)
		}
		in.IIDs = ids
	}
	in.Title, _ = p.String("title")
	in.Search, _ = p.String("search")
	anc, _ := p.Bool("include_ancestors")
	parents, _ := p.Bool("include_parent_milestones")
	in.IncludeAncestors = anc || parents
	in.UpdatedBefore, _ = p.Time("updated_before")
	in.UpdatedAfter, _ = p.Time("updated_after")
	if group {
		in.IncludeDescendants, _ = p.Bool("include_descendants")
		in.SearchTitle, _ = p.String("search_title")
		in.ContainingDate, _ = p.Date("containing_date")
		in.StartDate, _ = p.Date("start_date")
		in.EndDate, _ = p.Date("end_date")
	}
	if err := p.Err(); err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ms, info, err := h.milestones.List(c.Ctx(), c.Actor, o, in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Milestone, len(ms))
	for i := range ms {
		out[i] = h.r.Milestone(&ms[i])
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) get(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("milestone_id")
	if err != nil {
		return err
	}
	m, err := h.milestones.Get(c.Ctx(), c.Actor, o, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Milestone(&m))
}

// input reads the attributes; dates must be dates ("" clears one).
func input(p *endpoint.Params) milestones.Input {
	in := milestones.Input{Title: p.StringPtr("title"), Description: p.StringPtr("description")}
	for _, d := range []struct {
		key string
		dst **string
	}{{"due_date", &in.DueDate}, {"start_date", &in.StartDate}} {
		if p.IsNull(d.key) {
			empty := ""
			*d.dst = &empty
			continue
		}
		if v, ok := p.Date(d.key); ok {
			*d.dst = &v
		}
	}
	if t := in.Title; t != nil && len(*t) > 4*milestones.MaxTitle {
		p.Fail("title is too long")
	}
	if d := in.Description; d != nil && len(*d) > 4*milestones.MaxDescription {
		p.Fail("description is too long")
	}
	return in
}

func (h *Handlers) create(c *endpoint.Call, o model.OwnerRef) error {
	c.P.Require("title")
	in := input(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.milestones.Create(c.Ctx(), c.Actor, o, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Milestone(&m))
}

func (h *Handlers) update(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("milestone_id")
	if err != nil {
		return err
	}
	c.P.AtLeastOneOf("title", "description", "start_date", "due_date", "state_event")
	in := input(c.P)
	in.StateEvent, _ = c.P.Enum("state_event", "close", "activate")
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.milestones.Update(c.Ctx(), c.Actor, o, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Milestone(&m))
}

func (h *Handlers) delete(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("milestone_id")
	if err != nil {
		return err
	}
	if err := h.milestones.Delete(c.Ctx(), c.Actor, o, id); err != nil {
		return err
	}
	return c.NoContent()
}

// issuables lists a milestone's merge requests: Quarry's merge requests
// carry no milestone, so the list of an existing milestone is empty (its
// issues are the issues area's).
func (h *Handlers) issuables(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("milestone_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := h.milestones.Issuables(c.Ctx(), c.Actor, o, id); err != nil {
		return err
	}
	c.Paginate(pg, model.PageInfo{Total: 0, TotalKnown: true})
	return c.JSON(http.StatusOK, []any{})
}
