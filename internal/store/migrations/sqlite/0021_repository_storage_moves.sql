-- +goose Up
-- Repository storage moves: the containers of repositories (projects with
-- their wikis, groups with their wikis, and snippets once they exist) get
-- a storage of their own and a read-only flag a move holds while it
-- copies. Moves of every kind share one table, told apart by
-- container_type ('project', 'group', 'snippet'); state holds GitLab's
-- integers (1 initial … 7 cleanup failed).
ALTER TABLE projects ADD COLUMN repository_read_only BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE namespaces ADD COLUMN repository_storage TEXT NOT NULL DEFAULT 'default';
ALTER TABLE namespaces ADD COLUMN repository_read_only BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX projects_repository_storage ON projects (repository_storage, id);
CREATE INDEX namespaces_repository_storage ON namespaces (repository_storage, id) WHERE kind = 'group';

CREATE TABLE repository_storage_moves (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    container_type TEXT NOT NULL,
    container_id BIGINT NOT NULL,
    state INTEGER NOT NULL,
    source_storage_name TEXT NOT NULL,
    destination_storage_name TEXT NOT NULL,
    error_message TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX repository_storage_moves_kind ON repository_storage_moves (container_type, id);
CREATE INDEX repository_storage_moves_container ON repository_storage_moves (container_type, container_id, id);
CREATE INDEX repository_storage_moves_active ON repository_storage_moves (container_type, state) WHERE state IN (2, 3);

-- Writes in flight (a push, an API commit) to a container's repositories:
-- one row each, taken only while the container is writable and renewed
-- while the write lasts; a move waits for those not expired before it
-- copies. A dead process's rows expire by themselves.
CREATE TABLE repository_write_leases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    container_type TEXT NOT NULL,
    container_id BIGINT NOT NULL,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX repository_write_leases_container ON repository_write_leases (container_type, container_id, expires_at);
