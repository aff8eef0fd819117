-- +goose Up
-- Per-project counters (pipeline iids; merge requests will follow):
-- handed out by an upsert, so two writers never get the same value and a
-- value is never reused.
CREATE TABLE internal_ids (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    usage TEXT NOT NULL,
    last_value BIGINT NOT NULL,
    PRIMARY KEY (project_id, usage)
);

CREATE TABLE ci_pipelines (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    iid BIGINT NOT NULL,
    ref TEXT NOT NULL,
    tag BOOLEAN NOT NULL DEFAULT FALSE,
    sha TEXT NOT NULL,
    before_sha TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    failure_reason TEXT,
    yaml_errors TEXT,
    user_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    parent_id BIGINT REFERENCES ci_pipelines (id) ON DELETE SET NULL,
    parent_job_id BIGINT,
    name TEXT,
    -- The refs-changed event a push pipeline came from: a delivery seen
    -- again creates nothing twice.
    event_key TEXT,
    protected BOOLEAN NOT NULL DEFAULT FALSE,
    coverage REAL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    committed_at BIGINT,
    duration BIGINT,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ci_pipelines_iid_key ON ci_pipelines (project_id, iid);
CREATE INDEX ci_pipelines_project ON ci_pipelines (project_id, id);
CREATE INDEX ci_pipelines_project_ref ON ci_pipelines (project_id, ref, id);
CREATE INDEX ci_pipelines_project_status ON ci_pipelines (project_id, status, id);
CREATE INDEX ci_pipelines_project_sha ON ci_pipelines (project_id, sha, id);
CREATE INDEX ci_pipelines_project_updated ON ci_pipelines (project_id, updated_at, id);
CREATE INDEX ci_pipelines_parent ON ci_pipelines (parent_id);
CREATE INDEX ci_pipelines_parent_job ON ci_pipelines (parent_job_id);
CREATE UNIQUE INDEX ci_pipelines_event_key ON ci_pipelines (project_id, event_key) WHERE event_key IS NOT NULL;

CREATE TABLE ci_pipeline_variables (
    pipeline_id BIGINT NOT NULL REFERENCES ci_pipelines (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    variable_type TEXT NOT NULL,
    raw BOOLEAN NOT NULL DEFAULT FALSE,
    position INTEGER NOT NULL,
    PRIMARY KEY (pipeline_id, key)
);

-- At most one job holds a resource group's slot: holder_id changes only
-- by compare-and-set.
CREATE TABLE ci_resource_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    process_mode TEXT NOT NULL,
    holder_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_resource_groups_key ON ci_resource_groups (project_id, key);

-- Builds, bridges and external commit statuses: GitLab's commit statuses.
CREATE TABLE ci_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    pipeline_id BIGINT NOT NULL REFERENCES ci_pipelines (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    stage TEXT NOT NULL,
    stage_idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    run_when TEXT NOT NULL,
    allow_failure BOOLEAN NOT NULL DEFAULT FALSE,
    failure_reason TEXT,
    exit_code INTEGER,
    retried BOOLEAN NOT NULL DEFAULT FALSE,
    enqueue_immediately BOOLEAN NOT NULL DEFAULT FALSE,
    retry_count INTEGER NOT NULL DEFAULT 0,
    user_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    ref TEXT NOT NULL,
    tag BOOLEAN NOT NULL DEFAULT FALSE,
    sha TEXT NOT NULL,
    coverage REAL,
    dag BOOLEAN NOT NULL DEFAULT FALSE,
    needs TEXT NOT NULL DEFAULT '[]',
    tag_list TEXT NOT NULL DEFAULT '[]',
    timeout INTEGER NOT NULL DEFAULT 0,
    resource_group_id BIGINT REFERENCES ci_resource_groups (id) ON DELETE SET NULL,
    options TEXT NOT NULL DEFAULT '{}',
    manual_variables TEXT,
    downstream_id BIGINT,
    runner_id BIGINT,
    target_url TEXT,
    description TEXT,
    token_digest TEXT,
    log_size BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    queued_at BIGINT,
    scheduled_at BIGINT,
    started_at BIGINT,
    finished_at BIGINT,
    erased_at BIGINT,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX ci_jobs_pipeline ON ci_jobs (pipeline_id, id);
-- Processing counts a pipeline's latest jobs by stage and status from this index alone.
CREATE INDEX ci_jobs_pipeline_status ON ci_jobs (pipeline_id, retried, stage_idx, status, allow_failure);
CREATE INDEX ci_jobs_project_kind ON ci_jobs (project_id, kind, id);
CREATE INDEX ci_jobs_project_kind_status ON ci_jobs (project_id, kind, status, id);
CREATE INDEX ci_jobs_queue ON ci_jobs (status, kind, id);
CREATE INDEX ci_jobs_resource_group ON ci_jobs (resource_group_id, status, id);
CREATE UNIQUE INDEX ci_jobs_token_key ON ci_jobs (token_digest);

-- Files a job left (archive, reports, log archive); the bytes lie in the
-- artifacts folder at path.
CREATE TABLE ci_artifacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    job_id BIGINT NOT NULL REFERENCES ci_jobs (id) ON DELETE CASCADE,
    file_type TEXT NOT NULL,
    file_format TEXT NOT NULL,
    file_name TEXT NOT NULL,
    size BIGINT NOT NULL,
    path TEXT NOT NULL,
    expire_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_artifacts_job_type_key ON ci_artifacts (job_id, file_type);
CREATE INDEX ci_artifacts_project ON ci_artifacts (project_id, id);

-- CI/CD variables of a project or a group (exactly one owner column set).
CREATE TABLE ci_variables (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    variable_type TEXT NOT NULL,
    protected BOOLEAN NOT NULL DEFAULT FALSE,
    masked BOOLEAN NOT NULL DEFAULT FALSE,
    hidden BOOLEAN NOT NULL DEFAULT FALSE,
    raw BOOLEAN NOT NULL DEFAULT FALSE,
    environment_scope TEXT NOT NULL,
    description TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_variables_key ON ci_variables (COALESCE(project_id, 0), COALESCE(group_id, 0), key, environment_scope);

-- Pipeline trigger tokens, hashed.
CREATE TABLE ci_triggers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    owner_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    description TEXT NOT NULL DEFAULT '',
    token_digest TEXT NOT NULL,
    token_hint TEXT NOT NULL,
    last_used BIGINT,
    expires_at TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ci_triggers_token_key ON ci_triggers (token_digest);
CREATE INDEX ci_triggers_project ON ci_triggers (project_id, id);
