-- +goose Up
-- Group exports and imports in GitLab's archive format. A group has at
-- most one export: a new one replaces it (generation counts them, so a
-- task of an older one finds itself stale). state is one of scheduled,
-- started, finished, failed (model.TransferState); the archive lives at
-- file_path (relative to the data directory) until expires_at.
CREATE TABLE group_exports (
    group_id BIGINT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    generation BIGINT NOT NULL,
    state TEXT NOT NULL,
    file_name TEXT,
    file_path TEXT,
    size BIGINT,
    error_message TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT
);

-- An import of an archive into a new group (group_id, created at
-- once): the unpacked archive waits in dir (relative to the data
-- directory) until the import ends; progress is a JSON document (the
-- archive's group ids already imported, mapped to the new ones, and
-- counts), written in the transaction that imports each group, so an
-- import interrupted by a crash resumes where it stopped.
CREATE TABLE group_imports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id BIGINT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    dir TEXT NOT NULL,
    error_message TEXT,
    progress TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX group_imports_user ON group_imports (user_id, state);

