package repository

import (
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/projects"
)

var tagLevels = []string{"0", "30", "40"}

func (h *Handlers) listProtectedTags(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.projects.ProtectedTags(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.ProtectedTag, len(list))
	for i := range list {
		out[i] = h.r.ProtectedTag(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getProtectedTag(c *endpoint.Call) error {
	t, err := h.projects.ProtectedTag(c.Ctx(), c.Actor, c.Path("id"), c.Path("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ProtectedTag(t))
}

func (h *Handlers) protectTag(c *endpoint.Call) error {
	c.P.Require("name")
	var in projects.ProtectTagInput
	in.Name, _ = c.P.String("name")
	if v, ok := c.P.Enum("create_access_level", tagLevels...); ok {
		n, _ := strconv.Atoi(v)
		l := model.AccessLevel(n)
		in.CreateAccessLevel = &l
	}
	in.AllowedToCreate = grants(c.P, "allowed_to_create")
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.projects.ProtectTag(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.ProtectedTag(t))
}

func (h *Handlers) unprotectTag(c *endpoint.Call) error {
	if err := h.projects.UnprotectTag(c.Ctx(), c.Actor, c.Path("id"), c.Path("name")); err != nil {
		return err
	}
	return c.NoContent()
}
