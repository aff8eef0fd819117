// Package agents serves agents for Kubernetes (cluster agents), the
// agents a CI job may use, and projects' CI job token scopes.
package agents

import (
	"quarry/internal/agents"
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/jobtokenscope"
	"quarry/internal/projects"
)

// Handlers answer the area.
type Handlers struct {
	agents   *agents.Service
	scopes   *jobtokenscope.Service
	projects *projects.Service
	r        *entity.Renderer
}

// New returns the area.
func New(a *agents.Service, scopes *jobtokenscope.Service, p *projects.Service, r *entity.Renderer) *Handlers {
	return &Handlers{agents: a, scopes: scopes, projects: p, r: r}
}

// Routes are the area's rows taking personal tokens.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	const (
		agent = "/projects/{id}/cluster_agents"
		scope = "/projects/{id}/job_token_scope"
	)
	return []endpoint.Route{
		// Agents for Kubernetes.
		row("GET", agent, token, api, parsed, h.listAgents),
		row("POST", agent, token, api, parsed, h.createAgent),
		row("GET", agent+"/{agent_id}", token, api, parsed, h.getAgent),
		row("DELETE", agent+"/{agent_id}", token, api, parsed, h.deleteAgent),

		// CI job token scope.
		row("GET", scope, token, api, parsed, h.getScope),
		row("PATCH", scope, token, api, parsed, h.patchScope),
		row("GET", scope+"/allowlist", token, api, parsed, h.allowlist),
		row("POST", scope+"/allowlist", token, api, parsed, h.addProject),
		row("DELETE", scope+"/allowlist/{target_project_id}", token, api, parsed, h.removeProject),
		row("GET", scope+"/groups_allowlist", token, api, parsed, h.groupsAllowlist),
		row("POST", scope+"/groups_allowlist", token, api, parsed, h.addGroup),
		row("DELETE", scope+"/groups_allowlist/{target_group_id}", token, api, parsed, h.removeGroup),
	}
}

// JobRoutes are the area's rows taking a CI job token: kept apart until
// the job token authenticator is wired (a JobToken row without one stops
// the route table).
func (h *Handlers) JobRoutes() []endpoint.Route {
	return []endpoint.Route{
		endpoint.Row("GET", "/job/allowed_agents", endpoint.JobToken, endpoint.ScopeAPI, endpoint.Parsed, h.allowedAgents),
	}
}
