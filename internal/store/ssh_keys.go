package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// UniqueSSHKeyFingerprint is the index that keeps a key to one user or one
// deploy key.
const UniqueSSHKeyFingerprint = "ssh_keys_fingerprint_sha256_key"

const sshKeyColumns = "k.id, k.kind, k.user_id, k.creator_id, k.public, k.title, k.key_text, k.key_type, k.bits, " +
	"k.fingerprint_md5, k.fingerprint_sha256, k.usage_type, k.expires_at, k.last_used_at, k.created_at, k.updated_at"

func sshKeyDest(k *model.SSHKey, kind *string, user, creator *sql.NullInt64) []any {
	return []any{&k.ID, kind, user, creator, &k.Public, &k.Title, &k.Key, &k.Type, &k.Bits,
		&k.FingerprintMD5, &k.FingerprintSHA256, &k.Usage, nullTSScan{&k.ExpiresAt}, nullTSScan{&k.LastUsedAt},
		tsScan{&k.CreatedAt}, tsScan{&k.UpdatedAt}}
}

func finishSSHKey(k *model.SSHKey, kind string, user, creator sql.NullInt64) {
	k.Deploy = kind == "deploy"
	if k.Deploy {
		k.UserID = creator.Int64
	} else {
		k.UserID = user.Int64
	}
}

func scanSSHKey(rows *sql.Rows) (model.SSHKey, error) {
	var k model.SSHKey
	var kind string
	var user, creator sql.NullInt64
	err := rows.Scan(sshKeyDest(&k, &kind, &user, &creator)...)
	finishSSHKey(&k, kind, user, creator)
	return k, err
}

func (tx *Tx) sshKeyRow(ctx context.Context, cond string, args ...any) (model.SSHKey, error) {
	var k model.SSHKey
	var kind string
	var user, creator sql.NullInt64
	err := tx.row(ctx, sshKeyDest(&k, &kind, &user, &creator), "SELECT "+sshKeyColumns+" FROM ssh_keys k WHERE "+cond, args...)
	finishSSHKey(&k, kind, user, creator)
	return k, err
}

// CreateSSHKey inserts k and sets its id and times; a key whose
// fingerprint another key has is a *UniqueError on
// UniqueSSHKeyFingerprint.
func (tx *Tx) CreateSSHKey(ctx context.Context, k *model.SSHKey) error {
	now := tx.Now()
	k.CreatedAt, k.UpdatedAt = now, now
	kind, user, creator := "user", zeroNull(k.UserID), any(nil)
	if k.Deploy {
		kind, user, creator = "deploy", nil, zeroNull(k.UserID)
	}
	var err error
	k.ID, err = tx.insert(ctx, `INSERT INTO ssh_keys (kind, user_id, creator_id, public, title, key_text, key_type, bits,
		fingerprint_md5, fingerprint_sha256, usage_type, expires_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		kind, user, creator, k.Public, k.Title, k.Key, k.Type, k.Bits, k.FingerprintMD5, k.FingerprintSHA256,
		string(k.Usage), nullMicros(k.ExpiresAt), micros(now), micros(now))
	return err
}

// SSHKeyByID returns a key of either kind, or model.ErrNotFound.
func (tx *Tx) SSHKeyByID(ctx context.Context, id int64) (model.SSHKey, error) {
	return tx.sshKeyRow(ctx, "k.id = ?", id)
}

// UserSSHKey returns the key id of user userID, or model.ErrNotFound.
func (tx *Tx) UserSSHKey(ctx context.Context, userID, id int64) (model.SSHKey, error) {
	return tx.sshKeyRow(ctx, "k.id = ? AND k.user_id = ? AND k.kind = 'user'", id, userID)
}

// DeployKeyByID returns the deploy key id, or model.ErrNotFound.
func (tx *Tx) DeployKeyByID(ctx context.Context, id int64) (model.SSHKey, error) {
	return tx.sshKeyRow(ctx, "k.id = ? AND k.kind = 'deploy'", id)
}

// SSHKeyBySHA256 returns the key with the fingerprint (unpadded base64,
// no prefix), or model.ErrNotFound: one unique-index lookup.
func (tx *Tx) SSHKeyBySHA256(ctx context.Context, fp string) (model.SSHKey, error) {
	return tx.sshKeyRow(ctx, "k.fingerprint_sha256 = ?", fp)
}

// SSHKeyByMD5 returns the first key with the MD5 fingerprint (colon hex),
// or model.ErrNotFound.
func (tx *Tx) SSHKeyByMD5(ctx context.Context, fp string) (model.SSHKey, error) {
	return tx.sshKeyRow(ctx, "k.fingerprint_md5 = ? ORDER BY k.id LIMIT 1", fp)
}

// ListUserSSHKeys returns one page of a user's keys, oldest first.
func (tx *Tx) ListUserSSHKeys(ctx context.Context, userID int64, page model.Page) ([]model.SSHKey, model.PageInfo, error) {
	var w where
	w.add("k.user_id = ?", userID)
	w.add("k.kind = 'user'")
	return list(ctx, tx, listSpec[model.SSHKey]{
		columns: sshKeyColumns, from: "ssh_keys k", idCol: "k.id", where: w, scan: scanSSHKey,
		keyOf: func(k model.SSHKey) (any, int64) { return k.ID, k.ID },
	}, page)
}

// ListDeployKeys returns one page of all deploy keys (only the public
// ones when publicOnly), oldest first.
func (tx *Tx) ListDeployKeys(ctx context.Context, publicOnly bool, page model.Page) ([]model.SSHKey, model.PageInfo, error) {
	var w where
	w.add("k.kind = 'deploy'")
	if publicOnly {
		w.add("k.public = ?", true)
	}
	return list(ctx, tx, listSpec[model.SSHKey]{
		columns: sshKeyColumns, from: "ssh_keys k", idCol: "k.id", where: w, scan: scanSSHKey,
		keyOf: func(k model.SSHKey) (any, int64) { return k.ID, k.ID },
	}, page)
}

// DeleteSSHKey removes a key (a deploy key with its projects' links);
// model.ErrNotFound when it is gone.
func (tx *Tx) DeleteSSHKey(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM ssh_keys WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// SetSSHKeyTitle renames a key.
func (tx *Tx) SetSSHKeyTitle(ctx context.Context, id int64, title string) error {
	n, err := tx.execN(ctx, "UPDATE ssh_keys SET title = ?, updated_at = ? WHERE id = ?", title, micros(tx.Now()), id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// TouchSSHKey records that a key was used at, unless it was recorded
// after since already (the SSH server writes at most once a period).
func (tx *Tx) TouchSSHKey(ctx context.Context, id int64, at, since int64) error {
	_, err := tx.exec(ctx, "UPDATE ssh_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", at, id, since)
	return err
}

const deployKeyProjectColumns = "dp.id, dp.project_id, dp.can_push, dp.created_at, dp.updated_at, " + sshKeyColumns

func scanDeployKeyProject(rows *sql.Rows) (model.DeployKeyProject, error) {
	var d model.DeployKeyProject
	var kind string
	var user, creator sql.NullInt64
	dest := append([]any{&d.ID, &d.ProjectID, &d.CanPush, tsScan{&d.CreatedAt}, tsScan{&d.UpdatedAt}},
		sshKeyDest(&d.Key, &kind, &user, &creator)...)
	err := rows.Scan(dest...)
	finishSSHKey(&d.Key, kind, user, creator)
	return d, err
}

const deployKeyProjectFrom = "deploy_keys_projects dp JOIN ssh_keys k ON k.id = dp.deploy_key_id"

// ListProjectDeployKeys returns one page of the deploy keys enabled on a
// project, in the order they were enabled.
func (tx *Tx) ListProjectDeployKeys(ctx context.Context, projectID int64, page model.Page) ([]model.DeployKeyProject, model.PageInfo, error) {
	var w where
	w.add("dp.project_id = ?", projectID)
	return list(ctx, tx, listSpec[model.DeployKeyProject]{
		columns: deployKeyProjectColumns, from: deployKeyProjectFrom, countFrom: "deploy_keys_projects dp",
		idCol: "dp.id", where: w, scan: scanDeployKeyProject,
		keyOf: func(d model.DeployKeyProject) (any, int64) { return d.ID, d.ID },
	}, page)
}

func (tx *Tx) deployKeyProjects(ctx context.Context, cond string, args ...any) ([]model.DeployKeyProject, error) {
	var out []model.DeployKeyProject
	err := tx.each(ctx, "SELECT "+deployKeyProjectColumns+" FROM "+deployKeyProjectFrom+" WHERE "+cond, args, func(r *sql.Rows) error {
		d, err := scanDeployKeyProject(r)
		out = append(out, d)
		return err
	})
	return out, err
}

// ProjectDeployKey returns deploy key keyID as enabled on a project, or
// model.ErrNotFound.
func (tx *Tx) ProjectDeployKey(ctx context.Context, projectID, keyID int64) (model.DeployKeyProject, error) {
	out, err := tx.deployKeyProjects(ctx, "dp.project_id = ? AND dp.deploy_key_id = ?", projectID, keyID)
	if err == nil && len(out) == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.DeployKeyProject{}, err
	}
	return out[0], nil
}

// DeployKeyLinks returns the projects (at most limit) each of keyIDs is
// enabled on, oldest link first, by key id.
func (tx *Tx) DeployKeyLinks(ctx context.Context, keyIDs []int64, limit int) (map[int64][]model.DeployKeyProject, error) {
	out := map[int64][]model.DeployKeyProject{}
	if len(keyIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(keyIDs))
	for i, id := range keyIDs {
		args[i] = id
	}
	// At most limit rows a key are read, however many projects have it.
	args = append(args, limit)
	err := tx.each(ctx, `SELECT id, deploy_key_id, project_id, can_push FROM (
		SELECT dp.id, dp.deploy_key_id, dp.project_id, dp.can_push,
			ROW_NUMBER() OVER (PARTITION BY dp.deploy_key_id ORDER BY dp.id) AS n
		FROM deploy_keys_projects dp WHERE dp.deploy_key_id IN (`+placeholders(len(keyIDs))+`)) links
		WHERE n <= ? ORDER BY id`, args, func(r *sql.Rows) error {
		var d model.DeployKeyProject
		if err := r.Scan(&d.ID, &d.Key.ID, &d.ProjectID, &d.CanPush); err != nil {
			return err
		}
		out[d.Key.ID] = append(out[d.Key.ID], d)
		return nil
	})
	return out, err
}

// EnableDeployKey links a deploy key to a project; a link that exists is
// a *UniqueError.
func (tx *Tx) EnableDeployKey(ctx context.Context, projectID, keyID int64, canPush bool) error {
	now := micros(tx.Now())
	_, err := tx.insert(ctx, "INSERT INTO deploy_keys_projects (deploy_key_id, project_id, can_push, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
		keyID, projectID, canPush, now, now)
	return err
}

// SetDeployKeyCanPush changes whether a deploy key may push to a project.
func (tx *Tx) SetDeployKeyCanPush(ctx context.Context, projectID, keyID int64, canPush bool) error {
	n, err := tx.execN(ctx, "UPDATE deploy_keys_projects SET can_push = ?, updated_at = ? WHERE project_id = ? AND deploy_key_id = ?",
		canPush, micros(tx.Now()), projectID, keyID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// DisableDeployKey unlinks a deploy key from a project and reports how
// many projects still have it; model.ErrNotFound when it was not linked.
func (tx *Tx) DisableDeployKey(ctx context.Context, projectID, keyID int64) (int, error) {
	n, err := tx.execN(ctx, "DELETE FROM deploy_keys_projects WHERE project_id = ? AND deploy_key_id = ?", projectID, keyID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	var left int
	err = tx.row(ctx, []any{&left}, "SELECT COUNT(*) FROM deploy_keys_projects WHERE deploy_key_id = ?", keyID)
	return left, err
}
