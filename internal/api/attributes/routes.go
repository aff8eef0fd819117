// Package attributes serves custom attributes of users, projects and
// groups (administrators only).
package attributes

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
)

// Handlers answer the custom attributes area.
type Handlers struct {
	attributes *attributes.Service
	r          *entity.Renderer
}

// New returns the custom attributes area.
func New(a *attributes.Service, r *entity.Renderer) *Handlers { return &Handlers{attributes: a, r: r} }

// Routes are the area's rows: the same four for users, projects and groups.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token := endpoint.Row, endpoint.Parsed, endpoint.Token
	api, user := endpoint.ScopeAPI, endpoint.ScopeUser
	var rows []endpoint.Route
	for _, kind := range []struct{ path, name string }{{"users", attributes.Users}, {"projects", attributes.Projects}, {"groups", attributes.Groups}} {
		name, base := kind.name, "/"+kind.path+"/{id}/custom_attributes"
		rows = append(rows,
			row("GET", base, token, user, parsed, func(c *endpoint.Call) error { return h.listCustomAttributes(c, name) }),
			row("GET", base+"/{key}", token, user, parsed, func(c *endpoint.Call) error { return h.getCustomAttribute(c, name) }),
			row("PUT", base+"/{key}", token, api, parsed, func(c *endpoint.Call) error { return h.putCustomAttribute(c, name) }),
			row("DELETE", base+"/{key}", token, api, parsed, func(c *endpoint.Call) error { return h.deleteCustomAttribute(c, name) }),
		)
	}
	return rows
}
