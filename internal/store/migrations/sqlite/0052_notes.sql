-- +goose Up
-- Notes (comments) and award emoji. Both name their target by type and
-- id (noteable_type 'Issue' now; 'MergeRequest' later), so they carry
-- no foreign key to it: the target's deletion removes them in its
-- transaction (DeleteIssue), a project's deletion by cascade. A body is
-- at most GitLab's 1,000,000 characters (length counts characters on
-- both engines).
CREATE TABLE notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    noteable_type TEXT NOT NULL,
    noteable_id BIGINT NOT NULL,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    author_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    body TEXT NOT NULL CHECK (length(body) <= 1000000),
    system BOOLEAN NOT NULL DEFAULT FALSE,
    internal BOOLEAN NOT NULL DEFAULT FALSE,
    resolvable BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX notes_noteable_created ON notes (noteable_type, noteable_id, created_at, id);
CREATE INDEX notes_noteable_updated ON notes (noteable_type, noteable_id, updated_at, id);
CREATE INDEX notes_project ON notes (project_id);
CREATE INDEX notes_author ON notes (author_id);

CREATE TABLE award_emoji (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    awardable_type TEXT NOT NULL,
    awardable_id BIGINT NOT NULL,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX award_emoji_key ON award_emoji (awardable_type, awardable_id, user_id, name);
CREATE INDEX award_emoji_awardable ON award_emoji (awardable_type, awardable_id, name, id);
CREATE INDEX award_emoji_project ON award_emoji (project_id);
CREATE INDEX award_emoji_user ON award_emoji (user_id);

-- +goose Down
DROP TABLE award_emoji;
DROP TABLE notes;
