-- +goose Up
-- Labels of projects and groups: exactly one of project_id and group_id
-- is set; a title is unique within its project or group. Project labels'
-- priorities live apart, keyed by project, because a project also gives
-- priorities to its groups' labels. Subscriptions are per user and label.
CREATE TABLE labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    color TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CHECK ((project_id IS NULL) <> (group_id IS NULL))
);
CREATE UNIQUE INDEX labels_project_title_key ON labels (project_id, title) WHERE project_id IS NOT NULL;
CREATE UNIQUE INDEX labels_group_title_key ON labels (group_id, title) WHERE group_id IS NOT NULL;

CREATE TABLE label_priorities (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    label_id BIGINT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    priority INTEGER NOT NULL,
    PRIMARY KEY (project_id, label_id)
);
CREATE INDEX label_priorities_label ON label_priorities (label_id);

CREATE TABLE label_subscriptions (
    label_id BIGINT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (label_id, user_id)
);
CREATE INDEX label_subscriptions_user ON label_subscriptions (user_id);
