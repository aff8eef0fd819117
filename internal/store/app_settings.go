package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"quarry/internal/model"
)

// SettingsChannel is the notification channel a change of the application
// settings is announced on (payload: the new version), so every process
// drops its cached copy.
const SettingsChannel = "app_settings"

// sealSettingSecrets is the sealed column of the secret attributes.
const sealSettingSecrets = "application_settings.secrets"

// SettingsRow is the instance's one row of application settings.
type SettingsRow struct {
	Settings  model.ApplicationSettings
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version counts the row's writes; SaveApplicationSettings writes
	// only over the version it was read at.
	Version int64
}

// ApplicationSettings returns the instance's settings, creating the row
// with fresh's defaults (and its fresh registration token) on first read;
// with fresh nil, a missing row reads as GitLab's defaults (version 0)
// and nothing is written.
// The registration token and the secret attributes are kept sealed beside
// the document.
func (tx *Tx) ApplicationSettings(ctx context.Context, fresh func() model.ApplicationSettings) (SettingsRow, error) {
	var doc, token, secrets string
	var row SettingsRow
	const q = "SELECT settings, runners_token, secrets, created_at, updated_at, version FROM application_settings WHERE id = 1"
	dest := []any{&doc, sealedText{tx, &token, sealInstanceToken}, sealedText{tx, &secrets, sealSettingSecrets},
		tsScan{&row.CreatedAt}, tsScan{&row.UpdatedAt}, &row.Version}
	err := tx.row(ctx, dest, q)
	if errors.Is(err, model.ErrNotFound) && fresh == nil {
		row.Settings = model.DefaultApplicationSettings()
		return row, nil
	}
	if errors.Is(err, model.ErrNotFound) {
		s := fresh()
		now := tx.Now()
		var sealed, digest, sealedSecrets any
		if sealed, digest, err = tx.sealToken(s.RunnersRegistrationToken, sealInstanceToken); err != nil {
			return row, err
		}
		if sealedSecrets, err = tx.sealSettingSecrets(s); err != nil {
			return row, err
		}
		_, err = tx.exec(ctx, `INSERT INTO application_settings (id, settings, runners_token, runners_token_digest, secrets, created_at, updated_at)
			VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, toJSON(s.Document()), sealed, digest, sealedSecrets, micros(now), micros(now))
		if err != nil {
			return row, err
		}
		err = tx.row(ctx, dest, q)
	}
	if err != nil {
		return row, err
	}
	s := model.DefaultApplicationSettings()
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return row, fmt.Errorf("application settings: %w", err)
	}
	if secrets != "" {
		var m map[string]string
		if err := json.Unmarshal([]byte(secrets), &m); err != nil {
			return row, fmt.Errorf("application settings secrets: %w", err)
		}
		s.SetSecrets(m)
	}
	s.RunnersRegistrationToken = token
	row.Settings = s
	return row, nil
}

// sealSettingSecrets seals s's secret attributes as one JSON object, NULL
// when there are none.
func (tx *Tx) sealSettingSecrets(s model.ApplicationSettings) (any, error) {
	m := s.Secrets()
	if len(m) == 0 {
		return nil, nil
	}
	return tx.sealValue(toJSON(m), sealSettingSecrets)
}

// SaveApplicationSettings writes the instance's settings over version
// (the version they were read at): another writer in between is a
// conflict, reported, never overwritten. Every process hears of the
// change on SettingsChannel once the transaction commits.
func (tx *Tx) SaveApplicationSettings(ctx context.Context, s model.ApplicationSettings, version int64) error {
	sealed, digest, err := tx.sealToken(s.RunnersRegistrationToken, sealInstanceToken)
	if err != nil {
		return err
	}
	secrets, err := tx.sealSettingSecrets(s)
	if err != nil {
		return err
	}
	n, err := tx.execN(ctx, `UPDATE application_settings SET settings = ?, runners_token = ?, runners_token_digest = ?, secrets = ?,
		updated_at = ?, version = version + 1 WHERE id = 1 AND version = ?`,
		toJSON(s.Document()), sealed, digest, secrets, micros(tx.Now()), version)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("application settings changed meanwhile")
	}
	if tx.inTx {
		return tx.Notify(ctx, SettingsChannel, strconv.FormatInt(version+1, 10))
	}
	return nil
}

// LockApplicationSettings makes this transaction the row's only writer
// until it ends (a no-op write that takes the row lock on PostgreSQL;
// SQLite has one writer anyway), so a read-modify-write of the settings
// sees the latest version instead of losing a race to a concurrent one.
func (tx *Tx) LockApplicationSettings(ctx context.Context) error {
	_, err := tx.exec(ctx, "UPDATE application_settings SET version = version WHERE id = 1")
	return err
}
