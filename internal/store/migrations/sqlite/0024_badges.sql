-- +goose Up
-- Badges of projects and groups: exactly one of project_id and group_id
-- is set (GitLab's ProjectBadge and GroupBadge). The URLs are stored as
-- given, placeholders and all; they are rendered per project when read.
-- A project's list joins its own badges with those of its ancestor
-- groups, oldest first; a group export lists a group's by group_id.
CREATE TABLE badges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    name TEXT,
    link_url TEXT NOT NULL,
    image_url TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1,
    CHECK ((project_id IS NULL) <> (group_id IS NULL))
);
CREATE INDEX badges_project ON badges (project_id, id);
CREATE INDEX badges_group ON badges (group_id, id);
