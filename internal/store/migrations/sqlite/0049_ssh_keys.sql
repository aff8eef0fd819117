-- +goose Up
-- SSH keys (issue 29): users' keys and deploy keys in one table, as
-- GitLab keeps them, so that a key's SHA256 fingerprint is unique among
-- both kinds (a key belongs to one user or one deploy key) and the SSH
-- server finds a key from the fingerprint the client offers with one
-- indexed lookup. A user's key goes with its user (user_id); a deploy
-- key outlives its creator (creator_id set to NULL).
CREATE TABLE ssh_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    creator_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    public BOOLEAN NOT NULL DEFAULT FALSE,
    title TEXT NOT NULL,
    key_text TEXT NOT NULL,
    key_type TEXT NOT NULL,
    bits INTEGER NOT NULL,
    fingerprint_md5 TEXT NOT NULL,
    fingerprint_sha256 TEXT NOT NULL,
    usage_type TEXT NOT NULL,
    expires_at BIGINT,
    last_used_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX ssh_keys_fingerprint_sha256_key ON ssh_keys (fingerprint_sha256);
CREATE INDEX ssh_keys_fingerprint_md5 ON ssh_keys (fingerprint_md5);
CREATE INDEX ssh_keys_user ON ssh_keys (user_id, id);
CREATE INDEX ssh_keys_creator ON ssh_keys (creator_id);
CREATE INDEX ssh_keys_kind ON ssh_keys (kind, id);

-- A deploy key enabled on a project, and whether it may push there.
CREATE TABLE deploy_keys_projects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    deploy_key_id BIGINT NOT NULL REFERENCES ssh_keys (id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    can_push BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX deploy_keys_projects_key_project ON deploy_keys_projects (deploy_key_id, project_id);
CREATE INDEX deploy_keys_projects_project ON deploy_keys_projects (project_id, id);

-- +goose Down
DROP TABLE deploy_keys_projects;
DROP TABLE ssh_keys;
