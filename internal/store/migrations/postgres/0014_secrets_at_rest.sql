-- +goose Up
-- Registration tokens are found by the digest of the token and kept
-- sealed (internal/secrets) so they can be shown back: a project's leaves
-- its settings document for columns of its own, a group's column holds it
-- sealed from now on, the instance's leaves application_settings'
-- document. CI/CD variable values, pipeline variables and the variables a
-- job was played with are sealed in their columns. A migration cannot
-- seal (the key is not in the database): the application's start-up pass
-- fills the digests and seals what older versions stored in plain text.
ALTER TABLE projects ADD COLUMN runners_token TEXT;
ALTER TABLE projects ADD COLUMN runners_token_digest TEXT;
CREATE UNIQUE INDEX projects_runners_token_key ON projects (runners_token_digest);
ALTER TABLE namespaces ADD COLUMN runners_token_digest TEXT;
CREATE UNIQUE INDEX namespaces_runners_token_key ON namespaces (runners_token_digest);
ALTER TABLE application_settings ADD COLUMN runners_token TEXT;
ALTER TABLE application_settings ADD COLUMN runners_token_digest TEXT;
CREATE UNIQUE INDEX application_settings_runners_token_key ON application_settings (runners_token_digest);

-- The key every stored secret was sealed with when the last start-up pass
-- finished (one row, id 1; none before the first pass, when values may
-- still be plain text).
CREATE TABLE secrets_state (
    id INTEGER PRIMARY KEY,
    key_id TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
