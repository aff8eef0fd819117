-- +goose Up
-- approval_versions move on every write to what a merge request's
-- approval state is computed from (the approval cache's key, issue 27):
-- scope = a project's id for its approval settings, project and merge
-- request rules (with their users, groups and protected branches), the
-- approvals of its merge requests and its protected branches; scope 0 for
-- group membership (namespace_authorizations, which every change of group
-- members, shares and hierarchy rewrites). Triggers, so no write can
-- forget it. Rows are never deleted, so a version never goes back. (No
-- INSERT OR IGNORE: the conflict policy of the statement that fires a
-- trigger overrides its body's.)
CREATE TABLE approval_versions (
    scope BIGINT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL
);
INSERT INTO approval_versions (scope, version) VALUES (0, 1);

-- +goose StatementBegin
CREATE TRIGGER approval_settings_insert_approval_version AFTER INSERT ON approval_settings
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT NEW.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (NEW.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_settings_update_approval_version AFTER UPDATE ON approval_settings
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT OLD.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (OLD.project_id);
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT NEW.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (NEW.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_settings_delete_approval_version AFTER DELETE ON approval_settings
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT OLD.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (OLD.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER protected_branches_insert_approval_version AFTER INSERT ON protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT NEW.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (NEW.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER protected_branches_update_approval_version AFTER UPDATE ON protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT OLD.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (OLD.project_id);
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT NEW.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (NEW.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER protected_branches_delete_approval_version AFTER DELETE ON protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT OLD.project_id AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (OLD.project_id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rules_insert_approval_version AFTER INSERT ON approval_rules
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT COALESCE(NEW.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id)) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (COALESCE(NEW.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id)));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rules_update_approval_version AFTER UPDATE ON approval_rules
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT COALESCE(OLD.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id)) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (COALESCE(OLD.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id)));
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT COALESCE(NEW.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id)) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (COALESCE(NEW.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id)));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rules_delete_approval_version AFTER DELETE ON approval_rules
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT COALESCE(OLD.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id)) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = (COALESCE(OLD.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id)));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_users_insert_approval_version AFTER INSERT ON approval_rule_users
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_users_update_approval_version AFTER UPDATE ON approval_rule_users
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_users_delete_approval_version AFTER DELETE ON approval_rule_users
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_groups_insert_approval_version AFTER INSERT ON approval_rule_groups
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_groups_update_approval_version AFTER UPDATE ON approval_rule_groups
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_groups_delete_approval_version AFTER DELETE ON approval_rule_groups
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_protected_branches_insert_approval_version AFTER INSERT ON approval_rule_protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_protected_branches_update_approval_version AFTER UPDATE ON approval_rule_protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = NEW.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approval_rule_protected_branches_delete_approval_version AFTER DELETE ON approval_rule_protected_branches
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT COALESCE(r.project_id, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = r.merge_request_id)) FROM approval_rules r WHERE r.id = OLD.rule_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approvals_insert_approval_version AFTER INSERT ON approvals
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approvals_update_approval_version AFTER UPDATE ON approvals
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id));
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER approvals_delete_approval_version AFTER DELETE ON approvals
BEGIN
    INSERT INTO approval_versions (scope, version) SELECT s, 0 FROM (SELECT (SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id) AS s) WHERE s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM approval_versions WHERE scope = s);
    UPDATE approval_versions SET version = version + 1 WHERE scope = ((SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER namespace_authorizations_insert_approval_version AFTER INSERT ON namespace_authorizations
BEGIN
    UPDATE approval_versions SET version = version + 1 WHERE scope = 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER namespace_authorizations_update_approval_version AFTER UPDATE ON namespace_authorizations
BEGIN
    UPDATE approval_versions SET version = version + 1 WHERE scope = 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER namespace_authorizations_delete_approval_version AFTER DELETE ON namespace_authorizations
BEGIN
    UPDATE approval_versions SET version = version + 1 WHERE scope = 0;
END;
-- +goose StatementEnd
