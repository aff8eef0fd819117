-- +goose Up
-- A task kind with a key has at most one pending task per key: repeated
-- requests for the same work (refresh this repository's statistics) fold
-- into one.
ALTER TABLE tasks ADD COLUMN dedupe_key TEXT;
CREATE UNIQUE INDEX tasks_pending_dedupe_key ON tasks (kind, dedupe_key) WHERE state = 'pending' AND dedupe_key IS NOT NULL;
