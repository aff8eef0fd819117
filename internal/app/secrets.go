package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"quarry/internal/config"
	"quarry/internal/secrets"
	"quarry/internal/store"
)

// openSecrets reads the secrets key file (making it with a fresh key on
// first start) and gives it to db, which seals and opens every secret it
// keeps with it.
func openSecrets(cfg config.Config, db *store.DB, log *slog.Logger) (*secrets.Keyring, error) {
	path := cfg.SecretsKeyPath()
	ring, created, err := secrets.LoadOrCreate(path)
	if err != nil {
		return nil, err
	}
	if created {
		log.Info("secrets key file created; keep a copy with the backups of the database", "path", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("secrets key file is readable by other users", "path", path, "mode", fi.Mode().Perm().String())
	}
	db.SetSealer(ring)
	return ring, nil
}

// sealSecrets seals what the database still holds in plain text (the
// first start after an upgrade) or under an older key (after a rotation);
// nothing is read when the last pass used the current key.
func sealSecrets(ctx context.Context, db *store.DB, log *slog.Logger) error {
	rep, err := db.SealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("seal secrets: %w", err)
	}
	if !rep.Current {
		log.Info("secrets sealed", "key", rep.KeyID, "from_plain_text", rep.Plain, "from_older_keys", rep.Resealed)
	}
	return nil
}

// RotateSecretsKey is quarry admin rotate-secrets-key: it adds a fresh key
// to the secrets key file, makes it the current one and seals every
// secret in the database with it. The older keys stay in the file, so
// whatever they sealed stays readable (values a running server wrote
// before it read the new file among them). It migrates first, as a start
// does, and finishes an upgrade's sealing with the old key before the
// file changes.
func RotateSecretsKey(ctx context.Context, cfg config.Config, log *slog.Logger) (old, next store.SealReport, err error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return old, next, fmt.Errorf("create data dir: %w", err)
	}
	db, err := Open(ctx, cfg)
	if err != nil {
		return old, next, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return old, next, err
	}
	if _, err := openSecrets(cfg, db, log); err != nil {
		return old, next, err
	}
	if old, err = db.SealSecrets(ctx); err != nil {
		return old, next, fmt.Errorf("seal secrets: %w", err)
	}
	ring, err := secrets.Rotate(cfg.SecretsKeyPath())
	if err != nil {
		return old, next, err
	}
	db.SetSealer(ring)
	if next, err = db.SealSecrets(ctx); err != nil {
		return old, next, fmt.Errorf("seal secrets with key %s: %w", ring.KeyID(), err)
	}
	return old, next, nil
}
