// Package members serves the members of projects and groups, pending
// and billable members.
package members

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/members"
	"quarry/internal/users"
)

// Handlers answer the members area.
type Handlers struct {
	members *members.Service
	users   *users.Service
	r       *entity.Renderer
}

// New returns the members area.
func New(m *members.Service, u *users.Service, r *entity.Renderer) *Handlers {
	return &Handlers{members: m, users: u, r: r}
}

// Routes are the area's rows: the same members endpoints for projects and
// groups, then those of groups alone.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, kind := range []string{members.Projects, members.Groups} {
		base := "/" + kind + "/{id}/members"
		rows = append(rows,
			row("GET", base, token, api, parsed, func(c *endpoint.Call) error { return h.listMembers(c, kind, false) }),
			row("GET", base+"/all", token, api, parsed, func(c *endpoint.Call) error { return h.listMembers(c, kind, true) }),
			row("GET", base+"/{user_id}", token, api, parsed, func(c *endpoint.Call) error { return h.getMember(c, kind, false) }),
			row("GET", base+"/all/{user_id}", token, api, parsed, func(c *endpoint.Call) error { return h.getMember(c, kind, true) }),
			row("POST", base, token, api, parsed, func(c *endpoint.Call) error { return h.addMember(c, kind) }),
			row("PUT", base+"/{user_id}", token, api, parsed, func(c *endpoint.Call) error { return h.updateMember(c, kind) }),
			row("DELETE", base+"/{user_id}", token, api, parsed, func(c *endpoint.Call) error { return h.removeMember(c, kind) }),
		)
	}
	return append(rows,
		row("POST", "/groups/{id}/members/{user_id}/override", token, api, parsed, func(c *endpoint.Call) error { return h.memberOverride(c, true) }),
		row("DELETE", "/groups/{id}/members/{user_id}/override", token, api, parsed, func(c *endpoint.Call) error { return h.memberOverride(c, false) }),
		row("PUT", "/groups/{id}/members/{user_id}/approve", token, api, parsed, h.approveMember),
		row("POST", "/groups/{id}/members/approve_all", token, api, parsed, h.approveAllMembers),
		row("GET", "/groups/{id}/pending_members", token, api, parsed, h.pendingMembers),
		row("GET", "/groups/{id}/billable_members", token, api, parsed, h.billableMembers),
		row("GET", "/groups/{id}/billable_members/{user_id}/memberships", token, api, parsed, h.billableMemberships),
		row("DELETE", "/groups/{id}/billable_members/{user_id}", token, api, parsed, h.removeBillable),
	)
}
