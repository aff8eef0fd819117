-- +goose Up
-- Geo nodes (GitLab's replication nodes): the instance's sites, at most one
-- of them the primary. A node authenticates its status pushes with its
-- access key and the secret beside it, sealed (internal/secrets) since the
-- node itself must read it back; no API ever shows it.
CREATE TABLE geo_nodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    internal_url TEXT,
    is_primary BOOLEAN NOT NULL DEFAULT FALSE,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    files_max_capacity INTEGER NOT NULL,
    repos_max_capacity INTEGER NOT NULL,
    verification_max_capacity INTEGER NOT NULL,
    container_repositories_max_capacity INTEGER NOT NULL,
    sync_object_storage BOOLEAN NOT NULL DEFAULT FALSE,
    selective_sync_type TEXT,
    selective_sync_shards TEXT NOT NULL DEFAULT '[]',
    minimum_reverification_interval INTEGER NOT NULL,
    clone_protocol TEXT NOT NULL DEFAULT 'http',
    access_key TEXT NOT NULL,
    secret_access_key TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX geo_nodes_name_key ON geo_nodes (lower(name));
CREATE UNIQUE INDEX geo_nodes_url_key ON geo_nodes (lower(url));
CREATE UNIQUE INDEX geo_nodes_access_key_key ON geo_nodes (access_key);
CREATE UNIQUE INDEX geo_nodes_primary_key ON geo_nodes (is_primary) WHERE is_primary;

-- The groups a node syncs selectively, in the order they were given.
CREATE TABLE geo_node_namespace_links (
    geo_node_id BIGINT NOT NULL REFERENCES geo_nodes (id) ON DELETE CASCADE,
    namespace_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (geo_node_id, namespace_id)
);
CREATE INDEX geo_node_namespace_links_namespace ON geo_node_namespace_links (namespace_id);

-- The last status a node pushed (a JSON document, bounded by the API), and
-- when the node computed it: a push older than the one stored is dropped.
CREATE TABLE geo_node_statuses (
    geo_node_id BIGINT PRIMARY KEY REFERENCES geo_nodes (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    checked_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
