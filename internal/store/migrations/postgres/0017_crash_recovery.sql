-- +goose Up
-- A merge's lock names its merge: a token, the merger, a lease the merge
-- renews while it runs, and (JSON) what it is about to move the target
-- branch to, written before it does. A merge whose process died is then
-- finished or undone by a recovery once its lease has run out. Locks taken
-- before leases existed count as expired.
ALTER TABLE merge_requests ADD COLUMN lock_token TEXT;
ALTER TABLE merge_requests ADD COLUMN locked_by_id BIGINT REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE merge_requests ADD COLUMN lock_expires_at BIGINT;
ALTER TABLE merge_requests ADD COLUMN in_progress_merge TEXT;
UPDATE merge_requests SET lock_token = '', lock_expires_at = 0 WHERE state = 'locked';
CREATE INDEX merge_requests_locked ON merge_requests (lock_expires_at) WHERE state = 'locked';

-- A task claimed again after its worker died counts the takeover here, not
-- as an attempt (up to model.MaxTakeovers).
ALTER TABLE tasks ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
