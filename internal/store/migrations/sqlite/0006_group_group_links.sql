-- +goose Up
-- A group shared with another group: the direct members of the invited
-- group (shared_with_group_id) reach the shared group (shared_group_id),
-- its subgroups and their projects, at the lower of their own level and
-- group_access, until expires_at.
CREATE TABLE group_group_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    shared_group_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    shared_with_group_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    group_access INTEGER NOT NULL,
    expires_at TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX group_group_links_key ON group_group_links (shared_group_id, shared_with_group_id);
CREATE INDEX group_group_links_shared_with ON group_group_links (shared_with_group_id);
