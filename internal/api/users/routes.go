// Package users serves the users area: users, the current user, status
// and preferences.
package users

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/users"
)

// Handlers answer the users area.
type Handlers struct {
	users      *users.Service
	attributes *attributes.Service
	r          *entity.Renderer
}

// New returns the users area.
func New(u *users.Service, a *attributes.Service, r *entity.Renderer) *Handlers {
	return &Handlers{users: u, attributes: a, r: r}
}

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token := endpoint.Public, endpoint.Token
	api, user := endpoint.ScopeAPI, endpoint.ScopeUser
	return []endpoint.Route{
		row("GET", "/users", public, user, parsed, h.listUsers),
		row("POST", "/users", token, api, parsed, h.createUser),
		row("GET", "/users/{id}", public, user, parsed, h.getUser),
		row("PUT", "/users/{id}", token, api, parsed, h.updateUser),
		row("DELETE", "/users/{id}", token, api, parsed, h.deleteUser),
		row("DELETE", "/users/{id}/identities/{provider}", token, api, parsed, h.deleteIdentity),
		row("POST", "/users/{id}/block", token, api, parsed, func(c *endpoint.Call) error { return h.stateChange(c, h.users.Block) }),
		row("POST", "/users/{id}/unblock", token, api, parsed, func(c *endpoint.Call) error { return h.stateChange(c, h.users.Unblock) }),
		row("POST", "/users/{id}/deactivate", token, api, parsed, func(c *endpoint.Call) error { return h.stateChange(c, h.users.Deactivate) }),
		row("POST", "/users/{id}/activate", token, api, parsed, func(c *endpoint.Call) error { return h.stateChange(c, h.users.Activate) }),
		row("GET", "/users/{user_id}/status", public, user, parsed, h.statusOf),
		row("GET", "/users/{user_id}/memberships", public, user, parsed, h.memberships),

		row("GET", "/user", token, user, parsed, h.currentUser),
		row("GET", "/user/status", token, user, parsed, h.ownStatus),
		row("PUT", "/user/status", token, api, parsed, func(c *endpoint.Call) error { return h.setStatus(c, false) }),
		row("PATCH", "/user/status", token, api, parsed, func(c *endpoint.Call) error { return h.setStatus(c, true) }),
		row("GET", "/user/preferences", token, user, parsed, h.getPreferences),
		row("PUT", "/user/preferences", token, api, parsed, h.putPreferences),
	}
}
