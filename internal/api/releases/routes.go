// Package releases serves GitLab's Releases API and its release links
// API: a project's releases by tag name (URL-encoded, "/" allowed), the
// latest-release permalink, a group's releases, and each release's asset
// links.
package releases

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/releases"
)

// Handlers answer the releases area.
type Handlers struct {
	releases *releases.Service
	r        *entity.Renderer
}

// New returns the area.
func New(s *releases.Service, r *entity.Renderer) *Handlers { return &Handlers{releases: s, r: r} }

// Routes are the area's rows. Reads are public where the project's code
// is; writes need a token. A CI job token reads, creates and updates the
// releases (and links) of its own project, as GitLab's job_token_allowed
// routes; deleting takes a user's token.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, api := endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	base := "/projects/{id}/releases"
	one := base + "/{tag_name}"
	links := one + "/assets/links"
	link := links + "/{link_id}"
	return []endpoint.Route{
		row("GET", base, public, api, parsed, h.list).WithJobTokens(),
		row("POST", base, token, api, parsed, h.create).WithJobTokens(),
		row("GET", base+"/permalink/latest", public, api, parsed, h.latest).WithJobTokens(),
		row("GET", one, public, api, parsed, h.get).WithJobTokens(),
		row("PUT", one, token, api, parsed, h.update).WithJobTokens(),
		row("DELETE", one, token, api, parsed, h.delete),
		row("GET", links, public, api, parsed, h.links).WithJobTokens(),
		row("POST", links, token, api, parsed, h.createLink).WithJobTokens(),
		row("GET", link, public, api, parsed, h.link).WithJobTokens(),
		row("PUT", link, token, api, parsed, h.updateLink).WithJobTokens(),
		row("DELETE", link, token, api, parsed, h.deleteLink),
		row("GET", "/groups/{id}/releases", public, api, parsed, h.groupList),
	}
}

func (h *Handlers) render(c *endpoint.Call, list []releases.View, html bool) []entity.Release {
	out := make([]entity.Release, len(list))
	for i := range list {
		out[i] = h.r.Release(list[i], html)
	}
	return out
}

func (h *Handlers) list(c *endpoint.Call) error {
	var in releases.ListInput
	in.OrderBy, _ = c.P.Enum("order_by", "released_at", "created_at")
	sort, _ := c.P.Enum("sort", "asc", "desc")
	in.Asc = sort == "asc"
	html := c.P.Flag("include_html_description")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.releases.List(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.render(c, list, html))
}

func (h *Handlers) groupList(c *endpoint.Call) error {
	sort, _ := c.P.Enum("sort", "asc", "desc")
	c.P.Flag("simple")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.releases.GroupList(c.Ctx(), c.Actor, c.Path("id"), sort == "asc", pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.render(c, list, false))
}

func (h *Handlers) get(c *endpoint.Call) error {
	html := c.P.Flag("include_html_description")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.releases.Get(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Release(v, html))
}

// latest redirects to the latest release, keeping the query but
// order_by (GitLab's permalink).
func (h *Handlers) latest(c *endpoint.Call) error {
	p, tag, err := h.releases.Latest(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	loc := "/api/v4/projects/" + strconv.FormatInt(p.ID, 10) + "/releases/" + url.PathEscape(tag)
	q := c.R.URL.Query()
	q.Del("order_by")
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	http.Redirect(c.W, c.R, loc, http.StatusFound)
	return nil
}

// input reads a release's writable fields.
func (h *Handlers) input(c *endpoint.Call, create bool) releases.Input {
	in := releases.Input{Tag: c.Path("tag_name"), Name: c.P.StringPtr("name"), Description: c.P.StringPtr("description")}
	in.ReleasedAt, _ = c.P.Time("released_at")
	if c.P.Has("milestones") {
		titles, _ := c.P.Strings("milestones")
		if titles == nil {
			titles = []string{}
		}
		in.Milestones = &titles
	}
	if c.P.Has("milestone_ids") {
		c.P.Fail("milestone_ids is not supported")
	}
	if !create {
		return in
	}
	c.P.Require("tag_name")
	in.Tag, _ = c.P.String("tag_name")
	in.Ref, _ = c.P.String("ref")
	in.TagMessage, _ = c.P.String("tag_message")
	for _, raw := range c.P.Objects("assets[links]") {
		var l struct {
			Name            *string `json:"name"`
			URL             *string `json:"url"`
			DirectAssetPath *string `json:"direct_asset_path"`
			Filepath        *string `json:"filepath"`
			LinkType        *string `json:"link_type"`
		}
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			c.P.Fail("assets[links] is invalid")
			break
		}
		if l.Name == nil {
			c.P.Fail("assets[links][name] is missing")
			break
		}
		if l.URL == nil {
			c.P.Fail("assets[links][url] is missing")
			break
		}
		li := releases.LinkInput{Name: l.Name, URL: l.URL, Filepath: l.Filepath, LinkType: l.LinkType}
		if l.DirectAssetPath != nil {
			li.Filepath = l.DirectAssetPath
		}
		in.Links = append(in.Links, li)
	}
	return in
}

func (h *Handlers) create(c *endpoint.Call) error {
	in := h.input(c, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.releases.Create(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Release(v, false))
}

func (h *Handlers) update(c *endpoint.Call) error {
	in := h.input(c, false)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.releases.Update(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Release(v, false))
}

func (h *Handlers) delete(c *endpoint.Call) error {
	v, err := h.releases.Delete(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Release(v, false))
}

func (h *Handlers) links(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.releases.Links(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.ReleaseLink, len(list))
	for i, l := range list {
		out[i] = h.r.ReleaseLink(l.Project, l.Tag, l.ReleaseLink)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) link(c *endpoint.Call) error {
	id, err := c.PathID("link_id")
	if err != nil {
		return err
	}
	l, err := h.releases.Link(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), id)
	return h.linkJSON(c, http.StatusOK, l, err)
}

func (h *Handlers) linkJSON(c *endpoint.Call, status int, l releases.LinkView, err error) error {
	if err != nil {
		return err
	}
	return c.JSON(status, h.r.ReleaseLink(l.Project, l.Tag, l.ReleaseLink))
}

// linkInput reads a link's fields; direct_asset_path wins over the
// deprecated filepath.
func linkInput(c *endpoint.Call) releases.LinkInput {
	in := releases.LinkInput{Name: c.P.StringPtr("name"), URL: c.P.StringPtr("url"), Filepath: c.P.StringPtr("filepath")}
	if d := c.P.StringPtr("direct_asset_path"); d != nil {
		in.Filepath = d
	}
	if c.P.Has("link_type") {
		t, ok := c.P.Enum("link_type", "other", "runbook", "image", "package")
		if ok {
			in.LinkType = &t
		}
	}
	return in
}

func (h *Handlers) createLink(c *endpoint.Call) error {
	c.P.Require("name", "url")
	in := linkInput(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	l, err := h.releases.CreateLink(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), in)
	return h.linkJSON(c, http.StatusCreated, l, err)
}

func (h *Handlers) updateLink(c *endpoint.Call) error {
	id, err := c.PathID("link_id")
	if err != nil {
		return err
	}
	c.P.AtLeastOneOf("name", "url", "filepath", "direct_asset_path", "link_type")
	in := linkInput(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	l, err := h.releases.UpdateLink(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), id, in)
	return h.linkJSON(c, http.StatusOK, l, err)
}

func (h *Handlers) deleteLink(c *endpoint.Call) error {
	id, err := c.PathID("link_id")
	if err != nil {
		return err
	}
	l, err := h.releases.DeleteLink(c.Ctx(), c.Actor, c.Path("id"), c.Path("tag_name"), id)
	return h.linkJSON(c, http.StatusOK, l, err)
}
