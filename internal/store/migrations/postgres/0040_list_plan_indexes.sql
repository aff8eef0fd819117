-- +goose Up
-- Found by the lists' plans (TestListPlans): the groups list ordered by
-- path or id reads its groups from an index in order rather than sorting
-- every namespace, and a group's subtree (traversal LIKE '<id>/%': the
-- projects of a group's merge requests, issues and pipelines) is a range
-- of an index in any collation (text_pattern_ops; the plain index serves
-- LIKE only in the C collation).
CREATE INDEX namespaces_kind_path ON namespaces (kind, path, id);
CREATE INDEX namespaces_kind_id ON namespaces (kind, id);
CREATE INDEX namespaces_traversal_pattern ON namespaces (traversal text_pattern_ops);
