-- +goose Up
-- Issues: iids per project (internal_ids usage 'issues'). Labels are
-- names in a JSON array, as merge requests keep them; the milestone is
-- the project's or one of its groups' (unset when it is deleted).
-- Projects keep their open issues' counts (all, and confidential ones)
-- in their row, recounted by every issue write in its transaction, so
-- the project entity (cached per entity_version) shows them true.
CREATE TABLE issues (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    iid BIGINT NOT NULL,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    author_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    closed_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    closed_at BIGINT,
    confidential BOOLEAN NOT NULL DEFAULT FALSE,
    discussion_locked BOOLEAN NOT NULL DEFAULT FALSE,
    due_date TEXT,
    milestone_id BIGINT REFERENCES milestones (id) ON DELETE SET NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX issues_iid_key ON issues (project_id, iid);
CREATE INDEX issues_project_state ON issues (project_id, state, id);
CREATE INDEX issues_project_created ON issues (project_id, created_at, id);
CREATE INDEX issues_project_updated ON issues (project_id, updated_at, id);
CREATE INDEX issues_author ON issues (author_id, id);
CREATE INDEX issues_milestone ON issues (milestone_id, state);

CREATE TABLE issue_assignees (
    issue_id BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (issue_id, user_id)
);
CREATE INDEX issue_assignees_user ON issue_assignees (user_id, issue_id);

ALTER TABLE projects ADD COLUMN open_issues_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN open_confidential_issues_count BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE projects DROP COLUMN open_confidential_issues_count;
ALTER TABLE projects DROP COLUMN open_issues_count;
DROP TABLE issue_assignees;
DROP TABLE issues;
