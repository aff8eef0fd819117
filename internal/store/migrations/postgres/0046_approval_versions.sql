-- +goose Up
-- approval_versions move on every write to what a merge request's
-- approval state is computed from (the approval cache's key, issue 27):
-- scope = a project's id for its approval settings, project and merge
-- request rules (with their users, groups and protected branches), the
-- approvals of its merge requests and its protected branches; scope 0 for
-- group membership (namespace_authorizations, which every change of group
-- members, shares and hierarchy rewrites). Triggers, so no write of any
-- process can forget it. Rows are never deleted, so a version never goes
-- back.
CREATE TABLE approval_versions (
    scope BIGINT PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO approval_versions (scope, version) VALUES (0, 1);

-- +goose StatementBegin
CREATE FUNCTION approval_version_bump(s BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF s IS NOT NULL THEN
        INSERT INTO approval_versions (scope, version) VALUES (s, 1)
        ON CONFLICT (scope) DO UPDATE SET version = approval_versions.version + 1;
    END IF;
END
$$;
-- +goose StatementEnd

-- Tables with a project_id: approval_settings, protected_branches.
-- +goose StatementBegin
CREATE FUNCTION approval_version_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM approval_version_bump(OLD.project_id);
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.project_id IS DISTINCT FROM OLD.project_id) THEN
        PERFORM approval_version_bump(NEW.project_id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- The project of a rule: its own, or its merge request's target project.
-- +goose StatementBegin
CREATE FUNCTION approval_rule_scope(BIGINT, BIGINT) RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT COALESCE($1, (SELECT m.target_project_id FROM merge_requests m WHERE m.id = $2))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION approval_version_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM approval_version_bump(approval_rule_scope(OLD.project_id, OLD.merge_request_id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM approval_version_bump(approval_rule_scope(NEW.project_id, NEW.merge_request_id));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Tables with a rule_id: the rules' users, groups and protected branches.
-- +goose StatementBegin
CREATE FUNCTION approval_version_rule_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM approval_version_bump((SELECT approval_rule_scope(r.project_id, r.merge_request_id) FROM approval_rules r WHERE r.id = OLD.rule_id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM approval_version_bump((SELECT approval_rule_scope(r.project_id, r.merge_request_id) FROM approval_rules r WHERE r.id = NEW.rule_id));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION approval_version_approvals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM approval_version_bump((SELECT m.target_project_id FROM merge_requests m WHERE m.id = OLD.merge_request_id));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM approval_version_bump((SELECT m.target_project_id FROM merge_requests m WHERE m.id = NEW.merge_request_id));
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION approval_version_members() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM approval_version_bump(0);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER approval_settings_approval_version AFTER INSERT OR UPDATE OR DELETE ON approval_settings
    FOR EACH ROW EXECUTE FUNCTION approval_version_project();
CREATE TRIGGER protected_branches_approval_version AFTER INSERT OR UPDATE OR DELETE ON protected_branches
    FOR EACH ROW EXECUTE FUNCTION approval_version_project();
CREATE TRIGGER approval_rules_approval_version AFTER INSERT OR UPDATE OR DELETE ON approval_rules
    FOR EACH ROW EXECUTE FUNCTION approval_version_rules();
CREATE TRIGGER approval_rule_users_approval_version AFTER INSERT OR UPDATE OR DELETE ON approval_rule_users
    FOR EACH ROW EXECUTE FUNCTION approval_version_rule_links();
CREATE TRIGGER approval_rule_groups_approval_version AFTER INSERT OR UPDATE OR DELETE ON approval_rule_groups
    FOR EACH ROW EXECUTE FUNCTION approval_version_rule_links();
CREATE TRIGGER approval_rule_protected_branches_approval_version AFTER INSERT OR UPDATE OR DELETE ON approval_rule_protected_branches
    FOR EACH ROW EXECUTE FUNCTION approval_version_rule_links();
CREATE TRIGGER approvals_approval_version AFTER INSERT OR UPDATE OR DELETE ON approvals
    FOR EACH ROW EXECUTE FUNCTION approval_version_approvals();
-- Once per statement: a refresh rewrites a user's rows in a few statements.
CREATE TRIGGER namespace_authorizations_approval_version AFTER INSERT OR UPDATE OR DELETE ON namespace_authorizations
    FOR EACH STATEMENT EXECUTE FUNCTION approval_version_members();

