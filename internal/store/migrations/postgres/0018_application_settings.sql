-- +goose Up
-- The secret attributes of the application settings (API keys, passwords,
-- tokens): one JSON object, sealed as a whole, kept apart from the
-- document so no response or dump shows them.
ALTER TABLE application_settings ADD COLUMN secrets TEXT;
