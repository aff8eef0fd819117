// Package keys keeps SSH public keys: users' keys (GitLab's Key) and
// deploy keys (DeployKey) enabled on projects, with GitLab's validation —
// a readable key of a type and size the application settings allow, one
// owner per key (its SHA256 fingerprint is unique), a title, an expiry
// not yet passed — and the lookups the API and the SSH server make.
package keys

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Users resolves users the caller may see (the users service).
type Users interface {
	ByIDOrUsername(ctx context.Context, actor auth.Actor, ref string) (model.User, error)
}

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
}

// Settings give the application settings in effect (the key
// restrictions).
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Service answers every key question.
type Service struct {
	db       *store.DB
	users    Users
	projects Projects
	settings Settings
}

// New returns the keys service.
func New(db *store.DB, users Users, projects Projects, settings Settings) *Service {
	return &Service{db: db, users: users, projects: projects, settings: settings}
}

// MaxTitleLength bounds a key's title, as GitLab's Key model does.
const MaxTitleLength = 255

// maxLinks bounds the projects read per deploy key (the admin list's
// project arrays, the check that a key is accessible).
const maxLinks = 100

// Input is a new key.
type Input struct {
	Title     string
	Key       string
	ExpiresAt *time.Time
	// Usage is the usage type; "" is auth_and_signing.
	Usage model.KeyUsage
}

var errDeployKeyNotFound = model.NotFound("Deploy key")

// restriction is the application setting for a key family: 0 any size,
// -1 forbidden, else the minimum bits. An unknown family is forbidden.
func restriction(st model.ApplicationSettings, family string) int64 {
	switch family {
	case "rsa":
		return st.RSAKeyRestriction
	case "dsa":
		return st.DSAKeyRestriction
	case "ecdsa":
		return st.ECDSAKeyRestriction
	case "ed25519":
		return st.Ed25519KeyRestriction
	case "ecdsa_sk":
		return st.ECDSASKKeyRestriction
	case "ed25519_sk":
		return st.Ed25519SKKeyRestriction
	}
	return -1
}

// forbiddenMessage is GitLab's message for a key of a type the settings
// forbid (or of no type it could read): the allowed types, upper case.
func forbiddenMessage(st model.ApplicationSettings) string {
	var allowed []string
	for _, t := range Types {
		if restriction(st, t) != -1 {
			allowed = append(allowed, strings.ToUpper(t))
		}
	}
	return "type is forbidden. Must be " + exclusiveSentence(allowed)
}

// exclusiveSentence joins words as "a, b, or c" (Gitlab::Sentence).
func exclusiveSentence(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	case 2:
		return words[0] + " or " + words[1]
	}
	return strings.Join(words[:len(words)-1], ", ") + ", or " + words[len(words)-1]
}

// build validates in into a key as GitLab's Key model does, every
// problem at once; prefix names the fields ("deploy_key." when the key is
// created through its project link). A fingerprint another key has is
// found by the insert (taken).
func (s *Service) build(ctx context.Context, in Input, prefix string) (model.SSHKey, model.FieldErrors, error) {
	st, err := s.settings.Current(ctx)
	if err != nil {
		return model.SSHKey{}, nil, err
	}
	var f model.FieldErrors
	title := in.Title
	switch {
	case strings.TrimSpace(title) == "":
		f.Add(prefix+"title", "can't be blank")
	case utf8.RuneCountInString(title) > MaxTitleLength:
		f.Add(prefix+"title", fmt.Sprintf("is too long (maximum is %d characters)", MaxTitleLength))
	}
	p := Parse(in.Key)
	field := prefix + "key"
	if p.Text == "" {
		f.Add(field, "can't be blank")
	}
	switch r := restriction(st, p.Type); {
	case !p.Valid() || r == -1:
		f.Add(field, forbiddenMessage(st))
	case int64(p.Bits) < r:
		f.Add(field, "must be at least "+strconv.FormatInt(r, 10)+" bits")
	}
	if utf8.RuneCountInString(p.Text) > MaxKeyLength {
		f.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", MaxKeyLength))
	}
	if !KnownAlgorithmPrefix(p.Text) {
		f.Add(field, "is invalid")
	}
	if !p.Valid() {
		f.Add(prefix+"fingerprint_sha256", "cannot be generated")
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(s.db.Now()) {
		f.Add(field, "has expired")
	}
	usage := in.Usage
	if usage == "" {
		usage = model.KeyUsageAuthAndSigning
	}
	k := model.SSHKey{Title: title, Key: p.Text, Type: p.Type, Bits: p.Bits, FingerprintMD5: p.MD5,
		FingerprintSHA256: p.SHA256, Usage: usage, ExpiresAt: in.ExpiresAt}
	return k, f, nil
}

// insert stores k, reporting a fingerprint another key has as GitLab's
// uniqueness error.
func insert(ctx context.Context, tx *store.Tx, k *model.SSHKey, prefix string) error {
	if _, err := tx.SSHKeyBySHA256(ctx, k.FingerprintSHA256); err == nil {
		return model.Invalid(prefix+"fingerprint_sha256", "has already been taken")
	} else if !errors.Is(err, model.ErrNotFound) {
		return err
	}
	err := tx.CreateSSHKey(ctx, k)
	if store.IsUnique(err, store.UniqueSSHKeyFingerprint) || errors.Is(err, model.ErrConflict) {
		return model.Invalid(prefix+"fingerprint_sha256", "has already been taken")
	}
	return err
}

// user resolves the user whose keys a caller asks for: visible users for
// reads; for writes, the caller itself or, for administrators, anyone.
func (s *Service) user(ctx context.Context, a auth.Actor, ref string) (model.User, error) {
	return s.users.ByIDOrUsername(ctx, a, ref)
}

// adminUser resolves a user by id for an administrator's write (403 for
// others, before the user is looked up, as GitLab's
// authenticated_as_admin!).
func (s *Service) adminUser(ctx context.Context, a auth.Actor, id int64) (model.User, error) {
	if !a.Admin() {
		return model.User{}, model.Forbidden("")
	}
	u, err := s.db.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return model.User{}, model.NotFound("User")
	}
	return u, err
}

// ListOwn lists the caller's keys.
func (s *Service) ListOwn(ctx context.Context, a auth.Actor, page model.Page) ([]model.SSHKey, model.PageInfo, error) {
	if !a.SignedIn() {
		return nil, model.PageInfo{}, model.Unauthorized("")
	}
	return s.db.ListUserSSHKeys(ctx, a.UserID(), page)
}

// ListOf lists the keys of a user the caller may see ("id" or
// username), and gives the user.
func (s *Service) ListOf(ctx context.Context, a auth.Actor, ref string, page model.Page) (model.User, []model.SSHKey, model.PageInfo, error) {
	u, err := s.user(ctx, a, ref)
	if err != nil {
		return u, nil, model.PageInfo{}, err
	}
	list, info, err := s.db.ListUserSSHKeys(ctx, u.ID, page)
	return u, list, info, err
}

// GetOwn returns one of the caller's keys.
func (s *Service) GetOwn(ctx context.Context, a auth.Actor, id int64) (model.SSHKey, error) {
	if !a.SignedIn() {
		return model.SSHKey{}, model.Unauthorized("")
	}
	k, err := s.db.UserSSHKey(ctx, a.UserID(), id)
	return k, model.NotFoundAs(err, "Key")
}

// GetOf returns one key of a user the caller may see, and the user.
func (s *Service) GetOf(ctx context.Context, a auth.Actor, ref string, id int64) (model.User, model.SSHKey, error) {
	u, err := s.user(ctx, a, ref)
	if err != nil {
		return u, model.SSHKey{}, err
	}
	k, err := s.db.UserSSHKey(ctx, u.ID, id)
	return u, k, model.NotFoundAs(err, "Key")
}

// CreateOwn adds a key to the caller's account.
func (s *Service) CreateOwn(ctx context.Context, a auth.Actor, in Input) (model.SSHKey, error) {
	if !a.SignedIn() {
		return model.SSHKey{}, model.Unauthorized("")
	}
	return s.create(ctx, a.UserID(), in)
}

// CreateFor adds a key to a user's account (administrators), and gives
// the user.
func (s *Service) CreateFor(ctx context.Context, a auth.Actor, userID int64, in Input) (model.User, model.SSHKey, error) {
	u, err := s.adminUser(ctx, a, userID)
	if err != nil {
		return u, model.SSHKey{}, err
	}
	k, err := s.create(ctx, u.ID, in)
	return u, k, err
}

func (s *Service) create(ctx context.Context, userID int64, in Input) (model.SSHKey, error) {
	k, f, err := s.build(ctx, in, "")
	if err != nil {
		return model.SSHKey{}, err
	}
	if err := f.Err(); err != nil {
		return model.SSHKey{}, err
	}
	k.UserID = userID
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return insert(ctx, tx, &k, "") })
	return k, err
}

// DeleteOwn removes one of the caller's keys.
func (s *Service) DeleteOwn(ctx context.Context, a auth.Actor, id int64) error {
	if !a.SignedIn() {
		return model.Unauthorized("")
	}
	return s.deleteUserKey(ctx, a.UserID(), id)
}

// DeleteFor removes a key of a user (administrators).
func (s *Service) DeleteFor(ctx context.Context, a auth.Actor, userID, id int64) error {
	u, err := s.adminUser(ctx, a, userID)
	if err != nil {
		return err
	}
	return s.deleteUserKey(ctx, u.ID, id)
}

func (s *Service) deleteUserKey(ctx context.Context, userID, id int64) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.UserSSHKey(ctx, userID, id); err != nil {
			return model.NotFoundAs(err, "Key")
		}
		return model.NotFoundAs(tx.DeleteSSHKey(ctx, id), "Key")
	})
}

// WithUser is a key with the user it belongs to (a deploy key: its
// creator; ok false when there is none).
type WithUser struct {
	model.SSHKey
	User    model.User
	HasUser bool
}

func (s *Service) withUser(ctx context.Context, k model.SSHKey) (WithUser, error) {
	out := WithUser{SSHKey: k}
	if k.UserID == 0 {
		return out, nil
	}
	u, err := s.db.UserByID(ctx, k.UserID)
	if errors.Is(err, model.ErrNotFound) {
		return out, nil
	}
	out.User, out.HasUser = u, err == nil
	return out, err
}

// ByID returns any key with its user (administrators; GitLab's
// GET /keys/:id).
func (s *Service) ByID(ctx context.Context, a auth.Actor, id int64) (WithUser, error) {
	if !a.Admin() {
		return WithUser{}, model.Forbidden("")
	}
	k, err := s.db.SSHKeyByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return WithUser{}, model.RecordNotFound()
	}
	if err != nil {
		return WithUser{}, err
	}
	return s.withUser(ctx, k)
}

// ByFingerprint finds a key of either kind by its SHA256 ("SHA256:…") or
// MD5 fingerprint (administrators).
func (s *Service) ByFingerprint(ctx context.Context, a auth.Actor, fingerprint string) (WithUser, error) {
	if !a.Admin() {
		return WithUser{}, model.Forbidden("")
	}
	fp, ok := ParseFingerprint(fingerprint)
	if !ok {
		return WithUser{}, model.BadRequestRaw("Failed to return the key")
	}
	var k model.SSHKey
	var err error
	if fp.SHA256 {
		k, err = s.db.SSHKeyBySHA256(ctx, fp.Value)
	} else {
		k, err = s.db.SSHKeyByMD5(ctx, fp.Value)
	}
	if err != nil {
		return WithUser{}, model.NotFoundAs(err, "Key")
	}
	return s.withUser(ctx, k)
}
