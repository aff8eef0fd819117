-- +goose Up
-- Environments and deployments (GitLab's CI environments). An environment
-- is unique by name and by slug within its project; a deployment by its
-- iid. A deployment's job (deployable) is NULL for deployments reported
-- through the API, and becomes NULL when its job goes (a removed
-- pipeline); a removed user leaves the deployment. Everything goes with
-- its project. ci_jobs.environment is the job's expanded environment
-- name (NULL: the job deploys nowhere), so that a job move touches the
-- deployment tables only for jobs that have one.
CREATE TABLE environments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    slug TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    external_url TEXT,
    tier TEXT NOT NULL,
    state TEXT NOT NULL,
    auto_stop_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX environments_project_name_key ON environments (project_id, name);
CREATE UNIQUE INDEX environments_project_slug_key ON environments (project_id, slug);

CREATE TABLE deployments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    iid BIGINT NOT NULL,
    ref TEXT NOT NULL,
    tag BOOLEAN NOT NULL DEFAULT FALSE,
    sha TEXT NOT NULL,
    user_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    job_id BIGINT REFERENCES ci_jobs (id) ON DELETE SET NULL,
    status TEXT NOT NULL,
    on_stop TEXT NOT NULL DEFAULT '',
    auto_stop_in TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE UNIQUE INDEX deployments_project_iid_key ON deployments (project_id, iid);
CREATE INDEX deployments_environment ON deployments (environment_id, id);
CREATE INDEX deployments_job ON deployments (job_id);
CREATE INDEX deployments_project_updated ON deployments (project_id, updated_at, id);

-- The merge requests a successful deployment shipped (GitLab's
-- deployment_merge_requests).
CREATE TABLE deployment_merge_requests (
    deployment_id BIGINT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    merge_request_id BIGINT NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    PRIMARY KEY (deployment_id, merge_request_id)
);
CREATE UNIQUE INDEX deployment_merge_requests_env_key ON deployment_merge_requests (environment_id, merge_request_id);
CREATE INDEX deployment_merge_requests_mr ON deployment_merge_requests (merge_request_id);

ALTER TABLE ci_jobs ADD COLUMN environment TEXT;
