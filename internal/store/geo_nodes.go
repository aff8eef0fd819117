package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"quarry/internal/model"
)

// sealGeoSecret is the sealed column of a geo node's secret access key.
const sealGeoSecret = "geo_nodes.secret_access_key"

// The unique indexes of geo nodes: names and URLs regardless of case, the
// access key, and the one primary.
const (
	UniqueGeoNodeName    = "geo_nodes_name_key"
	UniqueGeoNodeURL     = "geo_nodes_url_key"
	UniqueGeoAccessKey   = "geo_nodes_access_key_key"
	UniqueGeoNodePrimary = "geo_nodes_primary_key"
)

const geoNodeColumns = `g.id, g.name, g.url, g.internal_url, g.is_primary, g.enabled, g.files_max_capacity, g.repos_max_capacity,
	g.verification_max_capacity, g.container_repositories_max_capacity, g.sync_object_storage, g.selective_sync_type,
	g.selective_sync_shards, g.minimum_reverification_interval, g.clone_protocol, g.access_key, g.created_at, g.updated_at, g.version`

func geoNodeDest(n *model.GeoNode) []any {
	return []any{&n.ID, &n.Name, &n.URL, nullString{&n.InternalURL}, &n.Primary, &n.Enabled, &n.FilesMaxCapacity, &n.ReposMaxCapacity,
		&n.VerificationMaxCapacity, &n.ContainerRepositoriesMaxCapacity, &n.SyncObjectStorage, nullString{&n.SelectiveSyncType},
		jsonText{&n.SelectiveSyncShards}, &n.MinimumReverificationInterval, &n.CloneProtocol, &n.AccessKey,
		tsScan{&n.CreatedAt}, tsScan{&n.UpdatedAt}, &n.Version}
}

// CreateGeoNode inserts n with the secret of its credentials (sealed) and
// its selective sync groups, and sets n's id, times and version.
func (tx *Tx) CreateGeoNode(ctx context.Context, n *model.GeoNode, secret string) error {
	sealed, err := tx.sealValue(secret, sealGeoSecret)
	if err != nil {
		return err
	}
	now := tx.Now()
	n.CreatedAt, n.UpdatedAt, n.Version = now, now, 1
	n.ID, err = tx.insert(ctx, `INSERT INTO geo_nodes (name, url, internal_url, is_primary, enabled, files_max_capacity, repos_max_capacity,
		verification_max_capacity, container_repositories_max_capacity, sync_object_storage, selective_sync_type, selective_sync_shards,
		minimum_reverification_interval, clone_protocol, access_key, secret_access_key, created_at, updated_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
		n.Name, n.URL, emptyNull(n.InternalURL), n.Primary, n.Enabled, n.FilesMaxCapacity, n.ReposMaxCapacity,
		n.VerificationMaxCapacity, n.ContainerRepositoriesMaxCapacity, n.SyncObjectStorage, emptyNull(n.SelectiveSyncType),
		jsonValue(n.SelectiveSyncShards), n.MinimumReverificationInterval, n.CloneProtocol, n.AccessKey, sealed,
		micros(now), micros(now))
	if err != nil {
		return err
	}
	return tx.setGeoNodeNamespaces(ctx, n.ID, n.SelectiveSyncNamespaceIDs)
}

// UpdateGeoNode writes n's settings (not its role or credentials) if it
// still has the version read; false when another writer changed it first.
func (tx *Tx) UpdateGeoNode(ctx context.Context, n *model.GeoNode) (bool, error) {
	now := tx.Now()
	k, err := tx.execN(ctx, `UPDATE geo_nodes SET name = ?, url = ?, internal_url = ?, enabled = ?, files_max_capacity = ?,
		repos_max_capacity = ?, verification_max_capacity = ?, container_repositories_max_capacity = ?, sync_object_storage = ?,
		selective_sync_type = ?, selective_sync_shards = ?, minimum_reverification_interval = ?, updated_at = ?,
		version = version + 1 WHERE id = ? AND version = ?`,
		n.Name, n.URL, emptyNull(n.InternalURL), n.Enabled, n.FilesMaxCapacity, n.ReposMaxCapacity, n.VerificationMaxCapacity,
		n.ContainerRepositoriesMaxCapacity, n.SyncObjectStorage, emptyNull(n.SelectiveSyncType), jsonValue(n.SelectiveSyncShards),
		n.MinimumReverificationInterval, micros(now), n.ID, n.Version)
	if err != nil || k == 0 {
		return false, err
	}
	n.UpdatedAt = now
	n.Version++
	return true, tx.setGeoNodeNamespaces(ctx, n.ID, n.SelectiveSyncNamespaceIDs)
}

// setGeoNodeNamespaces replaces a node's selective sync groups.
func (tx *Tx) setGeoNodeNamespaces(ctx context.Context, nodeID int64, ids []int64) error {
	if _, err := tx.exec(ctx, "DELETE FROM geo_node_namespace_links WHERE geo_node_id = ?", nodeID); err != nil {
		return err
	}
	for i, id := range ids {
		if _, err := tx.exec(ctx, "INSERT INTO geo_node_namespace_links (geo_node_id, namespace_id, position) VALUES (?, ?, ?)",
			nodeID, id, i); err != nil {
			return err
		}
	}
	return nil
}

// SetGeoNodeCredentials replaces a node's access key and secret if the
// node still has the version read; false when another writer changed it
// first.
func (tx *Tx) SetGeoNodeCredentials(ctx context.Context, n *model.GeoNode, accessKey, secret string) (bool, error) {
	sealed, err := tx.sealValue(secret, sealGeoSecret)
	if err != nil {
		return false, err
	}
	now := tx.Now()
	k, err := tx.execN(ctx, `UPDATE geo_nodes SET access_key = ?, secret_access_key = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ?`, accessKey, sealed, micros(now), n.ID, n.Version)
	if err != nil || k == 0 {
		return false, err
	}
	n.AccessKey, n.UpdatedAt = accessKey, now
	n.Version++
	return true, nil
}

// DeleteGeoNode removes a node, its status and its links.
func (tx *Tx) DeleteGeoNode(ctx context.Context, id int64) error {
	k, err := tx.execN(ctx, "DELETE FROM geo_nodes WHERE id = ?", id)
	if err == nil && k == 0 {
		err = model.ErrNotFound
	}
	return err
}

// GeoNodeByID returns one node with its selective sync groups.
func (tx *Tx) GeoNodeByID(ctx context.Context, id int64) (model.GeoNode, error) {
	return tx.geoNodeWhere(ctx, "g.id = ?", id)
}

// GeoNodeByName finds a node by name, ignoring case.
func (tx *Tx) GeoNodeByName(ctx context.Context, name string) (model.GeoNode, error) {
	return tx.geoNodeWhere(ctx, "lower(g.name) = ?", strings.ToLower(name))
}

// GeoNodeByURL finds a node by its URL, ignoring case.
func (tx *Tx) GeoNodeByURL(ctx context.Context, url string) (model.GeoNode, error) {
	return tx.geoNodeWhere(ctx, "lower(g.url) = ?", strings.ToLower(url))
}

// PrimaryGeoNode returns the primary node.
func (tx *Tx) PrimaryGeoNode(ctx context.Context) (model.GeoNode, error) {
	return tx.geoNodeWhere(ctx, "g.is_primary = TRUE")
}

func (tx *Tx) geoNodeWhere(ctx context.Context, cond string, args ...any) (model.GeoNode, error) {
	var n model.GeoNode
	if err := tx.row(ctx, geoNodeDest(&n), "SELECT "+geoNodeColumns+" FROM geo_nodes g WHERE "+cond, args...); err != nil {
		return n, err
	}
	links, err := tx.geoNodeNamespaces(ctx, []int64{n.ID})
	n.SelectiveSyncNamespaceIDs = links[n.ID]
	return n, err
}

// geoNodeNamespaces loads the selective sync groups of nodes, in order.
func (tx *Tx) geoNodeNamespaces(ctx context.Context, ids []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT geo_node_id, namespace_id FROM geo_node_namespace_links WHERE geo_node_id IN ("+placeholders(len(ids))+
		") ORDER BY geo_node_id, position", int64Args(ids), func(r *sql.Rows) error {
		var node, ns int64
		err := r.Scan(&node, &ns)
		out[node] = append(out[node], ns)
		return err
	})
	return out, err
}

// ListGeoNodes returns a page of nodes by id.
func (tx *Tx) ListGeoNodes(ctx context.Context, page model.Page) ([]model.GeoNode, model.PageInfo, error) {
	spec := listSpec[model.GeoNode]{columns: geoNodeColumns, from: "geo_nodes g", idCol: "g.id",
		scan: func(r *sql.Rows) (model.GeoNode, error) {
			var n model.GeoNode
			err := r.Scan(geoNodeDest(&n)...)
			return n, err
		},
		keyOf: func(n model.GeoNode) (any, int64) { return n.ID, n.ID }}
	nodes, info, err := list(ctx, tx, spec, page)
	if err != nil {
		return nil, info, err
	}
	return nodes, info, tx.fillGeoNamespaces(ctx, nodes)
}

func (tx *Tx) fillGeoNamespaces(ctx context.Context, nodes []model.GeoNode) error {
	ids := make([]int64, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	links, err := tx.geoNodeNamespaces(ctx, ids)
	for i := range nodes {
		nodes[i].SelectiveSyncNamespaceIDs = links[nodes[i].ID]
	}
	return err
}

// GeoNodeCredentials returns the access key and secret of a node.
func (tx *Tx) GeoNodeCredentials(ctx context.Context, id int64) (accessKey, secret string, err error) {
	err = tx.row(ctx, []any{&accessKey, sealedText{tx, &secret, sealGeoSecret}},
		"SELECT access_key, secret_access_key FROM geo_nodes WHERE id = ?", id)
	return accessKey, secret, err
}

// GeoNodeByAccessKey finds the node whose credentials accessKey names,
// with its secret.
func (tx *Tx) GeoNodeByAccessKey(ctx context.Context, accessKey string) (model.GeoNode, string, error) {
	n, err := tx.geoNodeWhere(ctx, "g.access_key = ?", accessKey)
	if err != nil {
		return n, "", err
	}
	_, secret, err := tx.GeoNodeCredentials(ctx, n.ID)
	return n, secret, err
}

// GeoNodeStatusDoc is a stored status: the document a node pushed, when
// it computed it and when it arrived.
type GeoNodeStatusDoc struct {
	NodeID    int64
	Doc       string
	CheckedAt time.Time
	UpdatedAt time.Time
}

// SaveGeoNodeStatus stores the status a node pushed unless the stored one
// was computed later (pushes may arrive out of order); false when it was
// dropped.
func (tx *Tx) SaveGeoNodeStatus(ctx context.Context, nodeID int64, doc string, checkedAt time.Time) (bool, error) {
	now := micros(tx.Now())
	k, err := tx.execN(ctx, `INSERT INTO geo_node_statuses (geo_node_id, status, checked_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (geo_node_id) DO UPDATE SET status = excluded.status, checked_at = excluded.checked_at, updated_at = excluded.updated_at
		WHERE geo_node_statuses.checked_at <= excluded.checked_at`, nodeID, doc, micros(checkedAt), now)
	return k == 1, err
}

// GeoNodeStatus returns the status a node pushed last.
func (tx *Tx) GeoNodeStatus(ctx context.Context, nodeID int64) (GeoNodeStatusDoc, error) {
	d := GeoNodeStatusDoc{NodeID: nodeID}
	err := tx.row(ctx, []any{&d.Doc, tsScan{&d.CheckedAt}, tsScan{&d.UpdatedAt}},
		"SELECT status, checked_at, updated_at FROM geo_node_statuses WHERE geo_node_id = ?", nodeID)
	return d, err
}

// ListGeoNodesWithStatus returns a page of the nodes that have a status:
// a stored one, or current (the node this process is, whose status is
// computed on demand; 0 for none).
func (tx *Tx) ListGeoNodesWithStatus(ctx context.Context, current int64, page model.Page) ([]model.GeoNode, model.PageInfo, error) {
	var w where
	w.add("(g.id = ? OR EXISTS (SELECT 1 FROM geo_node_statuses s WHERE s.geo_node_id = g.id))", current)
	spec := listSpec[model.GeoNode]{columns: geoNodeColumns, from: "geo_nodes g", idCol: "g.id", where: w,
		scan: func(r *sql.Rows) (model.GeoNode, error) {
			var n model.GeoNode
			err := r.Scan(geoNodeDest(&n)...)
			return n, err
		},
		keyOf: func(n model.GeoNode) (any, int64) { return n.ID, n.ID }}
	nodes, info, err := list(ctx, tx, spec, page)
	if err != nil {
		return nil, info, err
	}
	return nodes, info, tx.fillGeoNamespaces(ctx, nodes)
}

// GroupIDsAmong returns which of ids name groups.
func (tx *Tx) GroupIDsAmong(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT id FROM namespaces WHERE kind = 'group' AND id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out[id] = true
			return err
		})
	return out, err
}

// GeoProject is what a node's status needs of a project: where its
// repositories live, and whether its wiki was ever written (a recorded
// size).
type GeoProject struct {
	ID                int64
	Storage, DiskPath string
	HasWiki           bool
}

// GeoProjects returns up to limit live projects after id afterID, by id.
func (tx *Tx) GeoProjects(ctx context.Context, afterID int64, limit int) ([]GeoProject, error) {
	var out []GeoProject
	err := tx.each(ctx, `SELECT id, repository_storage, disk_path, wiki_size > 0 FROM projects
		WHERE pending_delete = FALSE AND id > ? ORDER BY id LIMIT ?`, []any{afterID, limit}, func(r *sql.Rows) error {
		var p GeoProject
		err := r.Scan(&p.ID, &p.Storage, &p.DiskPath, &p.HasWiki)
		out = append(out, p)
		return err
	})
	return out, err
}

// GeoGroupWiki is a group as a node's status sees it: its id, its wiki's
// storage and whether its wiki was ever written.
type GeoGroupWiki struct {
	ID      int64
	Storage string
	HasWiki bool
}

// GeoGroups returns up to limit groups after id afterID, by id.
func (tx *Tx) GeoGroups(ctx context.Context, afterID int64, limit int) ([]GeoGroupWiki, error) {
	var out []GeoGroupWiki
	err := tx.each(ctx, "SELECT id, repository_storage, wiki_size > 0 FROM namespaces WHERE kind = 'group' AND id > ? ORDER BY id LIMIT ?",
		[]any{afterID, limit}, func(r *sql.Rows) error {
			var g GeoGroupWiki
			err := r.Scan(&g.ID, &g.Storage, &g.HasWiki)
			out = append(out, g)
			return err
		})
	return out, err
}

// GeoArtifact is a stored job artifact as a node's status sees it.
type GeoArtifact struct {
	ID   int64
	Path string
}

// GeoArtifacts returns up to limit job artifacts after id afterID, by id.
func (tx *Tx) GeoArtifacts(ctx context.Context, afterID int64, limit int) ([]GeoArtifact, error) {
	var out []GeoArtifact
	err := tx.each(ctx, "SELECT id, path FROM ci_artifacts WHERE id > ? ORDER BY id LIMIT ?", []any{afterID, limit},
		func(r *sql.Rows) error {
			var a GeoArtifact
			err := r.Scan(&a.ID, &a.Path)
			out = append(out, a)
			return err
		})
	return out, err
}

// CountLiveProjects counts the projects not being deleted.
func (tx *Tx) CountLiveProjects(ctx context.Context) (int64, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM projects WHERE pending_delete = FALSE")
	return n, err
}

// CountJobArtifacts counts the stored job artifacts.
func (tx *Tx) CountJobArtifacts(ctx context.Context) (int64, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_artifacts")
	return n, err
}

// ReplicationSlots reports PostgreSQL's replication slots: how many there
// are, how many are active, and the most WAL one retains (bytes). ok is
// false on SQLite, which has none.
func (tx *Tx) ReplicationSlots(ctx context.Context) (count, used, maxRetained int64, ok bool, err error) {
	if tx.dialect != Postgres {
		return 0, 0, 0, false, nil
	}
	err = tx.row(ctx, []any{&count, &used, &maxRetained}, `SELECT COUNT(*), COUNT(*) FILTER (WHERE active),
		COALESCE(MAX(CASE WHEN pg_is_in_recovery() OR restart_lsn IS NULL THEN 0
			ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) END), 0)::BIGINT FROM pg_replication_slots`)
	return count, used, maxRetained, err == nil, err
}

// ReplicationLag is how far behind its primary a PostgreSQL standby
// replays, in seconds; ok is false on SQLite and on a database that is no
// standby.
func (tx *Tx) ReplicationLag(ctx context.Context) (seconds int64, ok bool, err error) {
	if tx.dialect != Postgres {
		return 0, false, nil
	}
	var lag sql.NullInt64
	err = tx.row(ctx, []any{&lag}, `SELECT CASE WHEN pg_is_in_recovery()
		THEN COALESCE(EXTRACT(EPOCH FROM (now() - pg_last_xact_replay_timestamp())), 0)::BIGINT END`)
	return lag.Int64, lag.Valid, err
}
