-- +goose Up
-- Sessions of the web pages (issue 28): a browser's cookie carries a
-- random session id; only its SHA-256 digest is stored, so the table
-- alone signs no one in. A session ends at expires_at (moved forward as
-- it is used, by the instance's session_expire_delay), on sign-out, or
-- with its user.
CREATE TABLE web_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_digest TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX web_sessions_digest_key ON web_sessions (session_digest);
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- +goose Down
DROP TABLE web_sessions;
