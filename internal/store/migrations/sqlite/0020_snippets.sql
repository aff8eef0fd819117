-- +goose Up
-- Snippets: personal ones (project_id NULL) and projects'. Each has a bare
-- repository of its own at @snippets/<hash>.git on repository_storage;
-- the row keeps what the repository does not (file_name is the first file
-- as of the last write). repository_read_only refuses every write while
-- the repository moves between storages. The user agent detail is what
-- the creating request said of itself (NULL when nothing).
CREATE TABLE snippets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    description TEXT,
    visibility TEXT NOT NULL,
    author_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    file_name TEXT NOT NULL DEFAULT '',
    repository_storage TEXT NOT NULL,
    repository_read_only BOOLEAN NOT NULL DEFAULT FALSE,
    user_agent TEXT,
    ip_address TEXT,
    akismet_submitted BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
-- Lists are newest first: of everyone, of an author, of a project.
CREATE INDEX snippets_created_at_id ON snippets (created_at, id);
CREATE INDEX snippets_author ON snippets (author_id, created_at, id);
CREATE INDEX snippets_project ON snippets (project_id, created_at, id);
CREATE INDEX snippets_storage ON snippets (repository_storage, id);
