// Package environments serves GitLab's Environments and Deployments APIs:
// a project's environments (list, create, update, delete when stopped,
// stop, stop stale ones, clean up review apps) and deployments (list,
// report, update external ones, delete, the merge requests one shipped).
package environments

import (
	"net/http"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/mergerequests"
	"quarry/internal/model"
)

// Handlers answer the area.
type Handlers struct {
	ci  *ci.Service
	mrs *mergerequests.Service
	r   *entity.Renderer
}

// New returns the area.
func New(s *ci.Service, mrs *mergerequests.Service, r *entity.Renderer) *Handlers {
	return &Handlers{ci: s, mrs: mrs, r: r}
}

// Routes are the area's rows. Every route needs a token (GitLab's
// authenticate!); a CI job token reads environments and deployments and
// reports deployments of its own project.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	envs := "/projects/{id}/environments"
	env := envs + "/{environment_id}"
	deps := "/projects/{id}/deployments"
	dep := deps + "/{deployment_id}"
	return []endpoint.Route{
		row("GET", envs, token, api, parsed, h.listEnvironments).WithJobTokens(),
		row("POST", envs, token, api, parsed, h.createEnvironment),
		row("DELETE", envs+"/review_apps", token, api, parsed, h.deleteReviewApps),
		row("POST", envs+"/stop_stale", token, api, parsed, h.stopStale),
		row("GET", env, token, api, parsed, h.getEnvironment).WithJobTokens(),
		row("PUT", env, token, api, parsed, h.updateEnvironment),
		row("DELETE", env, token, api, parsed, h.deleteEnvironment),
		row("POST", env+"/stop", token, api, parsed, h.stopEnvironment),
		row("GET", deps, token, api, parsed, h.listDeployments).WithJobTokens(),
		row("POST", deps, token, api, parsed, h.createDeployment).WithJobTokens(),
		row("GET", dep, token, api, parsed, h.getDeployment).WithJobTokens(),
		row("PUT", dep, token, api, parsed, h.updateDeployment).WithJobTokens(),
		row("DELETE", dep, token, api, parsed, h.deleteDeployment),
		row("GET", dep+"/merge_requests", token, api, parsed, h.deploymentMergeRequests),
	}
}

// maxNameParam bounds names and search strings.
const maxNameParam = 255

func (h *Handlers) listEnvironments(c *endpoint.Call) error {
	var in ci.EnvironmentsInput
	in.Name, _ = c.P.String("name")
	in.Search, _ = c.P.String("search")
	if len(in.Name) > maxNameParam || len(in.Search) > maxNameParam {
		c.P.Fail("name is too long")
	}
	if c.P.Has("name") && c.P.Has("search") {
		c.P.Fail("name, search cannot be used together")
	}
	st, _ := c.P.Enum("states", "available", "stopping", "stopped")
	in.State = model.EnvironmentState(st)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.ci.Environments(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Environment, len(list))
	for i := range list {
		out[i] = h.r.Environment(list[i], c.Actor)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) environmentInput(c *endpoint.Call) ci.EnvironmentInput {
	if c.P.Has("slug") {
		c.P.Fail("slug is automatically generated and cannot be changed")
	}
	in := ci.EnvironmentInput{Name: c.P.StringPtr("name"), ExternalURL: c.P.StringPtr("external_url"),
		Description: c.P.StringPtr("description")}
	if c.P.Has("tier") {
		t, ok := c.P.Enum("tier", model.Tiers...)
		if ok {
			in.Tier = &t
		}
	}
	if c.P.Has("auto_stop_setting") {
		c.P.Enum("auto_stop_setting", "always")
	}
	return in
}

func (h *Handlers) createEnvironment(c *endpoint.Call) error {
	c.P.Require("name")
	in := h.environmentInput(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.CreateEnvironment(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Environment(v, c.Actor))
}

func (h *Handlers) getEnvironment(c *endpoint.Call) error {
	id, err := c.PathID("environment_id")
	if err != nil {
		return err
	}
	v, err := h.ci.Environment(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Environment(v, c.Actor))
}

func (h *Handlers) updateEnvironment(c *endpoint.Call) error {
	id, err := c.PathID("environment_id")
	if err != nil {
		return err
	}
	in := h.environmentInput(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.UpdateEnvironment(c.Ctx(), c.Actor, c.Path("id"), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Environment(v, c.Actor))
}

func (h *Handlers) deleteEnvironment(c *endpoint.Call) error {
	id, err := c.PathID("environment_id")
	if err != nil {
		return err
	}
	if err := h.ci.DeleteEnvironment(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) stopEnvironment(c *endpoint.Call) error {
	id, err := c.PathID("environment_id")
	if err != nil {
		return err
	}
	force, _ := c.P.Bool("force")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.StopEnvironment(c.Ctx(), c.Actor, c.Path("id"), id, force)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Environment(v, c.Actor))
}

func (h *Handlers) stopStale(c *endpoint.Call) error {
	c.P.Require("before")
	before, _ := c.P.Time("before")
	if err := c.P.Err(); err != nil {
		return err
	}
	msg, err := h.ci.StopStaleEnvironments(c.Ctx(), c.Actor, c.Path("id"), *before)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"message": msg})
}

func (h *Handlers) deleteReviewApps(c *endpoint.Call) error {
	before := h.r.Now().AddDate(0, 0, -30)
	if t, ok := c.P.Time("before"); ok {
		before = *t
	}
	limit := int64(100)
	if n, ok := c.P.Int("limit"); ok {
		if n < 1 || n > 1000 {
			c.P.Fail("limit does not have a valid value")
		}
		limit = n
	}
	dryRun := true
	if b, ok := c.P.Bool("dry_run"); ok {
		dryRun = b
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	res, err := h.ci.DeleteReviewApps(c.Ctx(), c.Actor, c.Path("id"), before, int(limit), dryRun)
	if err != nil {
		return err
	}
	basic := func(list []model.Environment) []entity.EnvironmentBasic {
		out := make([]entity.EnvironmentBasic, len(list))
		for i, e := range list {
			out[i] = h.r.EnvironmentBasic(e)
		}
		return out
	}
	body := map[string]any{"scheduled_entries": basic(res.Scheduled), "unprocessable_entries": basic(res.Unprocessable)}
	switch {
	case res.Denied:
		body["message"] = ci.ReviewAppsDenied
		return c.JSON(http.StatusUnauthorized, map[string]any{"message": body})
	case res.NoneFound:
		body["message"] = ci.ReviewAppsNoneFound
		return c.JSON(http.StatusBadRequest, map[string]any{"message": body})
	}
	return c.JSON(http.StatusOK, body)
}

func (h *Handlers) listDeployments(c *endpoint.Call) error {
	var in ci.DeploymentsInput
	in.OrderBy, _ = c.P.Enum("order_by", "id", "iid", "created_at", "updated_at", "finished_at", "ref")
	sort, _ := c.P.Enum("sort", "asc", "desc")
	in.Desc = sort == "desc"
	in.UpdatedAfter, _ = c.P.Time("updated_after")
	in.UpdatedBefore, _ = c.P.Time("updated_before")
	in.FinishedAfter, _ = c.P.Time("finished_after")
	in.FinishedBefore, _ = c.P.Time("finished_before")
	in.Environment, _ = c.P.String("environment")
	if len(in.Environment) > maxNameParam {
		c.P.Fail("environment is too long")
	}
	statuses := make([]string, len(model.DeploymentStatuses))
	for i, s := range model.DeploymentStatuses {
		statuses[i] = string(s)
	}
	st, _ := c.P.Enum("status", statuses...)
	in.Status = model.DeploymentStatus(st)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.ci.Deployments(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Deployment, len(list))
	for i := range list {
		out[i] = h.r.Deployment(list[i], c.Actor)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getDeployment(c *endpoint.Call) error {
	id, err := c.PathID("deployment_id")
	if err != nil {
		return err
	}
	v, err := h.ci.Deployment(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Deployment(v, c.Actor))
}

// externalStatus reads the status an API deployment is set to.
func externalStatus(c *endpoint.Call) model.DeploymentStatus {
	values := make([]string, len(ci.ExternalStatuses))
	for i, s := range ci.ExternalStatuses {
		values[i] = string(s)
	}
	st, _ := c.P.Enum("status", values...)
	return model.DeploymentStatus(st)
}

func (h *Handlers) createDeployment(c *endpoint.Call) error {
	c.P.Require("environment", "sha", "ref", "tag", "status")
	var in ci.DeploymentInput
	in.Environment, _ = c.P.String("environment")
	in.SHA, _ = c.P.String("sha")
	in.Ref, _ = c.P.String("ref")
	in.Tag, _ = c.P.Bool("tag")
	in.Status = externalStatus(c)
	in.SHA = strings.ToLower(in.SHA)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.CreateDeployment(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Deployment(v, c.Actor))
}

func (h *Handlers) updateDeployment(c *endpoint.Call) error {
	id, err := c.PathID("deployment_id")
	if err != nil {
		return err
	}
	c.P.Require("status")
	status := externalStatus(c)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.UpdateDeployment(c.Ctx(), c.Actor, c.Path("id"), id, status)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Deployment(v, c.Actor))
}

func (h *Handlers) deleteDeployment(c *endpoint.Call) error {
	id, err := c.PathID("deployment_id")
	if err != nil {
		return err
	}
	if err := h.ci.DeleteDeployment(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) deploymentMergeRequests(c *endpoint.Call) error {
	id, err := c.PathID("deployment_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	_, iids, err := h.ci.DeploymentMergeRequestIIDs(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	if len(iids) == 0 {
		return c.List(pg, model.PageInfo{}, []entity.MergeRequest{})
	}
	var in mergerequests.ListInput
	in.IIDs = iids
	list, info, err := h.mrs.List(c.Ctx(), c.Actor, c.Path("id"), "", in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.MergeRequest, len(list))
	for i := range list {
		out[i] = h.r.MergeRequest(list[i])
	}
	return c.List(pg, info, out)
}
