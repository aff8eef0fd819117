// Package badges serves the badges of projects and groups: list, read,
// preview (render), create, edit, delete; the same rows under
// /projects/:id/badges and /groups/:id/badges.
package badges

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/badges"
	"quarry/internal/model"
)

// Handlers answer the badges area.
type Handlers struct {
	badges *badges.Service
	r      *entity.Renderer
}

// New returns the area.
func New(s *badges.Service, r *entity.Renderer) *Handlers { return &Handlers{badges: s, r: r} }

// Routes are the area's rows. Reads are public where the owner is;
// writes need a token at the door, as GitLab's badges API
// (lib/api/badges.rb) authenticates every non-GET request before it reads
// a parameter. The preview authenticates after its parameters (401
// before the owner is looked up); then 404 for an owner the caller may
// not see, then 403 without admin_project / admin_group.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, owner := range []struct {
		base  string
		group bool
	}{{"/projects/{id}/badges", false}, {"/groups/{id}/badges", true}} {
		o := func(c *endpoint.Call) model.OwnerRef { return model.OwnerRef{Group: owner.group, Ref: c.Path("id")} }
		rows = append(rows,
			row("GET", owner.base, public, api, parsed, func(c *endpoint.Call) error { return h.list(c, o(c)) }),
			row("POST", owner.base, token, api, parsed, func(c *endpoint.Call) error { return h.create(c, o(c)) }),
			row("GET", owner.base+"/render", public, api, parsed, func(c *endpoint.Call) error { return h.render(c, o(c)) }),
			row("GET", owner.base+"/{badge_id}", public, api, parsed, func(c *endpoint.Call) error { return h.get(c, o(c)) }),
			row("PUT", owner.base+"/{badge_id}", token, api, parsed, func(c *endpoint.Call) error { return h.update(c, o(c)) }),
			row("DELETE", owner.base+"/{badge_id}", token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, o(c)) }),
		)
	}
	return rows
}

func (h *Handlers) list(c *endpoint.Call, o model.OwnerRef) error {
	name := c.P.StringPtr("name")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.badges.List(c.Ctx(), c.Actor, o, name, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Badge, len(list))
	for i := range list {
		out[i] = h.r.Badge(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("badge_id")
	if err != nil {
		return err
	}
	v, err := h.badges.Get(c.Ctx(), c.Actor, o, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Badge(v))
}

func (h *Handlers) render(c *endpoint.Call, o model.OwnerRef) error {
	c.P.Require("link_url", "image_url")
	link, _ := c.P.String("link_url")
	image, _ := c.P.String("image_url")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.badges.Preview(c.Ctx(), c.Actor, o, link, image)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.BadgeDetails(v))
}

// input reads the writable fields; a URL given as null is an empty one
// (GitLab validates it as such), a null name clears the name.
func (h *Handlers) input(c *endpoint.Call) badges.Input {
	in := badges.Input{LinkURL: c.P.StringPtr("link_url"), ImageURL: c.P.StringPtr("image_url"), Name: c.P.StringPtr("name")}
	empty := ""
	for key, v := range map[string]**string{"link_url": &in.LinkURL, "image_url": &in.ImageURL} {
		if *v == nil && c.P.Has(key) && c.P.IsNull(key) {
			*v = &empty
		}
	}
	in.ClearName = in.Name == nil && c.P.Has("name") && c.P.IsNull("name")
	return in
}

func (h *Handlers) create(c *endpoint.Call, o model.OwnerRef) error {
	c.P.Require("link_url", "image_url")
	in := h.input(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.badges.Create(c.Ctx(), c.Actor, o, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Badge(v))
}

func (h *Handlers) update(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("badge_id")
	if err != nil {
		return err
	}
	in := h.input(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.badges.Update(c.Ctx(), c.Actor, o, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Badge(v))
}

func (h *Handlers) delete(c *endpoint.Call, o model.OwnerRef) error {
	id, err := c.PathID("badge_id")
	if err != nil {
		return err
	}
	if err := h.badges.Delete(c.Ctx(), c.Actor, o, id); err != nil {
		return err
	}
	return c.NoContent()
}
