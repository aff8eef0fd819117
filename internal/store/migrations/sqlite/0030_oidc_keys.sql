-- +goose Up
-- The keys Quarry signs CI ID tokens (id_tokens:) with. Each key is one
-- generation: the newest signs, the one before it stays published in the
-- JWKS so tokens signed before a rotation still verify. The generation is
-- the primary key, so two processes creating the first key, or rotating
-- at once, insert one row (ON CONFLICT DO NOTHING) and read the winner.
-- private_key is the PKCS #8 DER of the RSA key, base64, sealed with the
-- secrets keyring (context oidc_signing_keys.private_key).
CREATE TABLE oidc_signing_keys (
    generation BIGINT PRIMARY KEY,
    kid TEXT NOT NULL,
    private_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX oidc_signing_keys_kid_key ON oidc_signing_keys (kid);
