-- +goose Up
-- A project's approval settings (one row, made on first write).
CREATE TABLE approval_settings (
    project_id BIGINT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    approvals_before_merge INTEGER NOT NULL DEFAULT 0,
    reset_approvals_on_push BOOLEAN NOT NULL DEFAULT TRUE,
    selective_code_owner_removals BOOLEAN NOT NULL DEFAULT FALSE,
    disable_overriding_approvers BOOLEAN NOT NULL DEFAULT FALSE,
    author_approval BOOLEAN NOT NULL DEFAULT FALSE,
    disable_committers_approval BOOLEAN NOT NULL DEFAULT FALSE,
    require_password BOOLEAN NOT NULL DEFAULT FALSE
);

-- Approval rules of a project (merge_request_id NULL) or of one merge
-- request (project_id NULL); source_rule_id: the project rule a merge
-- request rule copies.
CREATE TABLE approval_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    merge_request_id BIGINT REFERENCES merge_requests (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    rule_type TEXT NOT NULL,
    approvals_required INTEGER NOT NULL DEFAULT 0,
    source_rule_id BIGINT REFERENCES approval_rules (id) ON DELETE SET NULL,
    applies_to_all_protected_branches BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX approval_rules_project ON approval_rules (project_id, id);
CREATE INDEX approval_rules_mr ON approval_rules (merge_request_id, id);
-- Rule names are unique (any case) per project and per merge request.
CREATE UNIQUE INDEX approval_rules_project_name ON approval_rules (project_id, lower(name)) WHERE project_id IS NOT NULL;
CREATE UNIQUE INDEX approval_rules_mr_name ON approval_rules (merge_request_id, lower(name)) WHERE merge_request_id IS NOT NULL;
CREATE TABLE approval_rule_users (
    rule_id BIGINT NOT NULL REFERENCES approval_rules (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, user_id)
);
CREATE TABLE approval_rule_groups (
    rule_id BIGINT NOT NULL REFERENCES approval_rules (id) ON DELETE CASCADE,
    group_id BIGINT NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, group_id)
);
CREATE TABLE approval_rule_protected_branches (
    rule_id BIGINT NOT NULL REFERENCES approval_rules (id) ON DELETE CASCADE,
    protected_branch_id BIGINT NOT NULL REFERENCES protected_branches (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, protected_branch_id)
);

-- One approval per merge request and user.
CREATE TABLE approvals (
    merge_request_id BIGINT NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (merge_request_id, user_id)
);
