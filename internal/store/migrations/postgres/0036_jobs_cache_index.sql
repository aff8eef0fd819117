-- +goose Up
-- A project's runner cache index: NULL until its runner caches are first
-- cleared, then bumped by one on each clear. Jobs' cache keys carry it
-- ("<key>-<index>"), so a clear makes every earlier cache unreachable.
ALTER TABLE projects ADD COLUMN jobs_cache_index BIGINT;
