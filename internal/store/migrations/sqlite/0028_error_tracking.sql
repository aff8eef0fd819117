-- +goose Up
-- Integrated error tracking (GitLab's ErrorTracking::ProjectErrorTrackingSetting,
-- ClientKey, Error and ErrorEvent). A project has at most one settings row;
-- the collector finds a client key by its public key (unique, one index
-- probe) joined with its project's settings. Errors are grouped by
-- (project, name, actor, platform) — the unique index the collector's
-- upsert-and-increment relies on —; each event keeps its payload whole,
-- compressed with DEFLATE (a Sentry event is repetitive JSON: a few
-- events share a page, and each commit writes fewer pages).
CREATE TABLE error_tracking_settings (
    project_id BIGINT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    enabled BOOLEAN NOT NULL DEFAULT FALSE,
    integrated BOOLEAN NOT NULL DEFAULT FALSE,
    api_url TEXT,
    project_name TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE error_tracking_client_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    public_key TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX error_tracking_client_keys_public_key ON error_tracking_client_keys (public_key);
CREATE INDEX error_tracking_client_keys_project ON error_tracking_client_keys (project_id, id);
CREATE TABLE error_tracking_errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    actor TEXT NOT NULL,
    platform TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'unresolved',
    events_count BIGINT NOT NULL DEFAULT 0,
    first_seen_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX error_tracking_errors_group ON error_tracking_errors (project_id, name, actor, platform);
CREATE INDEX error_tracking_errors_last_seen ON error_tracking_errors (project_id, last_seen_at, id);
CREATE INDEX error_tracking_errors_first_seen ON error_tracking_errors (project_id, first_seen_at, id);
CREATE INDEX error_tracking_errors_frequency ON error_tracking_errors (project_id, events_count, id);
CREATE TABLE error_tracking_error_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    error_id BIGINT NOT NULL REFERENCES error_tracking_errors (id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    environment TEXT,
    level TEXT,
    occurred_at BIGINT NOT NULL,
    payload BLOB NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX error_tracking_error_events_error ON error_tracking_error_events (error_id, id);
