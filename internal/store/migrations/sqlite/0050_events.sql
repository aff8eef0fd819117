-- +goose Up
-- The contributions feed (GitLab's events with their push payloads, in
-- one row): who did what in which project, to which target. A push event
-- carries its push (one ref, or a bulk of refs moved alike). Feeds read
-- a project's or an author's events newest first by id: one range scan
-- of (project_id, id) or (author_id, id).
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    author_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    action TEXT NOT NULL,
    target_type TEXT,
    target_id BIGINT,
    created_at BIGINT NOT NULL,
    push_action TEXT,
    push_ref_type TEXT,
    push_ref TEXT,
    push_commit_from TEXT,
    push_commit_to TEXT,
    push_commit_count BIGINT,
    push_commit_title TEXT,
    push_ref_count BIGINT
);
CREATE INDEX events_project ON events (project_id, id);
CREATE INDEX events_author ON events (author_id, id);
-- A redelivered push finds the events it recorded by their time.
CREATE INDEX events_project_time ON events (project_id, created_at);

-- +goose Down
DROP TABLE events;
