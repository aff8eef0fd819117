-- +goose Up
-- Issue boards of projects and groups (exactly one of project_id and
-- group_id is set) and their lists. A label list points at a label the
-- board's owner sees; its position is 0.. among the board's label lists.
-- The backlog and closed lists are rows of their list_type, without a
-- label or position. Removing a board, its project or group, or a label
-- removes the lists with them.
CREATE TABLE boards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id BIGINT REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT REFERENCES namespaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    hide_backlog_list BOOLEAN NOT NULL DEFAULT FALSE,
    hide_closed_list BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CHECK ((project_id IS NULL) <> (group_id IS NULL))
);
CREATE INDEX boards_project ON boards (project_id, id);
CREATE INDEX boards_group ON boards (group_id, id);

CREATE TABLE board_lists (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    board_id BIGINT NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
    list_type TEXT NOT NULL,
    label_id BIGINT REFERENCES labels (id) ON DELETE CASCADE,
    position INTEGER,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CHECK ((list_type = 'label') = (label_id IS NOT NULL))
);
CREATE UNIQUE INDEX board_lists_label_key ON board_lists (board_id, label_id) WHERE label_id IS NOT NULL;
CREATE UNIQUE INDEX board_lists_type_key ON board_lists (board_id, list_type) WHERE list_type <> 'label';
CREATE INDEX board_lists_label ON board_lists (label_id);
