// Package geo serves geo nodes (GitLab's Geo nodes API): administrators
// manage the instance's nodes and read their statuses; secondaries push
// their status, authenticated by their node's credentials.
package geo

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/geo"
)

// Handlers answer the geo nodes area.
type Handlers struct {
	geo *geo.Service
	r   *entity.Renderer
}

// New returns the geo nodes area.
func New(g *geo.Service, r *entity.Renderer) *Handlers { return &Handlers{geo: g, r: r} }

// Routes are the area's rows. Every row but the status push is for
// administrators (the service refuses others, 403); the push is
// authenticated by the pushing node's signature (GL-Geo), not by a user,
// and its body is read only once that holds.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("POST", "/geo_nodes", token, api, parsed, h.createNode),
		row("GET", "/geo_nodes", token, api, parsed, h.listNodes),
		row("GET", "/geo_nodes/status", token, api, parsed, h.listStatuses),
		row("POST", "/geo_nodes/status", endpoint.NoAuth, api, endpoint.Streamed(geo.MaxStatusDocument), h.receiveStatus),
		row("GET", "/geo_nodes/current/failures", token, api, parsed, h.listFailures),
		row("GET", "/geo_nodes/{id}", token, api, parsed, h.getNode),
		row("PUT", "/geo_nodes/{id}", token, api, parsed, h.updateNode),
		row("DELETE", "/geo_nodes/{id}", token, api, parsed, h.deleteNode),
		row("POST", "/geo_nodes/{id}/repair", token, api, parsed, h.repairNode),
		row("GET", "/geo_nodes/{id}/status", token, api, parsed, h.getStatus),
	}
}
