-- +goose Up
-- entity_version moves on every write to what a merge request's cached
-- JSON shows (the entity cache's key, issue 27): any update of the row
-- (its labels, merge check and changes count included) and any change of
-- its assignees or reviewers. Triggers, as 0041, so no write of any
-- process can forget it; the row's version stays the compare-and-set
-- guard of edits.
ALTER TABLE merge_requests ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;

CREATE TRIGGER merge_requests_entity_version BEFORE UPDATE ON merge_requests FOR EACH ROW EXECUTE FUNCTION entity_version_next();

-- +goose StatementBegin
CREATE FUNCTION merge_request_people_entity_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = OLD.merge_request_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = NEW.merge_request_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER merge_request_assignees_entity_version AFTER INSERT OR UPDATE OR DELETE ON merge_request_assignees
    FOR EACH ROW EXECUTE FUNCTION merge_request_people_entity_version();
CREATE TRIGGER merge_request_reviewers_entity_version AFTER INSERT OR UPDATE OR DELETE ON merge_request_reviewers
    FOR EACH ROW EXECUTE FUNCTION merge_request_people_entity_version();
