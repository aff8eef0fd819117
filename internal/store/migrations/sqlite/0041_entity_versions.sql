-- +goose Up
-- entity_version moves on every write to what an entity's cached JSON
-- shows (the entity cache's key, issue 27): any update of the row, and for
-- projects any change of their topics (or a topic's name), for users any
-- change of their identities. Triggers, so no write can forget it; the
-- rows' own version columns stay the compare-and-set guards of edits.
ALTER TABLE projects ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE namespaces ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;

-- +goose StatementBegin
CREATE TRIGGER projects_entity_version AFTER UPDATE ON projects
WHEN NEW.entity_version = OLD.entity_version
BEGIN
    UPDATE projects SET entity_version = OLD.entity_version + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER namespaces_entity_version AFTER UPDATE ON namespaces
WHEN NEW.entity_version = OLD.entity_version
BEGIN
    UPDATE namespaces SET entity_version = OLD.entity_version + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER users_entity_version AFTER UPDATE ON users
WHEN NEW.entity_version = OLD.entity_version
BEGIN
    UPDATE users SET entity_version = OLD.entity_version + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER project_topics_insert_entity_version AFTER INSERT ON project_topics
BEGIN
    UPDATE projects SET entity_version = entity_version + 1 WHERE id = NEW.project_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER project_topics_delete_entity_version AFTER DELETE ON project_topics
BEGIN
    UPDATE projects SET entity_version = entity_version + 1 WHERE id = OLD.project_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER project_topics_update_entity_version AFTER UPDATE ON project_topics
BEGIN
    UPDATE projects SET entity_version = entity_version + 1 WHERE id IN (OLD.project_id, NEW.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER topics_entity_version AFTER UPDATE ON topics
BEGIN
    UPDATE projects SET entity_version = entity_version + 1
    WHERE id IN (SELECT project_id FROM project_topics WHERE topic_id IN (OLD.id, NEW.id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER identities_insert_entity_version AFTER INSERT ON identities
BEGIN
    UPDATE users SET entity_version = entity_version + 1 WHERE id = NEW.user_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER identities_delete_entity_version AFTER DELETE ON identities
BEGIN
    UPDATE users SET entity_version = entity_version + 1 WHERE id = OLD.user_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER identities_update_entity_version AFTER UPDATE ON identities
BEGIN
    UPDATE users SET entity_version = entity_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
-- +goose StatementEnd
