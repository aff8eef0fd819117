// Package projects serves the projects area: projects and their lists
// (of a user, a group, stars, forks), stars, forks and sharing.
package projects

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/attributes"
	"quarry/internal/projects"
	"quarry/internal/users"
)

// Handlers answer the projects area.
type Handlers struct {
	projects   *projects.Service
	users      *users.Service
	attributes *attributes.Service
	r          *entity.Renderer
}

// New returns the projects area.
func New(p *projects.Service, u *users.Service, a *attributes.Service, r *entity.Renderer) *Handlers {
	return &Handlers{projects: p, users: u, attributes: a, r: r}
}

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("GET", "/projects", public, api, parsed, h.listProjects),
		row("POST", "/projects", token, api, parsed, func(c *endpoint.Call) error { return h.createProject(c, false) }),
		row("POST", "/projects/user/{user_id}", token, api, parsed, func(c *endpoint.Call) error { return h.createProject(c, true) }),
		row("GET", "/projects/{id}", public, api, parsed, h.getProject),
		row("PUT", "/projects/{id}", token, api, parsed, h.updateProject),
		row("DELETE", "/projects/{id}", token, api, parsed, h.deleteProject),
		row("POST", "/projects/{id}/archive", token, api, parsed, h.archive),
		row("POST", "/projects/{id}/unarchive", token, api, parsed, h.unarchive),
		row("POST", "/projects/{id}/restore", token, api, parsed, h.restore),
		row("PUT", "/projects/{id}/transfer", token, api, parsed, h.transferProject),
		row("GET", "/projects/{id}/languages", public, api, parsed, h.projectLanguages),

		row("POST", "/projects/{id}/star", token, api, parsed, h.star),
		row("POST", "/projects/{id}/unstar", token, api, parsed, h.unstar),
		row("GET", "/projects/{id}/starrers", public, api, parsed, h.starrers),

		row("POST", "/projects/{id}/fork", token, api, parsed, h.forkProject),
		row("GET", "/projects/{id}/forks", public, api, parsed, h.projectForks),
		row("POST", "/projects/{id}/fork/{forked_from_id}", token, api, parsed, h.markFork),
		row("DELETE", "/projects/{id}/fork", token, api, parsed, h.unmarkFork),

		row("POST", "/projects/{id}/share", token, api, parsed, h.shareProject),
		row("DELETE", "/projects/{id}/share/{group_id}", token, api, parsed, h.unshareProject),

		row("GET", "/users/{user_id}/projects", public, api, parsed, h.userProjects),
		row("GET", "/users/{user_id}/starred_projects", public, api, parsed, h.userStarredProjects),
		row("GET", "/groups/{id}/projects", public, api, parsed, func(c *endpoint.Call) error { return h.groupProjects(c, false) }),
		row("GET", "/groups/{id}/projects/shared", public, api, parsed, func(c *endpoint.Call) error { return h.groupProjects(c, true) }),
	}
}

// Shapes are the row shapes ServeMux cannot hold side by side:
// POST /projects/user/:user_id and POST /projects/:id/<verb> both match
// /projects/user/star.
var Shapes = []string{"POST /projects/{}/{}"}
