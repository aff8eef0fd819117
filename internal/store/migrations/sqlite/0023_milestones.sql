-- +goose Up
-- Milestones of projects and of groups: exactly one of project_id and
-- group_id is set. iid counts per project (internal_ids, usage
-- 'milestones') or per group (namespace_internal_ids). due_date and
-- start_date are YYYY-MM-DD text (NULL when unset), so they sort and
-- compare as dates on both engines. A group's milestones are listed by
-- group_id (export, import) and go with the group or project.
CREATE TABLE namespace_internal_ids (
    namespace_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    usage TEXT NOT NULL,
    last_value BIGINT NOT NULL,
    PRIMARY KEY (namespace_id, usage)
);

CREATE TABLE milestones (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    iid BIGINT NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    state TEXT NOT NULL,
    due_date TEXT,
    start_date TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1,
    CHECK ((project_id IS NULL) <> (group_id IS NULL))
);
CREATE UNIQUE INDEX milestones_project_iid ON milestones (project_id, iid);
CREATE UNIQUE INDEX milestones_group_iid ON milestones (group_id, iid);
-- One title per project and per group; titles shared across a group's
-- hierarchy are refused by the service (GitLab's rule), these indexes
-- settle races within one project or group.
CREATE UNIQUE INDEX milestones_project_title ON milestones (project_id, title);
CREATE UNIQUE INDEX milestones_group_title ON milestones (group_id, title);
