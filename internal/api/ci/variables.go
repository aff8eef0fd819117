package ci

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// The CI/CD variables of projects (/projects/:id/variables), groups
// (/groups/:id/variables) and the instance (/admin/ci/variables): one set
// of handlers, told the owner by its rows.

// variableInput reads a CI/CD variable's attributes; the instance's have
// no environment scope, hidden flag or scope filter.
func variableInput(c *endpoint.Call, owner string) ci.VariableInput {
	in := ci.VariableInput{Key: c.P.StringPtr("key"), Value: c.P.StringPtr("value"), Protected: c.P.BoolPtr("protected"),
		Masked: c.P.BoolPtr("masked"), Raw: c.P.BoolPtr("raw"), Description: c.P.StringPtr("description")}
	if v, ok := c.P.Enum("variable_type", model.VarEnv, model.VarFile); ok {
		in.VariableType = &v
	}
	if owner != model.OwnerInstance {
		in.EnvironmentScope, in.Hidden = c.P.StringPtr("environment_scope"), c.P.Flag("masked_and_hidden")
	}
	in.Filter = variableFilter(c, owner)
	return in
}

// variableFilter is filter[environment_scope], which picks one of a
// key's variables in a project or group.
func variableFilter(c *endpoint.Call, owner string) string {
	if owner == model.OwnerInstance {
		return ""
	}
	return c.P.Hash("filter")["environment_scope"]
}

// renderVariable renders a variable in its owner's shape.
func (h *Handlers) renderVariable(owner string, v model.CIVariable) any {
	if owner == model.OwnerInstance {
		return h.r.InstanceVariable(v)
	}
	return h.r.Variable(v)
}

func (h *Handlers) listVariables(c *endpoint.Call, owner string) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.Variables(c.Ctx(), c.Actor, owner, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]any, len(list))
	for i := range list {
		out[i] = h.renderVariable(owner, list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getVariable(c *endpoint.Call, owner string) error {
	v, err := h.ci.Variable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), variableFilter(c, owner))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.renderVariable(owner, v))
}

func (h *Handlers) createVariable(c *endpoint.Call, owner string) error {
	c.P.Require("key", "value")
	in := variableInput(c, owner)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.CreateVariable(c.Ctx(), c.Actor, owner, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.renderVariable(owner, v))
}

func (h *Handlers) updateVariable(c *endpoint.Call, owner string) error {
	in := variableInput(c, owner)
	in.Key = nil // the path names the variable; a key in the body is ignored
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.UpdateVariable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.renderVariable(owner, v))
}

func (h *Handlers) deleteVariable(c *endpoint.Call, owner string) error {
	if err := h.ci.DeleteVariable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), variableFilter(c, owner)); err != nil {
		return err
	}
	return c.NoContent()
}

// administrators refuses everyone else before the handler reads a
// parameter: GitLab's admin API checks the caller first (before {
// authenticated_as_admin! }), so a non-administrator learns nothing from
// a bad body. The service checks again; this only orders the answers.
func administrators(h endpoint.Handler) endpoint.Handler {
	return func(c *endpoint.Call) error {
		if !c.Actor.Admin() {
			return model.Forbidden("")
		}
		return h(c)
	}
}
