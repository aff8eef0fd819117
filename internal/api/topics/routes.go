// Package topics serves project topics.
package topics

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/topics"
)

// Handlers answer the topics area.
type Handlers struct {
	topics *topics.Service
	r      *entity.Renderer
}

// New returns the topics area.
func New(t *topics.Service, r *entity.Renderer) *Handlers { return &Handlers{topics: t, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("GET", "/topics", public, api, parsed, h.listTopics),
		row("POST", "/topics", token, api, parsed, h.createTopic),
		row("GET", "/topics/{id}", public, api, parsed, h.getTopic),
		row("PUT", "/topics/{id}", token, api, parsed, h.updateTopic),
		row("DELETE", "/topics/{id}", token, api, parsed, h.deleteTopic),
		row("POST", "/topics/merge", token, api, parsed, h.mergeTopics),
	}
}
