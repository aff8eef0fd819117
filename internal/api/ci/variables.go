package ci

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// variableInput reads a CI/CD variable's attributes.
func variableInput(c *endpoint.Call) ci.VariableInput {
	in := ci.VariableInput{Key: c.P.StringPtr("key"), Value: c.P.StringPtr("value"), Protected: c.P.BoolPtr("protected"),
		Masked: c.P.BoolPtr("masked"), Raw: c.P.BoolPtr("raw"), EnvironmentScope: c.P.StringPtr("environment_scope"),
		Description: c.P.StringPtr("description"), Hidden: c.P.Flag("masked_and_hidden")}
	if v, ok := c.P.Enum("variable_type", model.VarEnv, model.VarFile); ok {
		in.VariableType = &v
	}
	in.Filter = c.P.Hash("filter")["environment_scope"]
	return in
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
	out := make([]entity.Variable, len(list))
	for i := range list {
		out[i] = h.r.Variable(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getVariable(c *endpoint.Call, owner string) error {
	filter := c.P.Hash("filter")["environment_scope"]
	v, err := h.ci.Variable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), filter)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Variable(v))
}

func (h *Handlers) createVariable(c *endpoint.Call, owner string) error {
	c.P.Require("key", "value")
	in := variableInput(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.CreateVariable(c.Ctx(), c.Actor, owner, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Variable(v))
}

func (h *Handlers) updateVariable(c *endpoint.Call, owner string) error {
	in := variableInput(c)
	in.Key = nil // the path names the variable; a key in the body is ignored
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.UpdateVariable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Variable(v))
}

func (h *Handlers) deleteVariable(c *endpoint.Call, owner string) error {
	filter := c.P.Hash("filter")["environment_scope"]
	if err := h.ci.DeleteVariable(c.Ctx(), c.Actor, owner, c.Path("id"), c.Path("key"), filter); err != nil {
		return err
	}
	return c.NoContent()
}
