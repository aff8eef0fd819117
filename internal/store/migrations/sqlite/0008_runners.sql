-- +goose Up
-- Instance-wide settings: one row (id 1) holding a JSON document; created
-- on first read with its defaults and a fresh runner registration token.
CREATE TABLE application_settings (
    id INTEGER PRIMARY KEY,
    settings TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);

-- CI runners: instance, group (group_id) or project (ci_runner_projects)
-- runners. Only the digest of the authentication token is kept.
CREATE TABLE ci_runners (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    runner_type TEXT NOT NULL,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    token_digest TEXT NOT NULL,
    token_expires_at BIGINT,
    registration_type TEXT NOT NULL,
    creator_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    description TEXT NOT NULL DEFAULT '',
    maintenance_note TEXT NOT NULL DEFAULT '',
    paused BOOLEAN NOT NULL DEFAULT FALSE,
    locked BOOLEAN NOT NULL DEFAULT FALSE,
    run_untagged BOOLEAN NOT NULL DEFAULT TRUE,
    tag_list TEXT NOT NULL DEFAULT '[]',
    access_level TEXT NOT NULL DEFAULT 'not_protected',
    maximum_timeout INTEGER,
    contacted_at BIGINT,
    name TEXT NOT NULL DEFAULT '',
    runner_version TEXT NOT NULL DEFAULT '',
    revision TEXT NOT NULL DEFAULT '',
    platform TEXT NOT NULL DEFAULT '',
    architecture TEXT NOT NULL DEFAULT '',
    executor TEXT NOT NULL DEFAULT '',
    ip_address TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ci_runners_token_key ON ci_runners (token_digest);
CREATE INDEX ci_runners_type ON ci_runners (runner_type, id);
CREATE INDEX ci_runners_group ON ci_runners (group_id, id);

-- The projects a project runner serves; the first one is its owner.
CREATE TABLE ci_runner_projects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    runner_id BIGINT NOT NULL REFERENCES ci_runners (id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_runner_projects_key ON ci_runner_projects (runner_id, project_id);
CREATE INDEX ci_runner_projects_project ON ci_runner_projects (project_id, runner_id);

-- One machine using a runner's token (gitlab-runner's system_id).
CREATE TABLE ci_runner_managers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    runner_id BIGINT NOT NULL REFERENCES ci_runners (id) ON DELETE CASCADE,
    system_id TEXT NOT NULL,
    contacted_at BIGINT,
    runner_version TEXT NOT NULL DEFAULT '',
    revision TEXT NOT NULL DEFAULT '',
    platform TEXT NOT NULL DEFAULT '',
    architecture TEXT NOT NULL DEFAULT '',
    executor TEXT NOT NULL DEFAULT '',
    ip_address TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_runner_managers_key ON ci_runner_managers (runner_id, system_id);

-- The queue: pending builds by age, and a runner's running jobs.
CREATE INDEX ci_jobs_runner ON ci_jobs (runner_id, status);
CREATE INDEX ci_artifacts_expire ON ci_artifacts (expire_at);

