// Package events serves the contributions feed: a project's events
// (/projects/:id/events), a user's (/users/:id/events) and the caller's
// own (/events), with GitLab's filters, in GitLab's shape.
package events

import (
	"quarry/internal/activity"
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
)

// Handlers answer the events area.
type Handlers struct {
	activity *activity.Service
	r        *entity.Renderer
}

// New returns the area.
func New(s *activity.Service, r *entity.Renderer) *Handlers { return &Handlers{activity: s, r: r} }

// Routes are the area's rows. A project's events are the project's
// readers' (404 when hidden); a user's are public where the user is,
// limited to projects the caller may see; /events needs a token.
// read_user passes on the user feeds, read_api on all.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token := endpoint.Public, endpoint.Token
	return []endpoint.Route{
		row("GET", "/events", token, endpoint.ScopeUser, parsed, h.feedOf(true, h.own)),
		row("GET", "/users/{id}/events", public, endpoint.ScopeUser, parsed, h.feedOf(true, h.user)),
		row("GET", "/projects/{id}/events", public, endpoint.ScopeAPI, parsed, h.feedOf(false, h.project)),
	}
}

// filter reads the filters. The project feed, as GitLab's, ignores an
// action or target type it does not know; the others refuse it.
func filter(c *endpoint.Call, strict bool) activity.Filter {
	var f activity.Filter
	if strict {
		a, _ := c.P.Enum("action", model.EventActions...)
		f.Action = model.EventAction(a)
		f.TargetType, _ = c.P.Enum("target_type", targetTypes()...)
	} else {
		if a, ok := c.P.String("action"); ok && isAction(a) {
			f.Action = model.EventAction(a)
		}
		if t, ok := c.P.String("target_type"); ok {
			if _, known := model.EventTargetTypes[t]; known {
				f.TargetType = t
			}
		}
	}
	f.Before, _ = c.P.Date("before")
	f.After, _ = c.P.Date("after")
	sort, _ := c.P.Enum("sort", "asc", "desc")
	f.Asc = sort == "asc"
	return f
}

func isAction(a string) bool {
	for _, v := range model.EventActions {
		if v == a {
			return true
		}
	}
	return false
}

func targetTypes() []string {
	out := make([]string, 0, len(model.EventTargetTypes))
	for k := range model.EventTargetTypes {
		out = append(out, k)
	}
	return out
}

// feedOf answers one of the feeds: the filters (strict or not, see
// filter), the page, and the events list reads with them.
func (h *Handlers) feedOf(strict bool, list func(c *endpoint.Call, f activity.Filter, pg model.Page) (activity.Page, error)) endpoint.Handler {
	return func(c *endpoint.Call) error {
		f := filter(c, strict)
		if err := c.P.Err(); err != nil {
			return err
		}
		pg, err := c.Page()
		if err != nil {
			return err
		}
		p, err := list(c, f, pg)
		if err != nil {
			return err
		}
		out := make([]entity.Event, len(p.Events))
		for i := range p.Events {
			out[i] = h.r.Event(p.Events[i])
		}
		return c.List(pg, p.Info, out)
	}
}

func (h *Handlers) own(c *endpoint.Call, f activity.Filter, pg model.Page) (activity.Page, error) {
	return h.activity.OwnEvents(c.Ctx(), c.Actor, f, pg)
}

func (h *Handlers) user(c *endpoint.Call, f activity.Filter, pg model.Page) (activity.Page, error) {
	return h.activity.UserEvents(c.Ctx(), c.Actor, c.Path("id"), f, pg)
}

func (h *Handlers) project(c *endpoint.Call, f activity.Filter, pg model.Page) (activity.Page, error) {
	return h.activity.ProjectEvents(c.Ctx(), c.Actor, c.Path("id"), f, pg)
}
