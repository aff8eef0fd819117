-- +goose Up
-- Protected tags: a name or wildcard per project, with who may create the
-- tags it covers (a role, a user or a group). Protected environments: an
-- environment name per project (the environment need not exist yet), who
-- may deploy to it and who approves deployments. Everything goes with its
-- project.
CREATE TABLE protected_tags (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX protected_tags_project_name_key ON protected_tags (project_id, name);

CREATE TABLE protected_tag_create_access_levels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    protected_tag_id BIGINT NOT NULL REFERENCES protected_tags (id) ON DELETE CASCADE,
    access_level INTEGER,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE
);
CREATE INDEX protected_tag_create_access_levels_tag ON protected_tag_create_access_levels (protected_tag_id);

CREATE TABLE protected_environments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    required_approval_count INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX protected_environments_project_name_key ON protected_environments (project_id, name);

-- kind: 'deploy' (deploy_access_levels) or 'approval' (approval_rules,
-- with required_approvals).
CREATE TABLE protected_environment_access_levels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    protected_environment_id BIGINT NOT NULL REFERENCES protected_environments (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    access_level INTEGER,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    group_inheritance_type INTEGER NOT NULL DEFAULT 0,
    required_approvals INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX protected_environment_access_levels_env ON protected_environment_access_levels (protected_environment_id);
