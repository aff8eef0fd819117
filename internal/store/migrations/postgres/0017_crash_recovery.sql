-- +goose Up
-- A task claimed again after its worker died counts the takeover here, not
-- as an attempt (up to model.MaxTakeovers).
ALTER TABLE tasks ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
