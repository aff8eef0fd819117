-- +goose Up
-- Merge requests: iids per target project (internal_ids usage
-- 'merge_requests'); the source may be a fork.
CREATE TABLE merge_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    iid BIGINT NOT NULL,
    target_project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    source_project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    author_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    squash BOOLEAN NOT NULL DEFAULT FALSE,
    remove_source_branch BOOLEAN NOT NULL DEFAULT FALSE,
    discussion_locked BOOLEAN NOT NULL DEFAULT FALSE,
    head_sha TEXT NOT NULL DEFAULT '',
    base_sha TEXT NOT NULL DEFAULT '',
    start_sha TEXT NOT NULL DEFAULT '',
    merge_status TEXT NOT NULL DEFAULT 'unchecked',
    merge_status_source TEXT NOT NULL DEFAULT '',
    merge_status_target TEXT NOT NULL DEFAULT '',
    conflicts BOOLEAN NOT NULL DEFAULT FALSE,
    merge_commit_sha TEXT,
    squash_commit_sha TEXT,
    merge_error TEXT,
    merged_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    merged_at BIGINT,
    closed_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    closed_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX merge_requests_iid_key ON merge_requests (target_project_id, iid);
CREATE INDEX merge_requests_target_state ON merge_requests (target_project_id, state, id);
CREATE INDEX merge_requests_source ON merge_requests (source_project_id, source_branch, state);
CREATE INDEX merge_requests_author ON merge_requests (author_id, id);

-- Who is assigned to and who reviews a merge request, in order.
CREATE TABLE merge_request_assignees (
    merge_request_id BIGINT NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (merge_request_id, user_id)
);
CREATE INDEX merge_request_assignees_user ON merge_request_assignees (user_id, merge_request_id);
CREATE TABLE merge_request_reviewers (
    merge_request_id BIGINT NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (merge_request_id, user_id)
);
CREATE INDEX merge_request_reviewers_user ON merge_request_reviewers (user_id, merge_request_id);
