-- +goose Up
-- Releases of projects: one per tag (the tag may be removed later; the
-- release stays, with the commit it was made at). Asset links are unique
-- by name, by URL and by direct asset path within their release;
-- milestones are linked by id. Everything goes with its project.
CREATE TABLE releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    sha TEXT NOT NULL,
    author_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    released_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX releases_project_tag_key ON releases (project_id, tag);
CREATE INDEX releases_project_released ON releases (project_id, released_at, id);
CREATE INDEX releases_project_created ON releases (project_id, created_at, id);

CREATE TABLE release_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    release_id BIGINT NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    filepath TEXT,
    link_type TEXT NOT NULL DEFAULT 'other',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX release_links_name_key ON release_links (release_id, name);
CREATE UNIQUE INDEX release_links_url_key ON release_links (release_id, url);
CREATE UNIQUE INDEX release_links_filepath_key ON release_links (release_id, filepath) WHERE filepath IS NOT NULL;

CREATE TABLE release_milestones (
    release_id BIGINT NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    milestone_id BIGINT NOT NULL REFERENCES milestones (id) ON DELETE CASCADE,
    PRIMARY KEY (release_id, milestone_id)
);
CREATE INDEX release_milestones_milestone ON release_milestones (milestone_id);
