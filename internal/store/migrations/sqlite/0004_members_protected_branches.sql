-- +goose Up
CREATE TABLE protected_branches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    allow_force_push BOOLEAN NOT NULL DEFAULT FALSE,
    code_owner_approval_required BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX protected_branches_project_name_key ON protected_branches (project_id, name);

CREATE TABLE protected_branch_access_levels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    protected_branch_id BIGINT NOT NULL REFERENCES protected_branches (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    access_level INTEGER,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE
);
CREATE INDEX protected_branch_access_levels_branch ON protected_branch_access_levels (protected_branch_id);

ALTER TABLE members ADD COLUMN invite_source TEXT;
ALTER TABLE members ADD COLUMN tasks_to_be_done TEXT;
ALTER TABLE members ADD COLUMN tasks_project_id BIGINT;
CREATE INDEX members_source ON members (source_type, source_id, access_level);
