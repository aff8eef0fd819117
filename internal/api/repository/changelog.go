package repository

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/changelog"
	"quarry/internal/model"
)

// changelogParams reads the parameters both changelog endpoints share,
// and those of the commit when commit is set.
func (h *Handlers) changelogParams(c *endpoint.Call, commit bool) (changelog.Params, error) {
	p := c.P
	p.Require("version")
	var in changelog.Params
	in.Version, _ = p.String("version")
	in.From, _ = p.String("from")
	in.To, _ = p.String("to")
	in.Date, _ = p.Time("date")
	in.Trailer, _ = p.String("trailer")
	in.ConfigFile, _ = p.String("config_file")
	if commit {
		in.Branch, _ = p.String("branch")
		in.File, _ = p.String("file")
		in.Message, _ = p.String("message")
	}
	if err := p.Err(); err != nil {
		return in, err
	}
	if _, ok := changelog.ParseVersion(in.Version); !ok {
		return in, model.Param("version is invalid")
	}
	return in, nil
}

// getChangelog serves GET /projects/:id/repository/changelog: the notes
// of a release, not committed.
func (h *Handlers) getChangelog(c *endpoint.Call) error {
	in, err := h.changelogParams(c, false)
	if err != nil {
		return err
	}
	notes, err := h.changelog.Notes(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.Notes{Notes: notes})
}

// commitChangelog serves POST /projects/:id/repository/changelog: the
// notes committed into the changelog file.
func (h *Handlers) commitChangelog(c *endpoint.Call) error {
	in, err := h.changelogParams(c, true)
	if err != nil {
		return err
	}
	notes, err := h.changelog.Commit(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.Notes{Notes: notes})
}
