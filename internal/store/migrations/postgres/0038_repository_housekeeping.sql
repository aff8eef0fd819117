-- +goose Up
-- One row per repository housekeeping has counted writes for: "project/<id>",
-- "wiki/project/<id>", "wiki/group/<id>". writes is GitLab's
-- pushes_since_gc (every push, merge and API or wiki commit counts);
-- lease_until is GitLab's exclusive housekeeping lease (micros; 0: free):
-- taken when a housekeeping is enqueued, given back when it ends, so one
-- repository is housekept by one worker of one process at a time.
CREATE TABLE repository_housekeeping (
    repository TEXT PRIMARY KEY,
    writes BIGINT NOT NULL DEFAULT 0,
    lease_until BIGINT NOT NULL DEFAULT 0,
    last_run_at BIGINT NOT NULL DEFAULT 0
);
