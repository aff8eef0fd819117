// Package groups serves the groups area: groups, subgroups and
// namespaces.
package groups

import (
	"context"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/groups"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// Handlers answer the groups area.
type Handlers struct {
	groups     *groups.Service
	projects   *projects.Service
	attributes *attributes.Service
	imports    ImportStates
	r          *entity.Renderer
}

// ImportStates tells how the import that made a group went (ok false
// for a group not imported).
type ImportStates interface {
	ImportState(ctx context.Context, groupID int64) (i model.GroupImport, ok bool, err error)
}

// New returns the groups area.
func New(g *groups.Service, p *projects.Service, a *attributes.Service, imports ImportStates, r *entity.Renderer) *Handlers {
	return &Handlers{groups: g, projects: p, attributes: a, imports: imports, r: r}
}

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("GET", "/groups", public, api, parsed, h.listGroups),
		row("POST", "/groups", token, api, parsed, h.createGroup),
		row("GET", "/groups/{id}", public, api, parsed, h.getGroup),
		row("PUT", "/groups/{id}", token, api, parsed, h.updateGroup),
		row("DELETE", "/groups/{id}", token, api, parsed, h.deleteGroup),
		row("POST", "/groups/{id}/transfer", token, api, parsed, h.transferGroup),
		row("POST", "/groups/{id}/restore", token, api, parsed, h.restoreGroup),
		row("POST", "/groups/{id}/share", token, api, parsed, h.shareGroup),
		row("DELETE", "/groups/{id}/share/{group_id}", token, api, parsed, h.unshareGroup),
		row("GET", "/groups/{id}/subgroups", public, api, parsed, func(c *endpoint.Call) error { return h.subgroups(c, false) }),
		row("GET", "/groups/{id}/descendant_groups", public, api, parsed, func(c *endpoint.Call) error { return h.subgroups(c, true) }),

		row("GET", "/namespaces", token, api, parsed, h.listNamespaces),
		row("GET", "/namespaces/{id}", token, api, parsed, h.getNamespace),
		row("GET", "/namespaces/{id}/exists", token, api, parsed, h.namespaceExists),
	}
}
