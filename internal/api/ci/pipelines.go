package ci

import (
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/model"
)

func (h *Handlers) pipelineID(c *endpoint.Call) (int64, error) { return c.PathID("pipeline_id") }

func (h *Handlers) listPipelines(c *endpoint.Call) error {
	var in ci.PipelinesInput
	in.Scope, _ = c.P.Enum("scope", "running", "pending", "finished", "branches", "tags")
	if v, ok := c.P.Enum("status", statusNames(model.PipelineStatuses)...); ok {
		in.Status = model.CIStatus(v)
	}
	in.Source, _ = c.P.Enum("source", model.PipelineSources...)
	in.Ref, _ = c.P.String("ref")
	in.SHA, _ = c.P.String("sha")
	in.YAMLErrors = c.P.BoolPtr("yaml_errors")
	in.Username, _ = c.P.String("username")
	in.UpdatedAfter, _ = c.P.Time("updated_after")
	in.UpdatedBefore, _ = c.P.Time("updated_before")
	in.OrderBy, _ = c.P.Enum("order_by", "id", "status", "ref", "updated_at", "user_id")
	if v, ok := c.P.Enum("sort", "asc", "desc"); ok {
		in.Asc = v == "asc"
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.Pipelines(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.PipelineBasic, len(list))
	for i := range list {
		out[i] = h.r.PipelineBasic(list[i].Pipeline, list[i].ProjectPath)
	}
	return c.List(pg, info, out)
}

func statusNames(list []model.CIStatus) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

func (h *Handlers) createPipeline(c *endpoint.Call) error {
	c.P.Require("ref")
	ref, _ := c.P.String("ref")
	vars, err := variableList(c, "variables")
	if err != nil {
		return err
	}
	v, err := h.ci.CreatePipeline(c.Ctx(), c.Actor, c.Path("id"), ref, vars)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Pipeline(v))
}

func (h *Handlers) latestPipeline(c *endpoint.Call) error {
	ref, _ := c.P.String("ref")
	v, err := h.ci.LatestPipeline(c.Ctx(), c.Actor, c.Path("id"), ref)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Pipeline(v))
}

// pipelineAnswer runs a pipeline action and renders the pipeline.
func (h *Handlers) pipelineAnswer(c *endpoint.Call, status int, do func(id int64) (ci.PipelineView, error)) error {
	id, err := h.pipelineID(c)
	if err != nil {
		return err
	}
	v, err := do(id)
	if err != nil {
		return err
	}
	return c.JSON(status, h.r.Pipeline(v))
}

func (h *Handlers) getPipeline(c *endpoint.Call) error {
	return h.pipelineAnswer(c, http.StatusOK, func(id int64) (ci.PipelineView, error) {
		return h.ci.Pipeline(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) retryPipeline(c *endpoint.Call) error {
	return h.pipelineAnswer(c, http.StatusCreated, func(id int64) (ci.PipelineView, error) {
		return h.ci.RetryPipeline(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) cancelPipeline(c *endpoint.Call) error {
	return h.pipelineAnswer(c, http.StatusOK, func(id int64) (ci.PipelineView, error) {
		return h.ci.CancelPipeline(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) deletePipeline(c *endpoint.Call) error {
	id, err := h.pipelineID(c)
	if err != nil {
		return err
	}
	if err := h.ci.DeletePipeline(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) pipelineVariables(c *endpoint.Call) error {
	id, err := h.pipelineID(c)
	if err != nil {
		return err
	}
	vars, err := h.ci.PipelineVariables(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	out := make([]entity.PipelineVariable, len(vars))
	for i, v := range vars {
		out[i] = entity.PipelineVariable{Key: v.Key, VariableType: v.VariableType, Value: v.Value}
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) testReport(c *endpoint.Call) error {
	id, err := h.pipelineID(c)
	if err != nil {
		return err
	}
	rep, err := h.ci.TestReport(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.TestReportOf(rep))
}

func (h *Handlers) testReportSummary(c *endpoint.Call) error {
	id, err := h.pipelineID(c)
	if err != nil {
		return err
	}
	sum, err := h.ci.TestReportSummary(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.TestReportSummaryOf(sum))
}

// triggerPipeline creates a pipeline with a trigger token; the ref in the
// path wins over the parameter.
func (h *Handlers) triggerPipeline(c *endpoint.Call) error {
	c.P.Require("token")
	ref := c.Path("ref")
	if ref == "" {
		c.P.Require("ref")
		ref, _ = c.P.String("ref")
	}
	token, _ := c.P.String("token")
	vars, ok := c.P.StringHash("variables")
	if err := c.P.Err(); err != nil {
		return err
	}
	if v, given := c.P.Raw("variables"); !ok || given && v != "" {
		return model.BadRequestRaw("variables needs to be a map of key-valued strings")
	}
	v, err := h.ci.TriggerPipeline(c.Ctx(), c.Path("id"), token, ref, vars)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Pipeline(v))
}

func (h *Handlers) triggerID(c *endpoint.Call) (int64, error) { return c.PathID("trigger_id") }

func (h *Handlers) listTriggers(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.Triggers(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.Trigger, len(list))
	for i := range list {
		out[i] = h.r.Trigger(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getTrigger(c *endpoint.Call) error {
	id, err := h.triggerID(c)
	if err != nil {
		return err
	}
	t, err := h.ci.Trigger(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Trigger(t))
}

func (h *Handlers) createTrigger(c *endpoint.Call) error {
	c.P.Require("description")
	desc, _ := c.P.String("description")
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.ci.CreateTrigger(c.Ctx(), c.Actor, c.Path("id"), desc)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Trigger(t))
}

func (h *Handlers) updateTrigger(c *endpoint.Call) error {
	id, err := h.triggerID(c)
	if err != nil {
		return err
	}
	t, err := h.ci.UpdateTrigger(c.Ctx(), c.Actor, c.Path("id"), id, c.P.StringPtr("description"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Trigger(t))
}

func (h *Handlers) deleteTrigger(c *endpoint.Call) error {
	id, err := h.triggerID(c)
	if err != nil {
		return err
	}
	if err := h.ci.DeleteTrigger(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) setStatus(c *endpoint.Call) error {
	c.P.Require("state")
	var in ci.StatusInput
	in.State, _ = c.P.Enum("state", ci.StatusStates...)
	in.Ref, _ = c.P.String("ref")
	in.Name, _ = c.P.String("name")
	if in.Name == "" {
		in.Name, _ = c.P.String("context")
	}
	in.TargetURL = c.P.StringPtr("target_url")
	in.Description = c.P.StringPtr("description")
	if v, ok := c.P.String("coverage"); ok && v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			c.P.Fail("coverage is invalid")
		}
		in.Coverage = &f
	}
	if id, ok := c.P.Int("pipeline_id"); ok {
		in.PipelineID = id
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.ci.SetCommitStatus(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.CommitStatus(v))
}

func (h *Handlers) listStatuses(c *endpoint.Call) error {
	var in ci.CommitStatusesInput
	in.Ref, _ = c.P.String("ref")
	in.Stage, _ = c.P.String("stage")
	in.Name, _ = c.P.String("name")
	in.PipelineID, _ = c.P.Int("pipeline_id")
	in.All = c.P.Flag("all")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.CommitStatuses(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.CommitStatus, len(list))
	for i := range list {
		out[i] = h.r.CommitStatus(list[i])
	}
	return c.List(pg, info, out)
}
