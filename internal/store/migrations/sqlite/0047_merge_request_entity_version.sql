-- +goose Up
-- entity_version moves on every write to what a merge request's cached
-- JSON shows (the entity cache's key, issue 27): any update of the row
-- (its labels, merge check and changes count included) and any change of
-- its assignees or reviewers. Triggers, as 0041, so no write of any
-- process can forget it; the row's version stays the compare-and-set
-- guard of edits.
ALTER TABLE merge_requests ADD COLUMN entity_version BIGINT NOT NULL DEFAULT 1;

-- +goose StatementBegin
CREATE TRIGGER merge_requests_entity_version AFTER UPDATE ON merge_requests
WHEN NEW.entity_version = OLD.entity_version
BEGIN
    UPDATE merge_requests SET entity_version = OLD.entity_version + 1 WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_assignees_insert_entity_version AFTER INSERT ON merge_request_assignees
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = NEW.merge_request_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_assignees_delete_entity_version AFTER DELETE ON merge_request_assignees
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = OLD.merge_request_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_assignees_update_entity_version AFTER UPDATE ON merge_request_assignees
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id IN (OLD.merge_request_id, NEW.merge_request_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_reviewers_insert_entity_version AFTER INSERT ON merge_request_reviewers
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = NEW.merge_request_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_reviewers_delete_entity_version AFTER DELETE ON merge_request_reviewers
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id = OLD.merge_request_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER merge_request_reviewers_update_entity_version AFTER UPDATE ON merge_request_reviewers
BEGIN
    UPDATE merge_requests SET entity_version = entity_version + 1 WHERE id IN (OLD.merge_request_id, NEW.merge_request_id);
END;
-- +goose StatementEnd
