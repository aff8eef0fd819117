// Package storagemoves serves the repository storage moves of projects
// and groups (GitLab's project and group repository storage moves APIs),
// for administrators: the moves of one container, of all containers of a
// kind, and the bulk move of every container on a storage.
package storagemoves

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/storagemoves"
)

// Handlers answer the storage moves area.
type Handlers struct {
	moves *storagemoves.Service
	r     *entity.Renderer
}

// New returns the storage moves area.
func New(m *storagemoves.Service, r *entity.Renderer) *Handlers { return &Handlers{moves: m, r: r} }

// kinds are the container kinds with moves, and the path of their
// containers.
var kinds = []struct {
	kind      model.ContainerKind
	container string
}{
	{model.ContainerProject, "projects"},
	{model.ContainerGroup, "groups"},
	{model.ContainerSnippet, "snippets"},
}

// Routes are the area's rows: per kind, the global list, one move and the
// bulk move, and the moves of one container (list, one, schedule). Every
// row is for administrators (the service refuses others: 403).
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	var rows []endpoint.Route
	// GitLab's authenticated_as_admin! comes before everything else,
	// parameters included.
	admin := func(h endpoint.Handler) endpoint.Handler {
		return func(c *endpoint.Call) error {
			if !c.Actor.Admin() {
				return model.Forbidden("")
			}
			return h(c)
		}
	}
	for _, k := range kinds {
		k := k
		global := "/" + string(k.kind) + "_repository_storage_moves"
		own := "/" + k.container + "/{id}/repository_storage_moves"
		rows = append(rows,
			row("GET", global, token, api, parsed, admin(func(c *endpoint.Call) error { return h.list(c, k.kind, "") })),
			row("POST", global, token, api, parsed, admin(func(c *endpoint.Call) error { return h.bulk(c, k.kind) })),
			row("GET", global+"/{repository_storage_id}", token, api, parsed, admin(func(c *endpoint.Call) error { return h.get(c, k.kind, "") })),
			row("GET", own, token, api, parsed, admin(func(c *endpoint.Call) error { return h.list(c, k.kind, c.Path("id")) })),
			row("POST", own, token, api, parsed, admin(func(c *endpoint.Call) error { return h.schedule(c, k.kind) })),
			row("GET", own+"/{repository_storage_id}", token, api, parsed, admin(func(c *endpoint.Call) error { return h.get(c, k.kind, c.Path("id")) })),
		)
	}
	return rows
}

func (h *Handlers) render(m storagemoves.Move) entity.StorageMove {
	return h.r.StorageMove(m.RepositoryStorageMove, m.Container)
}

func (h *Handlers) list(c *endpoint.Call, kind model.ContainerKind, ref string) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	moves, info, err := h.moves.List(c.Ctx(), c.Actor, kind, ref, pg)
	if err != nil {
		return err
	}
	out := make([]entity.StorageMove, len(moves))
	for i := range moves {
		out[i] = h.render(moves[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call, kind model.ContainerKind, ref string) error {
	id, err := c.PathID("repository_storage_id")
	if err != nil {
		return err
	}
	m, err := h.moves.Get(c.Ctx(), c.Actor, kind, ref, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.render(m))
}

func (h *Handlers) schedule(c *endpoint.Call, kind model.ContainerKind) error {
	dest, _ := c.P.String("destination_storage_name")
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.moves.Schedule(c.Ctx(), c.Actor, kind, c.Path("id"), dest)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.render(m))
}

func (h *Handlers) bulk(c *endpoint.Call, kind model.ContainerKind) error {
	c.P.Require("source_storage_name")
	source, _ := c.P.String("source_storage_name")
	dest, _ := c.P.String("destination_storage_name")
	if err := c.P.Err(); err != nil {
		return err
	}
	if err := h.moves.ScheduleBulk(c.Ctx(), c.Actor, kind, source, dest); err != nil {
		return err
	}
	return c.Accepted()
}
