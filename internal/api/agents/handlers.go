package agents

import (
	"net/http"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
)

func (h *Handlers) agentID(c *endpoint.Call) (int64, error) { return c.PathID("agent_id") }

func (h *Handlers) listAgents(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.agents.List(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.ClusterAgent, len(list))
	for i := range list {
		out[i] = h.r.ClusterAgent(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getAgent(c *endpoint.Call) error {
	id, err := h.agentID(c)
	if err != nil {
		return err
	}
	a, err := h.agents.Get(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ClusterAgent(a))
}

func (h *Handlers) createAgent(c *endpoint.Call) error {
	c.P.Require("name")
	name, _ := c.P.String("name")
	if err := c.P.Err(); err != nil {
		return err
	}
	a, err := h.agents.Create(c.Ctx(), c.Actor, c.Path("id"), name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ClusterAgent(a))
}

func (h *Handlers) deleteAgent(c *endpoint.Call) error {
	id, err := h.agentID(c)
	if err != nil {
		return err
	}
	if err := h.agents.Delete(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

// allowedAgents answers a CI job (job token) with the agents it may use.
func (h *Handlers) allowedAgents(c *endpoint.Call) error {
	v, err := h.agents.AllowedAgents(c.Ctx(), c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.AllowedAgents(v))
}

func (h *Handlers) getScope(c *endpoint.Call) error {
	s, err := h.scopes.Scope(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.JobTokenScope{InboundEnabled: s.InboundEnabled, OutboundEnabled: s.OutboundEnabled})
}

// requireNonBlank records Grape's answers to a required parameter that
// may not be blank: "x is missing", "x is empty".
func requireNonBlank(c *endpoint.Call, key string) bool {
	c.P.Require(key)
	if v, ok := c.P.String(key); ok && strings.TrimSpace(v) == "" {
		c.P.Fail("%s is empty", key)
		return false
	}
	return c.P.Has(key) && !c.P.IsNull(key)
}

func (h *Handlers) patchScope(c *endpoint.Call) error {
	var enabled bool
	if requireNonBlank(c, "enabled") {
		enabled, _ = c.P.Bool("enabled")
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.scopes.SetInbound(c.Ctx(), c.Actor, c.Path("id"), enabled); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) allowlist(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ps, info, err := h.scopes.Allowlist(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	views, err := h.projects.Views(c.Ctx(), c.Actor, ps, false)
	if err != nil {
		return err
	}
	out := make([]entity.ProjectBasic, len(views))
	for i := range views {
		out[i] = h.r.ProjectBasic(&views[i], c.Actor)
	}
	return c.List(pg, info, out)
}

// targetID reads a required, non-blank integer parameter.
func targetID(c *endpoint.Call, key string) (int64, error) {
	var id int64
	if requireNonBlank(c, key) {
		id, _ = c.P.Int(key)
	}
	return id, c.P.Err()
}

func (h *Handlers) addProject(c *endpoint.Call) error {
	target, err := targetID(c, "target_project_id")
	if err != nil {
		return err
	}
	l, err := h.scopes.AddProject(c.Ctx(), c.Actor, c.Path("id"), target)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, entity.ProjectScopeLink{SourceProjectID: l.SourceProjectID, TargetProjectID: l.TargetProjectID})
}

func (h *Handlers) removeProject(c *endpoint.Call) error {
	target, err := c.PathID("target_project_id")
	if err != nil {
		return err
	}
	if err := h.scopes.RemoveProject(c.Ctx(), c.Actor, c.Path("id"), target); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) groupsAllowlist(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	groups, info, err := h.scopes.GroupsAllowlist(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.BasicGroupDetails, len(groups))
	for i := range groups {
		out[i] = h.r.BasicGroupDetails(&groups[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) addGroup(c *endpoint.Call) error {
	target, err := targetID(c, "target_group_id")
	if err != nil {
		return err
	}
	l, err := h.scopes.AddGroup(c.Ctx(), c.Actor, c.Path("id"), target)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, entity.GroupScopeLink{SourceProjectID: l.SourceProjectID, TargetGroupID: l.TargetGroupID})
}

func (h *Handlers) removeGroup(c *endpoint.Call) error {
	target, err := c.PathID("target_group_id")
	if err != nil {
		return err
	}
	if err := h.scopes.RemoveGroup(c.Ctx(), c.Actor, c.Path("id"), target); err != nil {
		return err
	}
	return c.NoContent()
}
