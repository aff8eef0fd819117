-- +goose Up
-- entity_version moves on every write to what an entity's cached JSON
-- shows (the entity cache's key, issue 27): any update of the row, and for
-- projects any change of their topics (or a topic's name), for users any
-- change of their identities. Triggers, so no write (of any process) can
-- forget it; the rows' own version columns stay the compare-and-set
-- guards of edits.
ALTER TABLE projects ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE namespaces ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;

-- +goose StatementBegin
CREATE FUNCTION entity_version_next() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.entity_version := OLD.entity_version + 1;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER projects_entity_version BEFORE UPDATE ON projects FOR EACH ROW EXECUTE FUNCTION entity_version_next();
CREATE TRIGGER namespaces_entity_version BEFORE UPDATE ON namespaces FOR EACH ROW EXECUTE FUNCTION entity_version_next();
CREATE TRIGGER users_entity_version BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION entity_version_next();

-- +goose StatementBegin
CREATE FUNCTION project_topics_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE projects SET entity_version = entity_version + 1 WHERE id = OLD.project_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE projects SET entity_version = entity_version + 1 WHERE id = NEW.project_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER project_topics_entity_version AFTER INSERT OR UPDATE OR DELETE ON project_topics
    FOR EACH ROW EXECUTE FUNCTION project_topics_entity_version();

-- +goose StatementBegin
CREATE FUNCTION topics_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE projects SET entity_version = entity_version + 1
    WHERE id IN (SELECT project_id FROM project_topics WHERE topic_id IN (OLD.id, NEW.id));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER topics_entity_version AFTER UPDATE ON topics FOR EACH ROW EXECUTE FUNCTION topics_entity_version();

-- +goose StatementBegin
CREATE FUNCTION identities_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET entity_version = entity_version + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE users SET entity_version = entity_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER identities_entity_version AFTER INSERT OR UPDATE OR DELETE ON identities
    FOR EACH ROW EXECUTE FUNCTION identities_entity_version();
