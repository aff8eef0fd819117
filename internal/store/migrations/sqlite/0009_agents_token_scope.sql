-- +goose Up
-- Agents for Kubernetes, registered in a project: their configuration
-- project (.gitlab/agents/<name>/config.yaml on its default branch).
CREATE TABLE cluster_agents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_by_user_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX cluster_agents_project_name_key ON cluster_agents (project_id, name);
CREATE INDEX cluster_agents_created_by ON cluster_agents (created_by_user_id);

-- A project's inbound CI job token scope ("Limit access to this
-- project"). A project without a row has it enabled, GitLab's default
-- for new projects.
CREATE TABLE ci_job_token_scopes (
    project_id BIGINT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    inbound_enabled BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The inbound allowlist: jobs of target_project_id may use their token
-- on source_project_id.
CREATE TABLE ci_job_token_project_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    target_project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    added_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_job_token_project_links_key ON ci_job_token_project_links (source_project_id, target_project_id);
CREATE INDEX ci_job_token_project_links_target ON ci_job_token_project_links (target_project_id);
CREATE INDEX ci_job_token_project_links_added_by ON ci_job_token_project_links (added_by_id);

-- The groups allowlist: jobs of projects anywhere under target_group_id
-- may use their token on source_project_id.
CREATE TABLE ci_job_token_group_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    target_group_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    added_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_job_token_group_links_key ON ci_job_token_group_links (source_project_id, target_group_id);
CREATE INDEX ci_job_token_group_links_target ON ci_job_token_group_links (target_group_id);
CREATE INDEX ci_job_token_group_links_added_by ON ci_job_token_group_links (added_by_id);
