// Package boards serves project and group issue boards and their lists.
package boards

import (
	"net/http"
	"strconv"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/boards"
	"quarry/internal/model"
)

// Handlers answer the boards area.
type Handlers struct {
	boards *boards.Service
	r      *entity.Renderer
}

// New returns the boards area.
func New(b *boards.Service, r *entity.Renderer) *Handlers { return &Handlers{boards: b, r: r} }

// Routes are the area's rows: the same endpoints under projects and
// groups. Every row needs a signed-in caller (GitLab's authenticate!);
// the service answers 404 for a project or group the caller does not
// see and 403 for what its role does not allow.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	token, api := endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	for _, owner := range []struct {
		base  string
		group bool
	}{{"/projects/{id}/boards", false}, {"/groups/{id}/boards", true}} {
		group := owner.group
		o := func(c *endpoint.Call) model.OwnerRef { return model.OwnerRef{Group: group, Ref: c.Path("id")} }
		one, lists := owner.base+"/{board_id}", owner.base+"/{board_id}/lists"
		rows = append(rows,
			row("GET", owner.base, token, api, parsed, func(c *endpoint.Call) error { return h.list(c, o(c)) }),
			row("POST", owner.base, token, api, parsed, func(c *endpoint.Call) error { return h.create(c, o(c)) }),
			row("GET", one, token, api, parsed, func(c *endpoint.Call) error { return h.get(c, o(c)) }),
			row("PUT", one, token, api, parsed, func(c *endpoint.Call) error { return h.update(c, o(c)) }),
			row("DELETE", one, token, api, parsed, func(c *endpoint.Call) error { return h.delete(c, o(c)) }),
			row("GET", lists, token, api, parsed, func(c *endpoint.Call) error { return h.lists(c, o(c)) }),
			row("POST", lists, token, api, parsed, func(c *endpoint.Call) error { return h.createList(c, o(c)) }),
			row("GET", lists+"/{list_id}", token, api, parsed, func(c *endpoint.Call) error { return h.getList(c, o(c)) }),
			row("PUT", lists+"/{list_id}", token, api, parsed, func(c *endpoint.Call) error { return h.moveList(c, o(c)) }),
			row("DELETE", lists+"/{list_id}", token, api, parsed, func(c *endpoint.Call) error { return h.deleteList(c, o(c)) }),
		)
	}
	return rows
}

// pathInt reads an integer path parameter as Grape's type: Integer does:
// anything else is 400 "<name> is invalid".
func pathInt(c *endpoint.Call, name string) (int64, error) {
	n, err := strconv.ParseInt(c.Path(name), 10, 64)
	if err != nil {
		return 0, model.Param(name + " is invalid")
	}
	return n, nil
}

func (h *Handlers) render(v *boards.View, c *endpoint.Call) entity.Board {
	return h.r.Board(v, c.Actor)
}

func (h *Handlers) list(c *endpoint.Call, o model.OwnerRef) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.boards.List(c.Ctx(), c.Actor, o, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Board, len(list))
	for i := range list {
		out[i] = h.render(&list[i], c)
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) get(c *endpoint.Call, o model.OwnerRef) error {
	id, err := pathInt(c, "board_id")
	if err != nil {
		return err
	}
	v, err := h.boards.Get(c.Ctx(), c.Actor, o, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.render(&v, c))
}

// input reads a board's attributes.
func input(p *endpoint.Params) boards.Input {
	in := boards.Input{Name: p.StringPtr("name"), HideBacklogList: p.BoolPtr("hide_backlog_list"), HideClosedList: p.BoolPtr("hide_closed_list")}
	if n := in.Name; n != nil && len(*n) > 4*boards.MaxNameLength {
		p.Fail("name is too long")
	}
	return in
}

func (h *Handlers) create(c *endpoint.Call, o model.OwnerRef) error {
	c.P.Require("name")
	in := input(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.boards.Create(c.Ctx(), c.Actor, o, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.render(&v, c))
}

func (h *Handlers) update(c *endpoint.Call, o model.OwnerRef) error {
	id, err := pathInt(c, "board_id")
	if err != nil {
		return err
	}
	in := input(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.boards.Update(c.Ctx(), c.Actor, o, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.render(&v, c))
}

func (h *Handlers) delete(c *endpoint.Call, o model.OwnerRef) error {
	id, err := pathInt(c, "board_id")
	if err != nil {
		return err
	}
	if err := h.boards.Delete(c.Ctx(), c.Actor, o, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) lists(c *endpoint.Call, o model.OwnerRef) error {
	id, err := pathInt(c, "board_id")
	if err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ls, err := h.boards.Lists(c.Ctx(), c.Actor, o, id)
	if err != nil {
		return err
	}
	pg.Keyset = false // a board has few lists: offset pages only
	if pg.Number < 1 {
		pg.Number = 1
	}
	page, info := model.PageOf(ls, pg)
	out := make([]entity.BoardList, len(page))
	for i := range page {
		out[i] = h.r.BoardList(&page[i])
	}
	return c.List(pg, info, out)
}

// ids reads the board and list ids of a list's path.
func ids(c *endpoint.Call) (board, list int64, err error) {
	if board, err = pathInt(c, "board_id"); err != nil {
		return 0, 0, err
	}
	list, err = pathInt(c, "list_id")
	return board, list, err
}

func (h *Handlers) getList(c *endpoint.Call, o model.OwnerRef) error {
	b, l, err := ids(c)
	if err != nil {
		return err
	}
	v, err := h.boards.GetList(c.Ctx(), c.Actor, o, b, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.BoardList(&v))
}

func (h *Handlers) createList(c *endpoint.Call, o model.OwnerRef) error {
	b, err := pathInt(c, "board_id")
	if err != nil {
		return err
	}
	c.P.Require("label_id")
	label, _ := c.P.Int("label_id")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.boards.CreateList(c.Ctx(), c.Actor, o, b, label)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.BoardList(&v))
}

func (h *Handlers) moveList(c *endpoint.Call, o model.OwnerRef) error {
	b, l, err := ids(c)
	if err != nil {
		return err
	}
	c.P.Require("position")
	pos, _ := c.P.Int("position")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.boards.MoveList(c.Ctx(), c.Actor, o, b, l, pos)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.BoardList(&v))
}

func (h *Handlers) deleteList(c *endpoint.Call, o model.OwnerRef) error {
	b, l, err := ids(c)
	if err != nil {
		return err
	}
	if err := h.boards.DeleteList(c.Ctx(), c.Actor, o, b, l); err != nil {
		return err
	}
	return c.NoContent()
}
