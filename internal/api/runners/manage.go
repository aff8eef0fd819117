package runners

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/runners"
)

// scopeCreateRunner accepts create_runner besides api.
var scopeCreateRunner = auth.ScopeRule{Extra: []model.Scope{model.ScopeCreateRunner}}

// Routes are the rows users manage runners with.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	const runner = "/runners/{id}"
	return []endpoint.Route{
		row("POST", "/user/runners", token, scopeCreateRunner, parsed, h.createRunner),
		row("GET", "/runners", token, api, parsed, h.listOwned),
		row("GET", "/runners/all", token, api, parsed, h.listAll),
		row("GET", runner, token, api, parsed, h.getRunner),
		row("PUT", runner, token, api, parsed, h.updateRunner),
		row("DELETE", runner, token, api, parsed, h.deleteRunner),
		row("GET", runner+"/jobs", token, api, parsed, h.runnerJobs),
		row("POST", runner+"/reset_authentication_token", token, api, parsed, h.resetToken),
		row("GET", "/projects/{id}/runners", token, api, parsed, h.projectRunners),
		row("POST", "/projects/{id}/runners", token, api, parsed, h.enableRunner),
		row("DELETE", "/projects/{id}/runners/{runner_id}", token, api, parsed, h.disableRunner),
		row("GET", "/groups/{id}/runners", token, api, parsed, h.groupRunners),
		// New registration tokens (the old one stops registering).
		row("POST", "/runners/reset_registration_token", token, api, parsed, h.resetRegistrationToken("instance")),
		row("POST", "/projects/{id}/runners/reset_registration_token", token, api, parsed, h.resetRegistrationToken("project")),
		row("POST", "/groups/{id}/runners/reset_registration_token", token, api, parsed, h.resetRegistrationToken("group")),
	}
}

// resetRegistrationToken answers a reset of the instance's, a project's or
// a group's registration token with the new one (shown here, and where
// GitLab shows it: runners_token).
func (h *Handlers) resetRegistrationToken(owner string) endpoint.Handler {
	return func(c *endpoint.Call) error {
		var token string
		var err error
		switch owner {
		case "instance":
			token, err = h.runners.ResetInstanceRegistrationToken(c.Ctx(), c.Actor)
		case "project":
			token, err = h.runners.ResetProjectRegistrationToken(c.Ctx(), c.Actor, c.Path("id"))
		default:
			token, err = h.runners.ResetGroupRegistrationToken(c.Ctx(), c.Actor, c.Path("id"))
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, tokenBody{Token: token})
	}
}

func (h *Handlers) createRunner(c *endpoint.Call) error {
	c.P.Require("runner_type")
	rt, _ := c.P.Enum("runner_type", model.RunnerInstance, model.RunnerGroup, model.RunnerProject)
	in := runners.CreateInput{RegisterInput: registerInput(c), RunnerType: rt, GroupID: c.P.Value("group_id"), ProjectID: c.P.Value("project_id")}
	if err := c.P.Err(); err != nil {
		return err
	}
	r, secret, err := h.runners.Create(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, tokenBody{ID: r.ID, Token: secret, TokenExpiresAt: r.TokenExpiresAt})
}

// listFilter reads a runner list's filters; withScope takes the
// deprecated scope too.
func listFilter(c *endpoint.Call, withScope bool) runners.ListFilter {
	var f runners.ListFilter
	if withScope {
		f.Scope, _ = c.P.Enum("scope", runners.Scopes...)
	}
	f.Type, _ = c.P.Enum("type", model.RunnerInstance, model.RunnerGroup, model.RunnerProject)
	f.Paused = c.P.BoolPtr("paused")
	f.Status, _ = c.P.Enum("status", runners.Statuses...)
	f.Tags, _ = c.P.Unique("tag_list")
	return f
}

// runnerList answers a list of runners.
func (h *Handlers) runnerList(c *endpoint.Call, withScope bool,
	list func(f runners.ListFilter, pg model.Page) ([]runners.View, model.PageInfo, error)) error {
	f := listFilter(c, withScope)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	views, info, err := list(f, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Runner, len(views))
	for i := range views {
		out[i] = h.r.Runner(&views[i].Runner, views[i].CanUpdate)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) listOwned(c *endpoint.Call) error {
	return h.runnerList(c, true, func(f runners.ListFilter, pg model.Page) ([]runners.View, model.PageInfo, error) {
		return h.runners.ListOwned(c.Ctx(), c.Actor, f, pg)
	})
}

func (h *Handlers) listAll(c *endpoint.Call) error {
	return h.runnerList(c, true, func(f runners.ListFilter, pg model.Page) ([]runners.View, model.PageInfo, error) {
		return h.runners.ListAll(c.Ctx(), c.Actor, f, pg)
	})
}

func (h *Handlers) projectRunners(c *endpoint.Call) error {
	return h.runnerList(c, true, func(f runners.ListFilter, pg model.Page) ([]runners.View, model.PageInfo, error) {
		return h.runners.ListForProject(c.Ctx(), c.Actor, c.Path("id"), f, pg)
	})
}

func (h *Handlers) groupRunners(c *endpoint.Call) error {
	return h.runnerList(c, false, func(f runners.ListFilter, pg model.Page) ([]runners.View, model.PageInfo, error) {
		return h.runners.ListForGroup(c.Ctx(), c.Actor, c.Path("id"), f, pg)
	})
}

// details renders a runner's details.
func (h *Handlers) details(v runners.View) entity.RunnerDetails {
	return h.r.RunnerDetails(&v.Runner, v.CanUpdate, v.Projects, v.Groups)
}

func (h *Handlers) getRunner(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	v, err := h.runners.Get(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.details(v))
}

// updateFields are the attributes PUT /runners/:id takes.
var updateFields = []string{"description", "active", "paused", "tag_list", "run_untagged", "locked", "access_level",
	"maximum_timeout", "maintenance_note"}

func (h *Handlers) updateRunner(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	p := c.P
	p.AtLeastOneOf(updateFields...)
	if p.Has("active") && p.Has("paused") {
		p.Fail("active, paused are mutually exclusive")
	}
	in := runners.UpdateInput{Description: p.StringPtr("description"), MaintenanceNote: p.StringPtr("maintenance_note"),
		Paused: p.BoolPtr("paused"), Locked: p.BoolPtr("locked"), RunUntagged: p.BoolPtr("run_untagged")}
	if in.Paused == nil {
		if active := p.BoolPtr("active"); active != nil {
			paused := !*active
			in.Paused = &paused
		}
	}
	if tags, ok := p.Unique("tag_list"); ok {
		in.TagList = &tags
	}
	if v, ok := p.Enum("access_level", model.RunnerNotProtected, model.RunnerRefProtected); ok {
		in.AccessLevel = &v
	}
	if p.Has("maximum_timeout") {
		n := 0
		if t := p.IntPtr("maximum_timeout"); t != nil {
			n = max(*t, 0)
		}
		in.MaximumTimeout = &n
	}
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.runners.Update(c.Ctx(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.details(v))
}

func (h *Handlers) deleteRunner(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	if err := h.runners.Delete(c.Ctx(), c.Actor, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) runnerJobs(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	statuses := make([]string, len(model.PipelineStatuses))
	for i, s := range model.PipelineStatuses {
		statuses[i] = string(s)
	}
	st, _ := c.P.Enum("status", statuses...)
	f := runners.JobFilter{Status: model.CIStatus(st)}
	f.OrderBy, _ = c.P.Enum("order_by", "id")
	f.Sort, _ = c.P.Enum("sort", "asc", "desc")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.runners.Jobs(c.Ctx(), c.Actor, id, f, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.RunnerJobs(list, c.Actor))
}

func (h *Handlers) resetToken(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	secret, expires, err := h.runners.ResetTokenOf(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, resetBody{Token: secret, TokenExpiresAt: entity.TimePtr(expires)})
}

// resetBody is GitLab's ResetTokenResult.
type resetBody struct {
	Token          string       `json:"token"`
	TokenExpiresAt *entity.Time `json:"token_expires_at"`
}

func (h *Handlers) enableRunner(c *endpoint.Call) error {
	c.P.Require("runner_id")
	runnerID, _ := c.P.Int("runner_id")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.runners.EnableInProject(c.Ctx(), c.Actor, c.Path("id"), runnerID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Runner(&v.Runner, v.CanUpdate))
}

func (h *Handlers) disableRunner(c *endpoint.Call) error {
	runnerID, err := c.PathID("runner_id")
	if err != nil {
		return err
	}
	if err := h.runners.DisableInProject(c.Ctx(), c.Actor, c.Path("id"), runnerID); err != nil {
		return err
	}
	return c.NoContent()
}
