-- +goose Up
-- A project's merge requests in the list orders (newest first by default)
-- and a source's members by id are read from an index in order, not
-- sorted whole for every page.
CREATE INDEX merge_requests_target_created ON merge_requests (target_project_id, created_at, id);
CREATE INDEX merge_requests_target_updated ON merge_requests (target_project_id, updated_at, id);
CREATE INDEX members_source_id ON members (source_type, source_id, id);
