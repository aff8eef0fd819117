-- +goose Up
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL,
    email TEXT NOT NULL,
    unconfirmed_email TEXT,
    name TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'active',
    user_type TEXT NOT NULL DEFAULT 'human',
    is_admin BOOLEAN NOT NULL DEFAULT FALSE,
    external BOOLEAN NOT NULL DEFAULT FALSE,
    can_create_group BOOLEAN NOT NULL DEFAULT TRUE,
    projects_limit INTEGER NOT NULL DEFAULT 100000,
    password_hash TEXT NOT NULL DEFAULT '',
    password_expires_at BIGINT,
    bio TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    public_email TEXT,
    commit_email TEXT,
    skype TEXT NOT NULL DEFAULT '',
    linkedin TEXT NOT NULL DEFAULT '',
    twitter TEXT NOT NULL DEFAULT '',
    discord TEXT NOT NULL DEFAULT '',
    website_url TEXT NOT NULL DEFAULT '',
    organization TEXT NOT NULL DEFAULT '',
    job_title TEXT NOT NULL DEFAULT '',
    pronouns TEXT NOT NULL DEFAULT '',
    note TEXT NOT NULL DEFAULT '',
    theme_id INTEGER NOT NULL DEFAULT 1,
    color_scheme_id INTEGER NOT NULL DEFAULT 1,
    private_profile BOOLEAN NOT NULL DEFAULT FALSE,
    two_factor_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    avatar TEXT,
    confirmed_at BIGINT,
    last_sign_in_at BIGINT,
    current_sign_in_at BIGINT,
    last_sign_in_ip TEXT,
    current_sign_in_ip TEXT,
    sign_in_count INTEGER NOT NULL DEFAULT 0,
    last_activity_on TEXT,
    shared_runners_minutes_limit INTEGER,
    extra_shared_runners_minutes_limit INTEGER,
    namespace_id BIGINT,
    created_by_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX users_username_key ON users (lower(username));
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_name_id ON users (name, id);
CREATE INDEX users_username_id ON users (username, id);
CREATE INDEX users_created_at_id ON users (created_at, id);
CREATE INDEX users_updated_at_id ON users (updated_at, id);
CREATE INDEX users_state ON users (state);

CREATE TABLE namespaces (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    owner_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    parent_id BIGINT REFERENCES namespaces (id),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX namespaces_top_path_key ON namespaces (lower(path)) WHERE parent_id IS NULL;
CREATE UNIQUE INDEX namespaces_child_path_key ON namespaces (parent_id, lower(path)) WHERE parent_id IS NOT NULL;
CREATE INDEX namespaces_owner ON namespaces (owner_id);

CREATE TABLE identities (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    extern_uid TEXT NOT NULL,
    saml_provider_id BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX identities_user_provider_key ON identities (user_id, provider);
CREATE UNIQUE INDEX identities_provider_uid_key ON identities (provider, lower(extern_uid));

CREATE TABLE personal_access_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    token_digest TEXT NOT NULL,
    scopes TEXT NOT NULL,
    impersonation BOOLEAN NOT NULL DEFAULT FALSE,
    revoked BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at TEXT,
    last_used_at BIGINT,
    previous_id BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX personal_access_tokens_digest_key ON personal_access_tokens (token_digest);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id, id);

CREATE TABLE user_statuses (
    user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    emoji TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    availability TEXT NOT NULL DEFAULT 'not_set',
    clear_status_at BIGINT
);

CREATE TABLE user_preferences (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    view_diffs_file_by_file BOOLEAN NOT NULL DEFAULT FALSE,
    show_whitespace_in_diffs BOOLEAN NOT NULL DEFAULT TRUE,
    pass_user_identities_to_ci_jwt BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX user_preferences_user_key ON user_preferences (user_id);

CREATE TABLE user_custom_attributes (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX user_custom_attributes_key_value ON user_custom_attributes (key, value);

CREATE TABLE members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_type TEXT NOT NULL,
    source_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    access_level INTEGER NOT NULL,
    expires_at TEXT,
    created_by_id BIGINT,
    requested_at BIGINT,
    pending BOOLEAN NOT NULL DEFAULT FALSE,
    override BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX members_source_user_key ON members (source_type, source_id, user_id);
CREATE INDEX members_user ON members (user_id, source_type);
