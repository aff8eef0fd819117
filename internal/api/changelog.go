package api

import (
	"net/http"

	"quarry/internal/changelog"
	"quarry/internal/model"
)

type notesJSON struct {
	Notes string `json:"notes"`
}

// changelogParams reads the parameters both changelog endpoints share,
// and those of the commit when commit is set.
func (c *call) changelogParams(commit bool) (changelog.Params, error) {
	p := c.p
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
func (c *call) getChangelog() error {
	in, err := c.changelogParams(false)
	if err != nil {
		return err
	}
	notes, err := c.s.Changelog.Notes(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, notesJSON{Notes: notes})
}

// commitChangelog serves POST /projects/:id/repository/changelog: the
// notes committed into the changelog file.
func (c *call) commitChangelog() error {
	in, err := c.changelogParams(true)
	if err != nil {
		return err
	}
	notes, err := c.s.Changelog.Commit(c.r.Context(), c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, notesJSON{Notes: notes})
}
