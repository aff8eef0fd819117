package geo

import (
	"io"
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/geo"
)

// nodeInput reads a node's attributes with GitLab's types: strings,
// booleans and integers one value each, the shards a list of strings and
// the groups a list of integers (either may come comma-separated).
func nodeInput(p *endpoint.Params) geo.Input {
	single := func(key string) bool {
		if p.IsList(key) {
			p.Fail("%s is invalid", key)
			return false
		}
		return p.Has(key)
	}
	str := func(key string) *string {
		if !single(key) {
			return nil
		}
		return p.StringPtr(key)
	}
	boolean := func(key string) *bool {
		if !single(key) {
			return nil
		}
		return p.BoolPtr(key)
	}
	integer := func(key string) *int64 {
		if !single(key) {
			return nil
		}
		if n, ok := p.Int(key); ok {
			return &n
		}
		return nil
	}
	in := geo.Input{Name: str("name"), URL: str("url"), InternalURL: str("internal_url"), ClearInternalURL: p.IsNull("internal_url"),
		Primary: boolean("primary"), Enabled: boolean("enabled"), SyncObjectStorage: boolean("sync_object_storage"),
		FilesMaxCapacity: integer("files_max_capacity"), ReposMaxCapacity: integer("repos_max_capacity"),
		VerificationMaxCapacity:          integer("verification_max_capacity"),
		ContainerRepositoriesMaxCapacity: integer("container_repositories_max_capacity"),
		MinimumReverificationInterval:    integer("minimum_reverification_interval"),
		SelectiveSyncType:                str("selective_sync_type"), ClearSelectiveSyncType: p.IsNull("selective_sync_type")}
	if p.Has("selective_sync_shards") {
		in.SelectiveSyncShards, in.SetShards = p.Unique("selective_sync_shards")
	}
	if p.Has("selective_sync_namespace_ids") {
		in.SelectiveSyncNamespaceIDs, in.SetNamespaceIDs = p.IDs("selective_sync_namespace_ids")
	}
	return in
}

func (h *Handlers) node(c *endpoint.Call, status int, n geo.Node) error {
	return c.JSON(status, h.r.GeoNode(&n.GeoNode, n.Current))
}

func (h *Handlers) createNode(c *endpoint.Call) error {
	for _, k := range []string{"name", "url"} {
		if !c.P.IsList(k) { // a list or a hash is there, and invalid
			c.P.Require(k)
		}
	}
	in := nodeInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	n, err := h.geo.Create(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return h.node(c, http.StatusCreated, n)
}

func (h *Handlers) listNodes(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	nodes, info, err := h.geo.List(c.Ctx(), c.Actor, pg)
	if err != nil {
		return err
	}
	out := make([]any, len(nodes))
	for i := range nodes {
		out[i] = h.r.GeoNode(&nodes[i].GeoNode, nodes[i].Current)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getNode(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	n, err := h.geo.Get(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return h.node(c, http.StatusOK, n)
}

func (h *Handlers) updateNode(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	in := nodeInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	n, err := h.geo.Update(c.Ctx(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return h.node(c, http.StatusOK, n)
}

func (h *Handlers) deleteNode(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	if err := h.geo.Delete(c.Ctx(), c.Actor, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) repairNode(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	n, err := h.geo.Repair(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return h.node(c, http.StatusOK, n)
}

func (h *Handlers) getStatus(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	c.P.Flag("refresh") // the current node's status is always computed afresh; others are as pushed
	if err := c.P.Err(); err != nil {
		return err
	}
	st, err := h.geo.StatusOf(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.GeoNodeStatus(&st))
}

func (h *Handlers) listStatuses(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	sts, info, err := h.geo.Statuses(c.Ctx(), c.Actor, pg)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(sts))
	for i := range sts {
		out[i] = h.r.GeoNodeStatus(&sts[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) listFailures(c *endpoint.Call) error {
	kind, _ := c.P.Enum("type", "wiki", "repository")
	failureType := geo.FailureSync
	if v, ok := c.P.String("failure_type"); ok {
		failureType = v
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.geo.Failures(c.Ctx(), c.Actor, kind, failureType, pg)
	if err != nil {
		return err
	}
	out := make([]any, len(list))
	for i, f := range list {
		out[i] = h.r.GeoProjectRegistry(f.ProjectID, f.Repository, f.Wiki)
	}
	return c.List(pg, info, out)
}

// receiveStatus takes a secondary's status push: the node is known by
// its signature before the body is read.
func (h *Handlers) receiveStatus(c *endpoint.Call) error {
	st, err := h.geo.ReceiveStatus(c.Ctx(), c.R.Header.Get("Authorization"), func() ([]byte, error) {
		b, err := io.ReadAll(c.Body())
		if err != nil {
			return nil, endpoint.BodyError(err)
		}
		return b, nil
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.GeoNodeStatus(&st))
}
