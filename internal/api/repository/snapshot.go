package repository

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/repofiles"
)

// snapshot streams GET /projects/:id/snapshot: an uncompressed tar of the
// project's bare repository, with the headers GitLab's Workhorse sends.
// Past the headers a failure can only cut the stream: the connection is
// dropped, so that the client sees an error and not a short tar.
func (h *Handlers) snapshot(c *endpoint.Call) error {
	wiki, _ := c.P.Bool("wiki")
	snap, err := h.files.Snapshot(c.Ctx(), c.Actor, c.Path("id"), wiki, c.P.Err())
	if err != nil {
		return err
	}
	defer snap.Close()
	hd := c.W.Header()
	hd.Set("Content-Type", "application/x-tar")
	hd.Set("Content-Disposition", `attachment; filename="`+repofiles.SnapshotName+`"`)
	hd.Set("Content-Transfer-Encoding", "binary")
	hd.Set("Cache-Control", "private")
	c.W.WriteHeader(http.StatusOK)
	if err := snap.WriteTo(c.Ctx(), c.W); err != nil {
		panic(http.ErrAbortHandler)
	}
	return nil
}
