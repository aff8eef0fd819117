// Package schedules serves projects' pipeline schedules
// (/projects/:id/pipeline_schedules).
package schedules

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/schedules"
)

// Handlers answer the pipeline schedules area.
type Handlers struct {
	s *schedules.Service
	r *entity.Renderer
}

// New returns the area.
func New(s *schedules.Service, r *entity.Renderer) *Handlers { return &Handlers{s: s, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	const (
		base     = "/projects/{id}/pipeline_schedules"
		schedule = base + "/{pipeline_schedule_id}"
		variable = schedule + "/variables/{key}"
	)
	return []endpoint.Route{
		row("GET", base, token, api, parsed, h.list),
		row("POST", base, token, api, parsed, h.create),
		row("GET", schedule, token, api, parsed, h.get),
		row("PUT", schedule, token, api, parsed, h.update),
		row("DELETE", schedule, token, api, parsed, h.delete),
		row("POST", schedule+"/take_ownership", token, api, parsed, h.takeOwnership),
		row("POST", schedule+"/play", token, api, parsed, h.play),
		row("GET", schedule+"/pipelines", token, api, parsed, h.pipelines),
		row("POST", schedule+"/variables", token, api, parsed, h.createVariable),
		row("GET", variable, token, api, parsed, h.getVariable),
		row("PUT", variable, token, api, parsed, h.updateVariable),
		row("DELETE", variable, token, api, parsed, h.deleteVariable),
	}
}

func scheduleID(c *endpoint.Call) (int64, error) { return c.PathID("pipeline_schedule_id") }

func (h *Handlers) details(v schedules.View) entity.PipelineScheduleDetails {
	return h.r.PipelineScheduleDetails(v.PipelineSchedule, v.Owner, v.LastPipeline, v.ProjectPath, v.Variables)
}

func (h *Handlers) list(c *endpoint.Call) error {
	var in schedules.ListInput
	in.Scope, _ = c.P.Enum("scope", model.ScheduleScopeActive, model.ScheduleScopeInactive)
	in.OrderBy, _ = c.P.Enum("order_by", "id", "description", "ref", "next_run_at", "created_at", "updated_at")
	if v, ok := c.P.Enum("sort", "asc", "desc"); ok {
		in.Desc = v == "desc"
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.s.List(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.PipelineSchedule, len(list))
	for i, v := range list {
		out[i] = h.r.PipelineSchedule(v.PipelineSchedule, v.Owner)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	v, err := h.s.Get(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.details(v))
}

// input reads a schedule's settings; ref, when given, may not be empty
// (Grape's allow_blank: false).
func input(c *endpoint.Call) (schedules.Input, error) {
	in := schedules.Input{Description: c.P.StringPtr("description"), Ref: c.P.StringPtr("ref"), Cron: c.P.StringPtr("cron"),
		CronTimezone: c.P.StringPtr("cron_timezone"), Active: c.P.BoolPtr("active")}
	if in.Ref != nil && *in.Ref == "" {
		c.P.Fail("ref is empty")
	}
	return in, c.P.Err()
}

func (h *Handlers) create(c *endpoint.Call) error {
	c.P.Require("description", "ref", "cron")
	in, err := input(c)
	if err != nil {
		return err
	}
	v, err := h.s.Create(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.details(v))
}

func (h *Handlers) update(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	in, err := input(c)
	if err != nil {
		return err
	}
	v, err := h.s.Update(c.Ctx(), c.Actor, c.Path("id"), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.details(v))
}

func (h *Handlers) delete(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	if err := h.s.Delete(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

// takeOwnership answers 201, or 200 when the caller owned it already.
func (h *Handlers) takeOwnership(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	v, changed, err := h.s.TakeOwnership(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !changed {
		status = http.StatusOK
	}
	return c.JSON(status, h.details(v))
}

func (h *Handlers) play(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	if err := h.s.Play(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]string{"message": "201 Created"})
}

func (h *Handlers) pipelines(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	desc := false
	if v, ok := c.P.Enum("sort", "asc", "desc"); ok {
		desc = v == "desc"
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, path, info, err := h.s.Pipelines(c.Ctx(), c.Actor, c.Path("id"), id, desc, pg)
	if err != nil {
		return err
	}
	out := make([]entity.PipelineBasic, len(list))
	for i := range list {
		out[i] = h.r.PipelineBasic(list[i], path)
	}
	return c.List(pg, info, out)
}

func variableInput(c *endpoint.Call) (schedules.VariableInput, error) {
	in := schedules.VariableInput{Value: c.P.StringPtr("value")}
	if v, ok := c.P.Enum("variable_type", model.VarEnv, model.VarFile); ok {
		in.VariableType = &v
	}
	return in, c.P.Err()
}

func (h *Handlers) createVariable(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	c.P.Require("key", "value")
	key, _ := c.P.String("key")
	in, err := variableInput(c)
	if err != nil {
		return err
	}
	v, err := h.s.CreateVariable(c.Ctx(), c.Actor, c.Path("id"), id, key, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, entity.ScheduleVariable(v))
}

func (h *Handlers) getVariable(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	v, err := h.s.Variable(c.Ctx(), c.Actor, c.Path("id"), id, c.Path("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.ScheduleVariable(v))
}

func (h *Handlers) updateVariable(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	in, err := variableInput(c)
	if err != nil {
		return err
	}
	v, err := h.s.UpdateVariable(c.Ctx(), c.Actor, c.Path("id"), id, c.Path("key"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.ScheduleVariable(v))
}

// deleteVariable answers 202 with the removed variable, as GitLab.
func (h *Handlers) deleteVariable(c *endpoint.Call) error {
	id, err := scheduleID(c)
	if err != nil {
		return err
	}
	v, err := h.s.DeleteVariable(c.Ctx(), c.Actor, c.Path("id"), id, c.Path("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, entity.ScheduleVariable(v))
}
