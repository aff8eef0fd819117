package ci

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/ci"
)

// lintProjectFile is GET /projects/:id/ci/lint: the project's own
// configuration at content_ref (deprecated: sha), statically or as a
// dry run for dry_run_ref (deprecated: ref).
func (h *Handlers) lintProjectFile(c *endpoint.Call) error {
	exclusive(c, "sha", "content_ref")
	exclusive(c, "ref", "dry_run_ref")
	in := ci.LintInput{DryRun: c.P.Flag("dry_run")}
	in.ContentRef = firstString(c, "content_ref", "sha")
	in.Ref = firstString(c, "dry_run_ref", "ref")
	includeJobs := c.P.Flag("include_jobs")
	if err := c.P.Err(); err != nil {
		return err
	}
	res, err := h.ci.Lint(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.CILint(res, includeJobs))
}

// lintContent is POST /projects/:id/ci/lint: the given content in the
// project's context.
func (h *Handlers) lintContent(c *endpoint.Call) error {
	c.P.Require("content")
	content, _ := c.P.String("content")
	in := ci.LintInput{Content: &content, DryRun: c.P.Flag("dry_run")}
	in.Ref, _ = c.P.String("ref")
	includeJobs := c.P.Flag("include_jobs")
	if err := c.P.Err(); err != nil {
		return err
	}
	res, err := h.ci.Lint(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.CILint(res, includeJobs))
}

// exclusive records Grape's mutually_exclusive failure.
func exclusive(c *endpoint.Call, a, b string) {
	if c.P.Has(a) && c.P.Has(b) {
		c.P.Fail("%s, %s are mutually exclusive", a, b)
	}
}

// firstString is the first of keys given.
func firstString(c *endpoint.Call, keys ...string) string {
	for _, k := range keys {
		if v, ok := c.P.String(k); ok {
			return v
		}
	}
	return ""
}
