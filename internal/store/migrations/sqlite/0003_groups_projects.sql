-- +goose Up
ALTER TABLE namespaces ADD COLUMN full_path TEXT NOT NULL DEFAULT '';
ALTER TABLE namespaces ADD COLUMN full_name TEXT NOT NULL DEFAULT '';
ALTER TABLE namespaces ADD COLUMN traversal TEXT NOT NULL DEFAULT '';
ALTER TABLE namespaces ADD COLUMN visibility TEXT NOT NULL DEFAULT 'public';
ALTER TABLE namespaces ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE namespaces ADD COLUMN avatar TEXT;
ALTER TABLE namespaces ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE namespaces ADD COLUMN runners_token TEXT;
ALTER TABLE namespaces ADD COLUMN marked_for_deletion_on TEXT;
ALTER TABLE namespaces ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
UPDATE namespaces SET full_path = path, full_name = name, traversal = CAST(id AS TEXT) || '/';
CREATE UNIQUE INDEX namespaces_full_path_key ON namespaces (lower(full_path));
CREATE INDEX namespaces_traversal ON namespaces (traversal);
CREATE INDEX namespaces_parent_name ON namespaces (parent_id, name, id);
CREATE INDEX namespaces_kind_name ON namespaces (kind, name, id);

CREATE TABLE projects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace_id BIGINT NOT NULL REFERENCES namespaces (id),
    creator_id BIGINT,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL,
    default_branch TEXT,
    archived BOOLEAN NOT NULL DEFAULT FALSE,
    repository_storage TEXT NOT NULL,
    disk_path TEXT NOT NULL DEFAULT '',
    empty_repo BOOLEAN NOT NULL DEFAULT TRUE,
    has_readme BOOLEAN NOT NULL DEFAULT FALSE,
    import_status TEXT NOT NULL DEFAULT 'none',
    import_error TEXT,
    forked_from_id BIGINT REFERENCES projects (id) ON DELETE SET NULL,
    star_count INTEGER NOT NULL DEFAULT 0,
    forks_count INTEGER NOT NULL DEFAULT 0,
    avatar TEXT,
    issues_access_level TEXT NOT NULL DEFAULT 'enabled',
    merge_requests_access_level TEXT NOT NULL DEFAULT 'enabled',
    settings TEXT NOT NULL DEFAULT '{}',
    repository_size BIGINT NOT NULL DEFAULT 0,
    commit_count BIGINT NOT NULL DEFAULT 0,
    marked_for_deletion_on TEXT,
    pending_delete BOOLEAN NOT NULL DEFAULT FALSE,
    last_activity_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX projects_namespace_path_key ON projects (namespace_id, lower(path));
CREATE UNIQUE INDEX projects_namespace_name_key ON projects (namespace_id, lower(name));
-- Every project list filters on pending_delete = FALSE, so each ordering
-- index leads with it: one range scan serves the order, the keyset
-- condition and the count.
CREATE INDEX projects_created_at_id ON projects (pending_delete, created_at, id);
CREATE INDEX projects_updated_at_id ON projects (pending_delete, updated_at, id);
CREATE INDEX projects_last_activity_at_id ON projects (pending_delete, last_activity_at, id);
CREATE INDEX projects_name_id ON projects (pending_delete, name, id);
CREATE INDEX projects_path_id ON projects (pending_delete, path, id);
CREATE INDEX projects_live_id ON projects (pending_delete, id, namespace_id, visibility);
CREATE INDEX projects_namespace ON projects (namespace_id);
CREATE INDEX projects_forked_from ON projects (forked_from_id);
CREATE INDEX projects_creator ON projects (creator_id);

CREATE TABLE project_languages (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    share REAL NOT NULL,
    PRIMARY KEY (project_id, name)
);

CREATE TABLE topics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    avatar TEXT,
    total_projects_count INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX topics_name_key ON topics (lower(name));
CREATE INDEX topics_count ON topics (total_projects_count, id);

CREATE TABLE project_topics (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    topic_id BIGINT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, topic_id)
);
CREATE INDEX project_topics_topic ON project_topics (topic_id, project_id);

CREATE TABLE stars (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX stars_project ON stars (project_id, created_at);

CREATE TABLE project_group_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    group_access INTEGER NOT NULL,
    expires_at TEXT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX project_group_links_key ON project_group_links (project_id, group_id);
CREATE INDEX project_group_links_group ON project_group_links (group_id);

-- Who may reach which project and group, and how far: one row per path of
-- access (direct membership, an ancestor group's membership, a share, a
-- personal namespace), recomputed whenever a membership, share or
-- hierarchy changes. Readers take the highest unexpired level.
CREATE TABLE project_authorizations (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    access_level INTEGER NOT NULL,
    expires_at TEXT
);
CREATE INDEX project_authorizations_user ON project_authorizations (user_id, project_id);
CREATE INDEX project_authorizations_project ON project_authorizations (project_id);

CREATE TABLE namespace_authorizations (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    namespace_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    access_level INTEGER NOT NULL,
    expires_at TEXT
);
CREATE INDEX namespace_authorizations_user ON namespace_authorizations (user_id, namespace_id);
CREATE INDEX namespace_authorizations_namespace ON namespace_authorizations (namespace_id);

CREATE TABLE custom_attributes (
    source_type TEXT NOT NULL,
    source_id BIGINT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (source_type, source_id, key)
);
CREATE INDEX custom_attributes_key_value ON custom_attributes (source_type, key, value);
INSERT INTO custom_attributes (source_type, source_id, key, value) SELECT 'User', user_id, key, value FROM user_custom_attributes;
DROP TABLE user_custom_attributes;
