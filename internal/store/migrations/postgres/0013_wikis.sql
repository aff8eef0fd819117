-- +goose Up
-- The size of a project's wiki repository and of a group's, kept current
-- by every wiki write and push (statistics read them).
ALTER TABLE projects ADD COLUMN wiki_size BIGINT NOT NULL DEFAULT 0;
ALTER TABLE namespaces ADD COLUMN wiki_size BIGINT NOT NULL DEFAULT 0;
