package ci

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// scope reads a jobs scope filter: one status or an array of them.
func scope(c *endpoint.Call) []model.CIStatus {
	vals, ok := c.P.Strings("scope")
	if !ok {
		return nil
	}
	out := make([]model.CIStatus, 0, len(vals))
	for _, v := range vals {
		if !slices.Contains(model.JobStatuses, model.CIStatus(v)) {
			c.P.Fail("scope does not have a valid value")
			return nil
		}
		out = append(out, model.CIStatus(v))
	}
	return out
}

func (h *Handlers) jobID(c *endpoint.Call) (int64, error) { return c.PathID("job_id") }

func (h *Handlers) listJobs(c *endpoint.Call) error {
	in := ci.JobsInput{Scope: scope(c)}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.Jobs(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.Jobs(list, c.Actor))
}

func (h *Handlers) getJob(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	v, err := h.ci.Job(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Job(v, c.Actor))
}

// trace streams a job's log as text.
func (h *Handlers) trace(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	rd, size, err := h.ci.OpenLog(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	defer rd.Close()
	hd := c.W.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Content-Length", strconv.FormatInt(size, 10))
	c.W.WriteHeader(http.StatusOK)
	_, _ = io.CopyN(c.W, rd, size)
	return nil
}

// jobChange answers a job action with the job: 201 (GitLab's POST).
func (h *Handlers) jobChange(c *endpoint.Call, status int, do func(id int64) (ci.JobView, error)) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	v, err := do(id)
	if err != nil {
		return err
	}
	return c.JSON(status, h.r.Job(v, c.Actor))
}

func (h *Handlers) cancelJob(c *endpoint.Call) error {
	return h.jobChange(c, http.StatusCreated, func(id int64) (ci.JobView, error) {
		return h.ci.CancelJob(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) retryJob(c *endpoint.Call) error {
	return h.jobChange(c, http.StatusCreated, func(id int64) (ci.JobView, error) {
		return h.ci.RetryJob(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) eraseJob(c *endpoint.Call) error {
	return h.jobChange(c, http.StatusCreated, func(id int64) (ci.JobView, error) {
		return h.ci.EraseJob(c.Ctx(), c.Actor, c.Path("id"), id)
	})
}

func (h *Handlers) playJob(c *endpoint.Call) error {
	vars, err := variableList(c, "job_variables_attributes")
	if err != nil {
		return err
	}
	return h.jobChange(c, http.StatusOK, func(id int64) (ci.JobView, error) {
		return h.ci.PlayJob(c.Ctx(), c.Actor, c.Path("id"), id, vars)
	})
}

// variableList reads an array of {key, value, variable_type} objects:
// a JSON array, or the form's key[][key]=… entries.
func variableList(c *endpoint.Call, key string) ([]model.Variable, error) {
	var out []model.Variable
	for _, obj := range c.P.Objects(key) {
		var v struct {
			Key          *string `json:"key"`
			Value        *string `json:"value"`
			VariableType *string `json:"variable_type"`
		}
		if err := json.Unmarshal([]byte(obj), &v); err != nil || v.Key == nil {
			c.P.Fail("%s is invalid", key)
			break
		}
		mv := model.Variable{Key: *v.Key, VariableType: model.VarEnv}
		if v.Value != nil {
			mv.Value = *v.Value
		}
		if v.VariableType != nil {
			mv.VariableType = *v.VariableType
		}
		out = append(out, mv)
	}
	keys, _ := c.P.Strings(key + "[][key]")
	values, _ := c.P.Strings(key + "[][value]")
	types, _ := c.P.Strings(key + "[][variable_type]")
	for i, k := range keys {
		mv := model.Variable{Key: k, VariableType: model.VarEnv}
		if i < len(values) {
			mv.Value = values[i]
		}
		if i < len(types) {
			mv.VariableType = types[i]
		}
		out = append(out, mv)
	}
	return out, c.P.Err()
}

func (h *Handlers) pipelineJobs(c *endpoint.Call) error {
	return h.pipelineJobList(c, model.JobBuild)
}

func (h *Handlers) pipelineBridges(c *endpoint.Call) error {
	return h.pipelineJobList(c, model.JobBridge)
}

func (h *Handlers) pipelineJobList(c *endpoint.Call, kind string) error {
	id, err := c.PathID("pipeline_id")
	if err != nil {
		return err
	}
	in := ci.JobsInput{Scope: scope(c), IncludeRetried: c.P.Flag("include_retried")}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.PipelineJobs(c.Ctx(), c.Actor, c.Path("id"), id, kind, in, pg)
	if err != nil {
		return err
	}
	if kind == model.JobBridge {
		out := make([]entity.Bridge, len(list))
		for i := range list {
			out[i] = h.r.Bridge(list[i], c.Actor)
		}
		return c.List(pg, info, out)
	}
	return c.List(pg, info, h.r.Jobs(list, c.Actor))
}

func (h *Handlers) listResourceGroups(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.ci.ResourceGroups(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.ResourceGroup, len(list))
	for i := range list {
		out[i] = h.r.ResourceGroup(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getResourceGroup(c *endpoint.Call) error {
	g, err := h.ci.ResourceGroup(c.Ctx(), c.Actor, c.Path("id"), c.Path("key"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ResourceGroup(g))
}

func (h *Handlers) updateResourceGroup(c *endpoint.Call) error {
	mode, _ := c.P.Enum("process_mode", model.ProcessModes...)
	if err := c.P.Err(); err != nil {
		return err
	}
	g, err := h.ci.SetProcessMode(c.Ctx(), c.Actor, c.Path("id"), c.Path("key"), mode)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.ResourceGroup(g))
}

func (h *Handlers) upcomingJobs(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	pg.Keyset = false
	list, info, err := h.ci.UpcomingJobs(c.Ctx(), c.Actor, c.Path("id"), c.Path("key"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.JobBasic, len(list))
	for i := range list {
		out[i] = h.r.JobBasic(list[i], c.Actor)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) currentJob(c *endpoint.Call) error {
	v, err := h.ci.CurrentJob(c.Ctx(), c.Actor, c.Path("id"), c.Path("key"))
	if err != nil {
		return err
	}
	if v == nil {
		return c.JSON(http.StatusOK, nil)
	}
	return c.JSON(http.StatusOK, h.r.JobBasic(*v, c.Actor))
}
