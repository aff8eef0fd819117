package attributes

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
)

// customAttributeRoutes serve /users|projects|groups/:id/custom_attributes.
func (h *Handlers) listCustomAttributes(c *endpoint.Call, kind string) error {
	attrs, err := h.attributes.List(c.Ctx(), c.Actor, kind, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.CustomAttributes(attrs))
}

func (h *Handlers) getCustomAttribute(c *endpoint.Call, kind string) error {
	a, err := h.attributes.Get(c.Ctx(), c.Actor, kind, c.Path("id"), c.Path("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.CustomAttribute{Key: a.Key, Value: a.Value})
}

func (h *Handlers) putCustomAttribute(c *endpoint.Call, kind string) error {
	c.P.Require("value")
	value, _ := c.P.String("value")
	if err := c.P.Err(); err != nil {
		return err
	}
	a, err := h.attributes.Set(c.Ctx(), c.Actor, kind, c.Path("id"), model.CustomAttribute{Key: c.Path("key"), Value: value})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.CustomAttribute{Key: a.Key, Value: a.Value})
}

func (h *Handlers) deleteCustomAttribute(c *endpoint.Call, kind string) error {
	if err := h.attributes.Delete(c.Ctx(), c.Actor, kind, c.Path("id"), c.Path("key")); err != nil {
		return err
	}
	return c.NoContent()
}
