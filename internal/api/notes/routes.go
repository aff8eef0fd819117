// Package notes serves the notes (comments) and award emoji of issues:
// list, read, create, edit and delete.
package notes

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/notes"
)

// Handlers answer the notes area.
type Handlers struct {
	notes *notes.Service
	r     *entity.Renderer
}

// New returns the area.
func New(s *notes.Service, r *entity.Renderer) *Handlers { return &Handlers{notes: s, r: r} }

// Routes are the area's rows. GitLab's notes and award emoji APIs need
// a signed-in caller, reads included.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	const (
		list   = "/projects/{id}/issues/{issue_iid}/notes"
		note   = list + "/{note_id}"
		awards = "/projects/{id}/issues/{issue_iid}/award_emoji"
		award  = awards + "/{award_id}"
	)
	return []endpoint.Route{
		row("GET", list, token, api, parsed, h.list),
		row("POST", list, token, api, parsed, h.create),
		row("GET", note, token, api, parsed, h.get),
		row("PUT", note, token, api, parsed, h.update),
		row("DELETE", note, token, api, parsed, h.delete),
		row("GET", awards, token, api, parsed, h.awards),
		row("POST", awards, token, api, parsed, h.addAward),
		row("GET", award, token, api, parsed, h.award),
		row("DELETE", award, token, api, parsed, h.removeAward),
	}
}

// ids reads the iid and, when name is set, a second id.
func ids(c *endpoint.Call, name string) (iid, id int64, err error) {
	if iid, err = c.PathID("issue_iid"); err != nil || name == "" {
		return iid, 0, err
	}
	id, err = c.PathID(name)
	return iid, id, err
}

func (h *Handlers) list(c *endpoint.Call) error {
	iid, _, err := ids(c, "")
	if err != nil {
		return err
	}
	var l notes.Listing
	l.OrderBy, _ = c.P.Enum("order_by", "created_at", "updated_at")
	sort, _ := c.P.Enum("sort", "asc", "desc")
	l.Asc = sort == "asc"
	switch v, _ := c.P.Enum("activity_filter", "all_notes", "only_comments", "only_activity"); v {
	case "only_comments":
		l.System = new(bool)
	case "only_activity":
		system := true
		l.System = &system
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.notes.List(c.Ctx(), c.Actor, c.Path("id"), iid, l, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.Notes(list))
}

func (h *Handlers) get(c *endpoint.Call) error {
	iid, id, err := ids(c, "note_id")
	if err != nil {
		return err
	}
	v, err := h.notes.Get(c.Ctx(), c.Actor, c.Path("id"), iid, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Note(v))
}

func (h *Handlers) create(c *endpoint.Call) error {
	iid, _, err := ids(c, "")
	if err != nil {
		return err
	}
	p := c.P
	p.Require("body")
	in := notes.CreateInput{Body: p.Value("body"), Internal: p.Flag("internal") || p.Flag("confidential")}
	in.CreatedAt, _ = p.Time("created_at")
	if err := p.Err(); err != nil {
		return err
	}
	v, err := h.notes.Create(c.Ctx(), c.Actor, c.Path("id"), iid, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Note(v))
}

func (h *Handlers) update(c *endpoint.Call) error {
	iid, id, err := ids(c, "note_id")
	if err != nil {
		return err
	}
	p := c.P
	p.Bool("confidential")
	body, ok := p.String("body")
	if err := p.Err(); err != nil {
		return err
	}
	var in *string
	switch {
	case ok && body == "":
		// GitLab's body is optional but not blank.
		return model.Param("body is empty")
	case ok:
		in = &body
	}
	v, err := h.notes.Update(c.Ctx(), c.Actor, c.Path("id"), iid, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Note(v))
}

func (h *Handlers) delete(c *endpoint.Call) error {
	iid, id, err := ids(c, "note_id")
	if err != nil {
		return err
	}
	if err := h.notes.Delete(c.Ctx(), c.Actor, c.Path("id"), iid, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) awards(c *endpoint.Call) error {
	iid, _, err := ids(c, "")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.notes.Awards(c.Ctx(), c.Actor, c.Path("id"), iid, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.r.AwardEmojiList(list))
}

func (h *Handlers) award(c *endpoint.Call) error {
	iid, id, err := ids(c, "award_id")
	if err != nil {
		return err
	}
	v, err := h.notes.Award(c.Ctx(), c.Actor, c.Path("id"), iid, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.AwardEmoji(v))
}

func (h *Handlers) addAward(c *endpoint.Call) error {
	iid, _, err := ids(c, "")
	if err != nil {
		return err
	}
	c.P.Require("name")
	name := c.P.Value("name")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.notes.AddAward(c.Ctx(), c.Actor, c.Path("id"), iid, name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.AwardEmoji(v))
}

func (h *Handlers) removeAward(c *endpoint.Call) error {
	iid, id, err := ids(c, "award_id")
	if err != nil {
		return err
	}
	if err := h.notes.RemoveAward(c.Ctx(), c.Actor, c.Path("id"), iid, id); err != nil {
		return err
	}
	return c.NoContent()
}
