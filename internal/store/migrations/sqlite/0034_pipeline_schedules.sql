-- +goose Up
-- Pipeline schedules of projects (GitLab's Ci::PipelineSchedule): a cron
-- line in a time zone, the ref it runs for and its owner. next_run_at is
-- the time the scheduler claims it at, by compare-and-set on this column,
-- so one due run is taken once whatever the number of processes. A removed
-- owner leaves the schedule without one (it then does not run).
CREATE TABLE ci_pipeline_schedules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    owner_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    description TEXT NOT NULL,
    ref TEXT NOT NULL,
    cron TEXT NOT NULL,
    cron_timezone TEXT NOT NULL,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    next_run_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX ci_pipeline_schedules_project ON ci_pipeline_schedules (project_id, id);
CREATE INDEX ci_pipeline_schedules_due ON ci_pipeline_schedules (active, next_run_at);

-- A schedule's variables; value is sealed with the secrets keyring
-- (context ci_pipeline_schedule_variables.value).
CREATE TABLE ci_pipeline_schedule_variables (
    schedule_id BIGINT NOT NULL REFERENCES ci_pipeline_schedules (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    variable_type TEXT NOT NULL DEFAULT 'env_var',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (schedule_id, key)
);

-- Which pipelines a schedule made (GitLab's ci_pipelines.pipeline_schedule_id,
-- kept beside the pipelines' table). Both sides cascade: a removed schedule
-- leaves its pipelines.
CREATE TABLE ci_pipeline_schedule_pipelines (
    pipeline_id BIGINT PRIMARY KEY REFERENCES ci_pipelines (id) ON DELETE CASCADE,
    schedule_id BIGINT NOT NULL REFERENCES ci_pipeline_schedules (id) ON DELETE CASCADE
);
CREATE INDEX ci_pipeline_schedule_pipelines_schedule ON ci_pipeline_schedule_pipelines (schedule_id, pipeline_id);
