// Package labels serves projects' and groups' labels.
package labels

import (
	"net/http"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/labels"
	"quarry/internal/model"
)

// Handlers answer the area.
type Handlers struct {
	labels *labels.Service
	r      *entity.Renderer
}

// New returns the area.
func New(l *labels.Service, r *entity.Renderer) *Handlers { return &Handlers{labels: l, r: r} }

// Routes are the area's rows: reads for whoever sees the project or
// group, writes with a token.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, public, token, api := endpoint.Row, endpoint.Parsed, endpoint.Public, endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, kind := range []struct {
		base    string
		project bool
	}{{"/projects/{id}/labels", true}, {"/groups/{id}/labels", false}} {
		project, one := kind.project, kind.base+"/{label_id}"
		ref := func(c *endpoint.Call) model.OwnerRef { return model.OwnerRef{Group: !project, Ref: c.Path("id")} }
		rows = append(rows,
			row("GET", kind.base, public, api, parsed, func(c *endpoint.Call) error { return h.list(c, ref(c)) }),
			row("POST", kind.base, token, api, parsed, func(c *endpoint.Call) error { return h.create(c, ref(c)) }),
			row("PUT", kind.base, token, api, parsed, func(c *endpoint.Call) error { return h.update(c, ref(c), "name") }),
			row("DELETE", kind.base, token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, ref(c), "name") }),
			row("GET", one, public, api, parsed, func(c *endpoint.Call) error { return h.get(c, ref(c)) }),
			row("PUT", one, token, api, parsed, func(c *endpoint.Call) error { return h.update(c, ref(c), "") }),
			row("DELETE", one, token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, ref(c), "") }),
			row("POST", one+"/subscribe", token, api, parsed, func(c *endpoint.Call) error { return h.subscribe(c, ref(c), true) }),
			row("POST", one+"/unsubscribe", token, api, parsed, func(c *endpoint.Call) error { return h.subscribe(c, ref(c), false) }),
		)
	}
	return append(rows, row("PUT", "/projects/{id}/labels/{label_id}/promote", token, api, parsed, h.promote))
}

// boolParam reads an optional boolean with its default.
func boolParam(c *endpoint.Call, key string, def bool) bool {
	if v, ok := c.P.Bool(key); ok {
		return v
	}
	return def
}

func (h *Handlers) render(list []labels.View) []any {
	out := make([]any, len(list))
	for i := range list {
		out[i] = h.r.Label(list[i])
	}
	return out
}

func (h *Handlers) list(c *endpoint.Call, ref model.OwnerRef) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	opt := labels.ListOptions{
		WithCounts:              boolParam(c, "with_counts", false),
		IncludeAncestorGroups:   boolParam(c, "include_ancestor_groups", true),
		IncludeDescendantGroups: ref.Group && boolParam(c, "include_descendant_groups", false),
		OnlyGroupLabels:         !ref.Group || boolParam(c, "only_group_labels", true),
	}
	opt.Search, _ = c.P.String("search")
	if len(opt.Search) > labels.MaxTitleLength*4 {
		c.P.Fail("search is too long")
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.labels.List(c.Ctx(), c.Actor, ref, opt, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.render(list))
}

func (h *Handlers) get(c *endpoint.Call, ref model.OwnerRef) error {
	inc := boolParam(c, "include_ancestor_groups", true)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.labels.Get(c.Ctx(), c.Actor, ref, c.Path("label_id"), inc)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Label(v))
}

// input reads the optional attributes of a create or an update; name is
// the parameter carrying the title.
func input(c *endpoint.Call, ref model.OwnerRef, name string) labels.Input {
	in := labels.Input{Title: c.P.StringPtr(name), Color: c.P.StringPtr("color"), Description: c.P.StringPtr("description")}
	if !ref.Group && c.P.Has("priority") {
		in.SetPriority = true
		if !c.P.IsNull("priority") {
			if raw, _ := c.P.Raw("priority"); strings.TrimSpace(raw) != "" {
				in.Priority = c.P.IntPtr("priority")
			}
		}
	}
	return in
}

func (h *Handlers) create(c *endpoint.Call, ref model.OwnerRef) error {
	c.P.Require("name", "color")
	in := input(c, ref, "name")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.labels.Create(c.Ctx(), c.Actor, ref, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Label(v))
}

// labelRef is the label a request names: the path's :label_id, or for
// the legacy collection routes the name parameter (nameParam).
func labelRef(c *endpoint.Call, nameParam string) string {
	if nameParam == "" {
		return c.Path("label_id")
	}
	c.P.Require(nameParam)
	v, _ := c.P.String(nameParam)
	return v
}

func (h *Handlers) update(c *endpoint.Call, ref model.OwnerRef, nameParam string) error {
	lr := labelRef(c, nameParam)
	keys := []string{"new_name", "color", "description"}
	if !ref.Group {
		keys = append(keys, "priority")
	}
	c.P.AtLeastOneOf(keys...)
	in := input(c, ref, "new_name")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.labels.Update(c.Ctx(), c.Actor, ref, lr, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Label(v))
}

func (h *Handlers) delete(c *endpoint.Call, ref model.OwnerRef, nameParam string) error {
	lr := labelRef(c, nameParam)
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.labels.Delete(c.Ctx(), c.Actor, ref, lr); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) subscribe(c *endpoint.Call, ref model.OwnerRef, on bool) error {
	v, err := h.labels.Subscribe(c.Ctx(), c.Actor, ref, c.Path("label_id"), on)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Label(v))
}

func (h *Handlers) promote(c *endpoint.Call) error {
	v, err := h.labels.Promote(c.Ctx(), c.Actor, c.Path("id"), c.Path("label_id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Label(v))
}
