-- +goose Up
-- A user's membership of one source: (user_id, source_type) left the
-- source's id to a filter, so a caller's level in each project of a page
-- (one correlated subquery a row) read all of the caller's memberships of
-- that type when the planner chose it — without statistics (a new
-- database, or PostgreSQL with autovacuum off) it did: 1,000 memberships
-- read for every row of a page. With the source's id in the index every
-- lookup is an exact one, whatever the planner picks.
CREATE INDEX members_user_source ON members (user_id, source_type, source_id);
DROP INDEX members_user;

