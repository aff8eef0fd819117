// Package wikis serves the wikis of projects and groups: pages (list,
// read, create, edit, delete) and attachments, the same rows under
// /projects/:id/wikis and /groups/:id/wikis.
package wikis

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/wikis"
)

// Handlers answer the wikis area.
type Handlers struct {
	wikis *wikis.Service
	r     *entity.Renderer
}

// New returns the area.
func New(s *wikis.Service, r *entity.Renderer) *Handlers { return &Handlers{wikis: s, r: r} }

// Routes are the area's rows. None requires a token: GitLab's wikis API
// (lib/api/wikis.rb) authenticates nothing itself and authorizes
// read_wiki, create_wiki or admin_wiki on the project or group it finds,
// so an anonymous write is 403 on a wiki its caller sees and 404 on one
// it does not.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	page, attachment := endpoint.Carrying(endpoint.ContentWikiPage), endpoint.Carrying(endpoint.ContentAttachment)
	public, api := endpoint.Public, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, owner := range []struct {
		base  string
		group bool
	}{{"/projects/{id}/wikis", false}, {"/groups/{id}/wikis", true}} {
		o := func(c *endpoint.Call) model.OwnerRef { return model.OwnerRef{Group: owner.group, Ref: c.Path("id")} }
		rows = append(rows,
			row("GET", owner.base, public, api, parsed, func(c *endpoint.Call) error { return h.list(c, o(c)) }),
			row("POST", owner.base, public, api, page, func(c *endpoint.Call) error { return h.create(c, o(c)) }),
			row("POST", owner.base+"/attachments", public, api, attachment, func(c *endpoint.Call) error { return h.attach(c, o(c)) }),
			row("GET", owner.base+"/{slug}", public, api, parsed, func(c *endpoint.Call) error { return h.get(c, o(c)) }),
			row("PUT", owner.base+"/{slug}", public, api, page, func(c *endpoint.Call) error { return h.update(c, o(c)) }),
			row("DELETE", owner.base+"/{slug}", public, api, parsed, func(c *endpoint.Call) error { return h.delete(c, o(c)) }),
		)
	}
	return rows
}

func (h *Handlers) list(c *endpoint.Call, o model.OwnerRef) error {
	withContent, _ := c.P.Bool("with_content")
	if err := c.P.Err(); err != nil {
		return err
	}
	list, err := h.wikis.List(c.Ctx(), c.Actor, o, withContent)
	if err != nil {
		return err
	}
	out := make([]any, len(list))
	for i := range list {
		out[i] = h.r.WikiPage(list[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) get(c *endpoint.Call, o model.OwnerRef) error {
	version, _ := c.P.String("version")
	render, _ := c.P.Bool("render_html")
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.wikis.Get(c.Ctx(), c.Actor, o, c.Path("slug"), version, render)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.WikiPage(p))
}

func (h *Handlers) create(c *endpoint.Call, o model.OwnerRef) error {
	c.P.Require("title", "content")
	title, _ := c.P.String("title")
	content, _ := c.P.String("content")
	format := "markdown"
	if f, ok := c.P.Enum("format", wikis.WritableFormats...); ok {
		format = f
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.wikis.Create(c.Ctx(), c.Actor, o, title, content, format)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.WikiPage(p))
}

func (h *Handlers) update(c *endpoint.Call, o model.OwnerRef) error {
	c.P.AtLeastOneOf("content", "title", "format")
	in := wikis.Update{Title: c.P.StringPtr("title"), Content: c.P.StringPtr("content")}
	if f, ok := c.P.Enum("format", wikis.WritableFormats...); ok {
		in.Format = &f
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	p, err := h.wikis.Update(c.Ctx(), c.Actor, o, c.Path("slug"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.WikiPage(p))
}

func (h *Handlers) delete(c *endpoint.Call, o model.OwnerRef) error {
	if err := h.wikis.Delete(c.Ctx(), c.Actor, o, c.Path("slug")); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) attach(c *endpoint.Call, o model.OwnerRef) error {
	f := c.P.File("file")
	if f == nil && (!c.P.Has("file") || c.P.IsNull("file")) {
		c.P.Fail("file is missing")
	}
	branch, _ := c.P.String("branch")
	if err := c.P.Err(); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	a, err := h.wikis.Attach(c.Ctx(), c.Actor, o, f.Name, f.Size, rc, branch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.WikiAttachment(a))
}
