-- +goose Up
-- Maintained counts of the administrator's unfiltered lists (issue 27):
-- the live projects (pending_delete = FALSE) and the users, kept by
-- triggers on every insert, delete and change of pending_delete, so that
-- an offset page reads its X-Total from one row instead of counting up to
-- model.CountLimit index entries. A filtered list still counts.
CREATE TABLE row_counts (
    name TEXT PRIMARY KEY,
    n BIGINT NOT NULL
);
INSERT INTO row_counts (name, n) SELECT 'live_projects', COUNT(*) FROM projects WHERE pending_delete = FALSE;
INSERT INTO row_counts (name, n) SELECT 'users', COUNT(*) FROM users;

-- +goose StatementBegin
CREATE TRIGGER projects_count_insert AFTER INSERT ON projects
WHEN NEW.pending_delete = FALSE
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'live_projects';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER projects_count_delete AFTER DELETE ON projects
WHEN OLD.pending_delete = FALSE
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'live_projects';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER projects_count_pending_delete AFTER UPDATE OF pending_delete ON projects
WHEN NEW.pending_delete <> OLD.pending_delete
BEGIN
    UPDATE row_counts SET n = n + CASE WHEN NEW.pending_delete THEN -1 ELSE 1 END WHERE name = 'live_projects';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER users_count_insert AFTER INSERT ON users
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'users';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER users_count_delete AFTER DELETE ON users
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'users';
END;
-- +goose StatementEnd
