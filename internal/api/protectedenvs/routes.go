// Package protectedenvs serves GitLab's protected environments API of a
// project (maintainers manage).
package protectedenvs

import (
	"encoding/json"
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/protectedenvs"
)

// Handlers answer the protected environments area.
type Handlers struct {
	envs *protectedenvs.Service
	r    *entity.Renderer
}

// New returns the area.
func New(s *protectedenvs.Service, r *entity.Renderer) *Handlers { return &Handlers{envs: s, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	base := "/projects/{id}/protected_environments"
	return []endpoint.Route{
		row("GET", base, token, api, parsed, h.list),
		row("POST", base, token, api, parsed, h.protect),
		row("GET", base+"/{name}", token, api, parsed, h.get),
		row("PUT", base+"/{name}", token, api, parsed, h.update),
		row("DELETE", base+"/{name}", token, api, parsed, h.unprotect),
	}
}

func (h *Handlers) list(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.envs.List(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.ProtectedEnvironment, len(list))
	for i := range list {
		out[i] = h.r.ProtectedEnvironment(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call) error {
	e, err := h.envs.Get(c.Ctx(), c.Actor, c.Path("id"), c.Path("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ProtectedEnvironment(e))
}

// input reads a protection's parameters; deploy_access_levels and
// approval_rules are arrays of objects (JSON bodies).
func input(p *endpoint.Params) protectedenvs.Input {
	var in protectedenvs.Input
	in.Name, _ = p.String("name")
	if n := p.IntPtr("required_approval_count"); n != nil {
		in.RequiredApprovalCount = n
	}
	in.DeployAccessLevels = grants(p, "deploy_access_levels")
	in.ApprovalRules = grants(p, "approval_rules")
	return in
}

func grants(p *endpoint.Params, key string) []protectedenvs.Grant {
	if !p.Has(key) || p.IsNull(key) {
		return nil
	}
	out := []protectedenvs.Grant{}
	for _, v := range p.Objects(key) {
		var g struct {
			ID                   *int64 `json:"id"`
			AccessLevel          *int   `json:"access_level"`
			UserID               *int64 `json:"user_id"`
			GroupID              *int64 `json:"group_id"`
			GroupInheritanceType *int   `json:"group_inheritance_type"`
			RequiredApprovals    *int   `json:"required_approvals"`
			Destroy              bool   `json:"_destroy"`
		}
		if err := json.Unmarshal([]byte(v), &g); err != nil {
			p.Fail("%s is invalid", key)
			return nil
		}
		x := protectedenvs.Grant{ID: g.ID, UserID: g.UserID, GroupID: g.GroupID, GroupInheritanceType: g.GroupInheritanceType,
			RequiredApprovals: g.RequiredApprovals, Destroy: g.Destroy}
		if g.AccessLevel != nil {
			l := model.AccessLevel(*g.AccessLevel)
			x.AccessLevel = &l
		}
		out = append(out, x)
	}
	return out
}

func (h *Handlers) protect(c *endpoint.Call) error {
	c.P.Require("name", "deploy_access_levels")
	in := input(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	e, err := h.envs.Protect(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ProtectedEnvironment(e))
}

func (h *Handlers) update(c *endpoint.Call) error {
	in := input(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	e, err := h.envs.Update(c.Ctx(), c.Actor, c.Path("id"), c.Path("name"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ProtectedEnvironment(e))
}

func (h *Handlers) unprotect(c *endpoint.Call) error {
	if err := h.envs.Unprotect(c.Ctx(), c.Actor, c.Path("id"), c.Path("name")); err != nil {
		return err
	}
	return c.NoContent()
}
