// Package ci serves the CI area: pipelines, jobs and bridges, their logs
// and test reports, trigger tokens, CI/CD variables of projects, groups
// and the instance, resource groups and commit statuses.
package ci

import (
	"slices"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// Handlers answer the CI area.
type Handlers struct {
	ci *ci.Service
	r  *entity.Renderer
}

// New returns the CI area.
func New(s *ci.Service, r *entity.Renderer) *Handlers { return &Handlers{ci: s, r: r} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token, none, api := endpoint.Public, endpoint.Token, endpoint.NoAuth, endpoint.ScopeAPI
	const (
		project  = "/projects/{id}"
		job      = project + "/jobs/{job_id}"
		pipeline = project + "/pipelines/{pipeline_id}"
		resource = project + "/resource_groups/{key}"
	)
	// CI/CD variables of projects, groups and (administrators only) the
	// instance.
	variables := func(owner string) []endpoint.Route {
		base, guard := "/"+owner+"s/{id}/variables", func(h endpoint.Handler) endpoint.Handler { return h }
		if owner == model.OwnerInstance {
			base, guard = "/admin/ci/variables", administrators
		}
		return []endpoint.Route{
			row("GET", base, token, api, parsed, guard(func(c *endpoint.Call) error { return h.listVariables(c, owner) })),
			row("POST", base, token, api, parsed, guard(func(c *endpoint.Call) error { return h.createVariable(c, owner) })),
			row("GET", base+"/{key}", token, api, parsed, guard(func(c *endpoint.Call) error { return h.getVariable(c, owner) })),
			row("PUT", base+"/{key}", token, api, parsed, guard(func(c *endpoint.Call) error { return h.updateVariable(c, owner) })),
			row("DELETE", base+"/{key}", token, api, parsed, guard(func(c *endpoint.Call) error { return h.deleteVariable(c, owner) })),
		}
	}
	rows := []endpoint.Route{
		// Jobs: GitLab's jobs API authenticates every call (lib/api/ci/
		// jobs.rb), public projects' too.
		row("GET", project+"/jobs", token, api, parsed, h.listJobs).WithJobTokens(),
		row("GET", job, token, api, parsed, h.getJob).WithJobTokens(),
		row("GET", job+"/trace", token, api, parsed, h.trace),
		row("POST", job+"/cancel", token, api, parsed, h.cancelJob),
		row("POST", job+"/retry", token, api, parsed, h.retryJob),
		row("POST", job+"/erase", token, api, parsed, h.eraseJob),
		row("POST", job+"/play", token, api, parsed, h.playJob),

		// Artifacts (jobs may fetch them with their token).
		row("GET", job+"/artifacts", public, api, parsed, h.jobArchive).WithJobTokens(),
		row("GET", job+"/artifacts/{artifact_path...}", public, api, parsed, h.jobArtifactFile).WithJobTokens(),
		row("GET", project+"/jobs/artifacts/{ref}/download", public, api, parsed, h.refArchive).WithJobTokens(),
		row("GET", project+"/jobs/artifacts/{ref}/raw/{artifact_path...}", public, api, parsed, h.refArtifactFile).WithJobTokens(),
		row("POST", job+"/artifacts/keep", token, api, parsed, h.keepArtifacts),
		row("DELETE", job+"/artifacts", token, api, parsed, h.deleteJobArtifacts),
		row("DELETE", project+"/artifacts", token, api, parsed, h.deleteProjectArtifacts),

		// CI lint: the project's file (read_code), or given content
		// (create_pipeline).
		row("GET", project+"/ci/lint", public, api, parsed, h.lintProjectFile),
		row("POST", project+"/ci/lint", token, api, parsed, h.lintContent),

		// Pipelines.
		row("GET", project+"/pipelines", public, api, parsed, h.listPipelines),
		row("POST", project+"/pipeline", token, api, parsed, h.createPipeline),
		row("GET", project+"/pipelines/latest", public, api, parsed, h.latestPipeline),
		row("GET", pipeline, public, api, parsed, h.getPipeline),
		row("DELETE", pipeline, token, api, parsed, h.deletePipeline),
		row("GET", pipeline+"/jobs", public, api, parsed, h.pipelineJobs).WithJobTokens(),
		row("GET", pipeline+"/bridges", public, api, parsed, h.pipelineBridges),
		row("GET", pipeline+"/variables", token, api, parsed, h.pipelineVariables),
		row("GET", pipeline+"/test_report", public, api, parsed, h.testReport),
		row("GET", pipeline+"/test_report_summary", public, api, parsed, h.testReportSummary),
		row("POST", pipeline+"/retry", token, api, parsed, h.retryPipeline),
		row("POST", pipeline+"/cancel", token, api, parsed, h.cancelPipeline),
		// Clearing runner caches (Quarry's own: GitLab's is a web action).
		row("POST", project+"/ci/reset_cache", token, api, parsed, h.resetCache),

		// Trigger tokens: the trigger endpoints read the token themselves.
		row("POST", project+"/trigger/pipeline", none, api, parsed, h.triggerPipeline),
		row("POST", project+"/ref/{ref}/trigger/pipeline", none, api, parsed, h.triggerPipeline),
		row("GET", project+"/triggers", token, api, parsed, h.listTriggers),
		row("POST", project+"/triggers", token, api, parsed, h.createTrigger),
		row("GET", project+"/triggers/{trigger_id}", token, api, parsed, h.getTrigger),
		row("PUT", project+"/triggers/{trigger_id}", token, api, parsed, h.updateTrigger),
		row("DELETE", project+"/triggers/{trigger_id}", token, api, parsed, h.deleteTrigger),

		// Resource groups.
		row("GET", project+"/resource_groups", token, api, parsed, h.listResourceGroups),
		row("GET", resource, token, api, parsed, h.getResourceGroup),
		row("PUT", resource, token, api, parsed, h.updateResourceGroup),
		row("GET", resource+"/upcoming_jobs", token, api, parsed, h.upcomingJobs),
		row("GET", resource+"/current_job", token, api, parsed, h.currentJob),

		// Commit statuses of external CI.
		row("POST", project+"/statuses/{sha}", token, api, parsed, h.setStatus),
		row("GET", project+"/repository/commits/{sha}/statuses", public, api, parsed, h.listStatuses),
	}
	return slices.Concat(rows, variables(model.OwnerProject), variables(model.OwnerGroup), variables(model.OwnerInstance))
}
