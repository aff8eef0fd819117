// Package housekeeping serves POST /projects/:id/housekeeping: a
// maintainer starts the housekeeping of a project's repository.
package housekeeping

import (
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/housekeeping"
)

// Handlers answer the housekeeping area.
type Handlers struct{ hk *housekeeping.Service }

// New returns the housekeeping area.
func New(hk *housekeeping.Service) *Handlers { return &Handlers{hk: hk} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	return []endpoint.Route{
		endpoint.Row("POST", "/projects/{id}/housekeeping", endpoint.Token, endpoint.ScopeAPI, endpoint.Parsed, h.start),
	}
}

// start answers 201 with the started task's id as a string (GitLab
// answers with its background job's id); 409 while a housekeeping of the
// repository is pending or running.
func (h *Handlers) start(c *endpoint.Call) error {
	// Grape checks parameters before the endpoint finds the project.
	task := housekeeping.TaskEager
	if v, ok := c.P.Enum("task", housekeeping.TaskEager, housekeeping.TaskPrune); ok {
		task = v
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	id, err := h.hk.Start(c.Ctx(), c.Actor, c.Path("id"), task)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, strconv.FormatInt(id, 10))
}
