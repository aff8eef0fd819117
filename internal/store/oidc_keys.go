package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// sealOIDCKey is the sealed column of the CI ID token signing keys.
const sealOIDCKey = "oidc_signing_keys.private_key"

// OIDCKeys are the stored signing keys, newest generation first, opened.
func (tx *Tx) OIDCKeys(ctx context.Context) ([]model.OIDCKey, error) {
	var out []model.OIDCKey
	err := tx.each(ctx, "SELECT generation, kid, private_key, created_at FROM oidc_signing_keys ORDER BY generation DESC", nil,
		func(r *sql.Rows) error {
			var k model.OIDCKey
			if err := r.Scan(&k.Generation, &k.KID, sealedText{tx, &k.PrivateKey, sealOIDCKey}, tsScan{&k.CreatedAt}); err != nil {
				return err
			}
			out = append(out, k)
			return nil
		})
	return out, err
}

// AddOIDCKey inserts k as its generation, sealed, unless that generation
// exists already (another process made it first: false). Then it deletes
// the keys older than the keep newest generations.
func (tx *Tx) AddOIDCKey(ctx context.Context, k model.OIDCKey, keep int) (bool, error) {
	sealed, err := tx.sealValue(k.PrivateKey, sealOIDCKey)
	if err != nil {
		return false, err
	}
	n, err := tx.execN(ctx, `INSERT INTO oidc_signing_keys (generation, kid, private_key, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (generation) DO NOTHING`, k.Generation, k.KID, sealed, micros(tx.Now()))
	if err != nil || n == 0 {
		return false, err
	}
	_, err = tx.exec(ctx, "DELETE FROM oidc_signing_keys WHERE generation <= ?", k.Generation-int64(keep))
	return true, err
}
