-- +goose Up
-- A merge request's pipelines (source merge_request_event) name it.
ALTER TABLE ci_pipelines ADD COLUMN merge_request_id BIGINT;
CREATE INDEX ci_pipelines_merge_request ON ci_pipelines (merge_request_id, id);
