package ci

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/ci"
)

// Shapes are the row shapes ServeMux cannot hold side by side: a file of
// a job's archive (/jobs/:job_id/artifacts/*path) and a ref's archive
// (/jobs/artifacts/:ref_name/download) both match
// /jobs/artifacts/artifacts/download.
var Shapes = []string{"GET /projects/{}/jobs/{}/{}/{...}"}

// send streams an artifact as a download.
func send(c *endpoint.Call, f ci.ArtifactFile, contentType string) error {
	defer f.Close()
	return c.Download(f, f.Name, contentType, f.Size)
}

func (h *Handlers) jobArchive(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	f, err := h.ci.JobArchive(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return send(c, f, "application/zip")
}

func (h *Handlers) jobArtifactFile(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	f, err := h.ci.JobArtifactFile(c.Ctx(), c.Actor, c.Path("id"), id, c.Path("artifact_path"))
	if err != nil {
		return err
	}
	return send(c, f, "application/octet-stream")
}

func (h *Handlers) refArchive(c *endpoint.Call) error {
	c.P.Require("job")
	if err := c.P.Err(); err != nil {
		return err
	}
	f, err := h.ci.RefArchive(c.Ctx(), c.Actor, c.Path("id"), c.Path("ref"), c.P.Value("job"))
	if err != nil {
		return err
	}
	return send(c, f, "application/zip")
}

func (h *Handlers) refArtifactFile(c *endpoint.Call) error {
	c.P.Require("job")
	if err := c.P.Err(); err != nil {
		return err
	}
	f, err := h.ci.RefArtifactFile(c.Ctx(), c.Actor, c.Path("id"), c.Path("ref"), c.P.Value("job"), c.Path("artifact_path"))
	if err != nil {
		return err
	}
	return send(c, f, "application/octet-stream")
}

func (h *Handlers) keepArtifacts(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	v, err := h.ci.KeepArtifacts(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Job(v, c.Actor))
}

func (h *Handlers) deleteJobArtifacts(c *endpoint.Call) error {
	id, err := h.jobID(c)
	if err != nil {
		return err
	}
	if err := h.ci.DeleteJobArtifacts(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) deleteProjectArtifacts(c *endpoint.Call) error {
	if err := h.ci.DeleteProjectArtifacts(c.Ctx(), c.Actor, c.Path("id")); err != nil {
		return err
	}
	return c.Accepted()
}
