package keys

import (
	"context"
	"errors"
	"strings"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// lastUsedPeriod is how often a key's last_used_at is written at most
// (GitLab's Keys::LastUsedService: once a day).
const lastUsedPeriod = 24 * time.Hour

// Holder is who a key authenticates: its user (for a user's key) or the
// deploy key itself.
type Holder struct {
	Key  model.SSHKey
	User *model.User
}

// errRefused is the one answer to a key that may not sign in: the SSH
// server tells the client no more than "Permission denied".
var errRefused = errors.New("key refused")

// Authenticate finds the key with a SHA256 fingerprint (unpadded
// base64, one indexed lookup) for the SSH server: refused when unknown,
// expired, a signing-only key, or a key of a user who may not sign in
// (blocked, deactivated, …). The client has not proven it holds the key
// yet: Used records its use once it has.
func (s *Service) Authenticate(ctx context.Context, sha256 string) (Holder, error) {
	k, err := s.db.SSHKeyBySHA256(ctx, sha256)
	if errors.Is(err, model.ErrNotFound) {
		return Holder{}, errRefused
	}
	if err != nil {
		return Holder{}, err
	}
	now := s.db.Now()
	if k.Expired(now) || !k.Usage.Authenticates() {
		return Holder{}, errRefused
	}
	h := Holder{Key: k}
	if !k.Deploy {
		u, err := s.db.UserByID(ctx, k.UserID)
		if errors.Is(err, model.ErrNotFound) {
			return Holder{}, errRefused
		}
		if err != nil {
			return Holder{}, err
		}
		if u.State != model.UserActive {
			return Holder{}, errRefused
		}
		h.User = &u
	}
	return h, nil
}

// Used records that a key signed in now (last_used_at, written at most
// once a day, as GitLab's Keys::LastUsedService).
func (s *Service) Used(ctx context.Context, keyID int64) error {
	now := s.db.Now()
	k, err := s.db.SSHKeyByID(ctx, keyID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // removed meanwhile
	}
	if err != nil || (k.LastUsedAt != nil && now.Sub(*k.LastUsedAt) < lastUsedPeriod) {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		return tx.TouchSSHKey(ctx, keyID, now.UnixMicro(), now.Add(-lastUsedPeriod).UnixMicro())
	})
}

// IsRefused reports whether Authenticate refused a key (rather than
// failing).
func IsRefused(err error) bool { return errors.Is(err, errRefused) }

// DeployKeyAccess returns the project at fullPath if deploy key keyID is
// enabled on it, whether it may push there and the key's creator;
// model.ErrNotFound otherwise (gitaccess.DeployKeys).
func (s *Service) DeployKeyAccess(ctx context.Context, keyID int64, fullPath string) (model.Project, bool, int64, error) {
	if !strings.Contains(fullPath, "/") {
		return model.Project{}, false, 0, model.ErrNotFound // a bare number names no project by path
	}
	p, err := s.db.ProjectByFullPath(ctx, fullPath)
	if err != nil {
		return p, false, 0, err
	}
	if p.PendingDelete {
		return p, false, 0, model.ErrNotFound
	}
	d, err := s.db.ProjectDeployKey(ctx, p.ID, keyID)
	if err != nil {
		return p, false, 0, err
	}
	if d.Key.Expired(s.db.Now()) {
		return p, false, 0, model.ErrNotFound
	}
	return p, d.CanPush, d.Key.UserID, nil
}
