-- +goose Up
-- What a merge request's page shows that git decides, stored with what it
-- was computed from so that reads run no git (issue 27): changes_count is
-- the number of files changed between changes_base and changes_head (valid
-- while they are the row's base_sha and head_sha); fast_forward is whether
-- merge_status_target is an ancestor of merge_status_source (valid with the
-- merge status). Open merge requests are checked again once, so that
-- fast_forward is computed for them.
ALTER TABLE merge_requests ADD COLUMN changes_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE merge_requests ADD COLUMN changes_base TEXT NOT NULL DEFAULT '';
ALTER TABLE merge_requests ADD COLUMN changes_head TEXT NOT NULL DEFAULT '';
ALTER TABLE merge_requests ADD COLUMN fast_forward BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE merge_requests SET merge_status = 'unchecked' WHERE state = 'opened';
