-- +goose Up
-- Found by the lists' plans (TestListPlans): the groups list ordered by
-- path or id reads its groups from an index in order rather than sorting
-- every namespace. (A group's subtree, traversal LIKE '<id>/%', has no
-- index range on SQLite, whose LIKE ignores case.)
CREATE INDEX namespaces_kind_path ON namespaces (kind, path, id);
CREATE INDEX namespaces_kind_id ON namespaces (kind, id);
