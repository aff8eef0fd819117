package ci

import (
	"net/http"

	"quarry/internal/api/endpoint"
)

// resetCache is Quarry's own POST /projects/:id/ci/reset_cache: GitLab
// clears runner caches only from its web UI. It answers the project's
// new cache index.
func (h *Handlers) resetCache(c *endpoint.Call) error {
	idx, err := h.ci.ResetCache(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]int64{"jobs_cache_index": idx})
}
