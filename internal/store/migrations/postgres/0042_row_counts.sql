-- +goose Up
-- Maintained counts of the administrator's unfiltered lists (issue 27):
-- the live projects (pending_delete = FALSE) and the users, kept by
-- triggers on every insert, delete and change of pending_delete (of any
-- process, in the writing transaction), so that an offset page reads its
-- X-Total from one row instead of counting up to model.CountLimit index
-- entries. A filtered list still counts.
CREATE TABLE row_counts (
    name TEXT PRIMARY KEY,
    n BIGINT NOT NULL
);
INSERT INTO row_counts (name, n) SELECT 'live_projects', COUNT(*) FROM projects WHERE pending_delete = FALSE;
INSERT INTO row_counts (name, n) SELECT 'users', COUNT(*) FROM users;

-- +goose StatementBegin
CREATE FUNCTION projects_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NOT NEW.pending_delete THEN
        UPDATE row_counts SET n = n + 1 WHERE name = 'live_projects';
    ELSIF TG_OP = 'DELETE' AND NOT OLD.pending_delete THEN
        UPDATE row_counts SET n = n - 1 WHERE name = 'live_projects';
    ELSIF TG_OP = 'UPDATE' AND NEW.pending_delete <> OLD.pending_delete THEN
        UPDATE row_counts SET n = n + CASE WHEN NEW.pending_delete THEN -1 ELSE 1 END WHERE name = 'live_projects';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER projects_count AFTER INSERT OR DELETE OR UPDATE OF pending_delete ON projects
    FOR EACH ROW EXECUTE FUNCTION projects_count();

-- +goose StatementBegin
CREATE FUNCTION users_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE row_counts SET n = n + 1 WHERE name = 'users';
    ELSE
        UPDATE row_counts SET n = n - 1 WHERE name = 'users';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER users_count AFTER INSERT OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION users_count();
