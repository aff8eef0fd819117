// Package tokens serves personal access tokens.
package tokens

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/tokens"
)

// Handlers answer the personal access tokens area.
type Handlers struct {
	tokens *tokens.Service
	r      *entity.Renderer
}

// New returns the tokens area.
func New(t *tokens.Service, r *entity.Renderer) *Handlers { return &Handlers{tokens: t, r: r} }

// Routes are the area's rows. "self" is the token in use, acted on by its
// owner even under sudo.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token := endpoint.Row, endpoint.Parsed, endpoint.Token
	api, anyScope := endpoint.ScopeAPI, endpoint.ScopeAny
	return []endpoint.Route{
		row("POST", "/users/{user_id}/personal_access_tokens", token, api, parsed, h.createToken),
		row("GET", "/personal_access_tokens", token, api, parsed, h.listTokens),
		row("GET", "/personal_access_tokens/self", token, anyScope, parsed, h.getToken),
		row("DELETE", "/personal_access_tokens/self", token, anyScope, parsed, h.revokeToken),
		row("POST", "/personal_access_tokens/self/rotate", token, endpoint.ScopeSelfRotate, parsed, h.rotateToken),
		row("GET", "/personal_access_tokens/{id}", token, api, parsed, h.getToken),
		row("DELETE", "/personal_access_tokens/{id}", token, api, parsed, h.revokeToken),
		row("POST", "/personal_access_tokens/{id}/rotate", token, api, parsed, h.rotateToken),
	}
}
