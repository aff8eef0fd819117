-- +goose Up
-- Alert intake: a project's HTTP endpoint integrations (kind 'http', or
-- the one 'prometheus' integration), whose key is stored as its SHA-256
-- digest, and the alerts they open. status and severity are GitLab's enum
-- numbers (status: 0 triggered, 1 acknowledged, 2 resolved, 3 ignored;
-- severity: 0 critical … 5 unknown), so lists sort as GitLab's do.
-- payload_attribute_mappings is the custom mapping as JSON text.
CREATE TABLE alert_integrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    active BOOLEAN NOT NULL,
    endpoint_identifier TEXT NOT NULL,
    token_digest TEXT NOT NULL,
    payload_attribute_mappings TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX alert_integrations_identifier ON alert_integrations (project_id, endpoint_identifier);
-- One Prometheus integration per project.
CREATE UNIQUE INDEX alert_integrations_prometheus ON alert_integrations (project_id) WHERE kind = 'prometheus';

CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    iid BIGINT NOT NULL,
    integration_id BIGINT REFERENCES alert_integrations (id) ON DELETE SET NULL,
    fingerprint TEXT,
    status INTEGER NOT NULL,
    severity INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    service TEXT,
    monitoring_tool TEXT,
    hosts TEXT NOT NULL,
    environment TEXT,
    runbook TEXT,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    events BIGINT NOT NULL,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX alerts_project_iid ON alerts (project_id, iid);
-- At most one open (not resolved) alert per fingerprint: concurrent
-- intake of one alert meets here, and the loser increments the winner
-- (INSERT … ON CONFLICT on this index).
CREATE UNIQUE INDEX alerts_open_fingerprint ON alerts (project_id, fingerprint) WHERE status <> 2 AND fingerprint IS NOT NULL;

CREATE TABLE alert_assignees (
    alert_id BIGINT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (alert_id, user_id)
);

-- Metric images of an alert: an uploaded file (its stored path under the
-- uploads) with an optional link.
CREATE TABLE alert_metric_images (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id BIGINT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    file_path TEXT NOT NULL,
    url TEXT,
    url_text TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX alert_metric_images_alert ON alert_metric_images (alert_id, id);
