// Package users holds the rules for accounts: creating, updating, listing,
// blocking and deleting users, their identities, status, preferences and
// custom attributes.
package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"quarry/internal/auth"
	"quarry/internal/gencache"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/uploads"
)

// Service answers every users question.
type Service struct {
	db           *store.DB
	uploads      *uploads.Store
	log          *slog.Logger
	passwordCost int
	now          func() time.Time
	projects     ProjectRemover
	groups       GroupRemover
	snippets     SnippetRemover
	settings     Settings
	// sessions remembers recent session reads (sessioncache.go); every
	// write of a user invalidates it.
	sessions *gencache.Cache[cachedSession]
	// dummyOnce makes dummyHash, which a sign-in of an unknown login
	// checks against (sessions.go).
	dummyOnce sync.Once
	dummyHash string
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings gives the service the instance's settings (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// ForgetSessions forgets every remembered session read, so the next
// request of each session reads it again: for what counts a request's
// statements, and for an operator's tool that changed the database
// behind the server's back.
func (s *Service) ForgetSessions() { s.sessions.Invalidate() }

// New returns a users service.
func New(db *store.DB, up *uploads.Store, log *slog.Logger, passwordCost int) *Service {
	s := &Service{db: db, uploads: up, log: log, passwordCost: passwordCost, now: db.Now, sessions: gencache.New[cachedSession](sessionCacheFor, maxCachedSessions)}
	// A user's row written by any code of this process (not only this
	// service's) forgets the cached sessions too.
	db.OnAuthWrite(s.sessions.Invalidate)
	return s
}

// Nullable is an optional attribute that may also be set to null.
type Nullable[T any] struct {
	Set   bool
	Value *T
}

// Attrs are the user attributes a create or update may carry; nil means
// "not given".
type Attrs struct {
	Email, Name, Username, Password                      *string
	Admin, External, CanCreateGroup, ViewDiffsFileByFile *bool
	PrivateProfile                                       Nullable[bool]
	Bio, Location, PublicEmail, CommitEmail              *string
	Skype, Linkedin, Twitter, Discord, WebsiteURL        *string
	Organization, JobTitle, Pronouns, Note               *string
	ProjectsLimit, ThemeID, ColorSchemeID                *int
	SharedRunnersMinutesLimit                            Nullable[int]
	ExtraSharedRunnersMinutesLimit                       Nullable[int]
	ExternUID, Provider                                  *string
	GroupIDForSAML                                       *int64
	Avatar                                               *uploads.File
	SkipReconfirmation                                   bool
}

// CreateInput is a new user. Password is required unless ResetPassword or
// ForceRandomPassword is set; those take priority.
type CreateInput struct {
	Attrs
	ResetPassword, ForceRandomPassword, SkipConfirmation bool
}

// ByID returns a user the actor may see, else 404 User Not Found.
func (s *Service) ByID(ctx context.Context, actor auth.Actor, id int64) (model.User, error) {
	u, err := s.db.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !auth.Can(actor, auth.ReadUser, auth.Resource{User: &u})) {
		return model.User{}, model.NotFound("User")
	}
	return u, err
}

// ByIDOrUsername resolves "12" or "alice" to a visible user.
func (s *Service) ByIDOrUsername(ctx context.Context, actor auth.Actor, ref string) (model.User, error) {
	u, err := s.db.UserByRef(ctx, ref)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !auth.Can(actor, auth.ReadUser, auth.Resource{User: &u})) {
		return model.User{}, model.NotFound("User")
	}
	return u, err
}

// WithIdentities loads the identities of users (for the admin view).
func (s *Service) WithIdentities(ctx context.Context, us []model.User) error {
	ids := make([]int64, len(us))
	for i := range us {
		ids[i] = us[i].ID
	}
	m, err := s.db.IdentitiesOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range us {
		us[i].Identities = m[us[i].ID]
	}
	return nil
}

// ListInput are the filters of GET /users.
type ListInput struct {
	model.UserFilter
}

// List returns one page of users the actor may list. Non-admins get the
// admin-only filters and orderings ignored, as GitLab does.
func (s *Service) List(ctx context.Context, actor auth.Actor, in ListInput, page model.Page) ([]model.User, model.PageInfo, error) {
	f, err := listFilter(actor, in)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListUsers(ctx, f, page)
}

// Head is a user of a list page by its versions: the user's and its
// creator's (CreatorID 0: none).
type Head struct {
	ID, EntityVersion         int64
	CreatedAt                 time.Time
	CreatorID, CreatorVersion int64
	CreatorCreatedAt          time.Time
}

// ListHeads is List by the users' heads (versions), one statement with
// the count: the caller takes the entities it keeps at those versions and
// reads the others (ByIDs, BasicsByIDs).
func (s *Service) ListHeads(ctx context.Context, actor auth.Actor, in ListInput, page model.Page) ([]Head, model.PageInfo, error) {
	f, err := listFilter(actor, in)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	hs, info, err := s.db.ListUserHeads(ctx, f, page)
	out := make([]Head, len(hs))
	for i, h := range hs {
		out[i] = Head(h)
	}
	return out, info, err
}

// ByIDs loads several users' whole rows.
func (s *Service) ByIDs(ctx context.Context, ids []int64) (map[int64]model.User, error) {
	return s.db.UsersByIDs(ctx, ids)
}

// BasicsByIDs loads several users' summaries (what a user summary shows,
// with the versions).
func (s *Service) BasicsByIDs(ctx context.Context, ids []int64) (map[int64]model.User, error) {
	return s.db.UserBasicsByIDs(ctx, ids)
}

// listFilter is the store's filter of a user list for actor.
func listFilter(actor auth.Actor, in ListInput) (model.UserFilter, error) {
	f := in.UserFilter
	if !actor.SignedIn() && f.Username == "" {
		return f, model.Forbidden("Not authorized to access /api/v4/users")
	}
	if f.Provider != "" && f.ExternUID != "" && !actor.Admin() {
		return f, model.Forbidden("")
	}
	if !actor.Admin() {
		f.VisibleStatesOnly = true
		f.OrderBy, f.Desc = "id", true
		f.CreatedAfter, f.CreatedBefore = nil, nil
		f.TwoFactor, f.WithoutProjects, f.Admins = "", false, false
		f.SAMLProviderID = nil
		f.CustomAttributes = nil
	}
	f.SearchEmails = actor.Admin()
	return f, nil
}

// Create makes a user (administrators only).
func (s *Service) Create(ctx context.Context, actor auth.Actor, in CreateInput) (model.User, error) {
	if !auth.Can(actor, auth.AdminUsers, auth.Resource{}) {
		return model.User{}, model.Forbidden("")
	}
	st := model.DefaultApplicationSettings()
	if s.settings != nil {
		var err error
		if st, err = s.settings.Current(ctx); err != nil {
			return model.User{}, err
		}
	}
	now := s.now().UTC()
	u := model.User{
		State: model.UserActive, Type: model.UserHuman, CanCreateGroup: st.CanCreateGroup, ProjectsLimit: int(min(st.DefaultProjectsLimit, 1<<31-1)),
		ThemeID: 1, ColorSchemeID: 1, CreatedAt: now, UpdatedAt: now, CreatedByID: ptr(actor.UserID()),
	}
	if in.SkipConfirmation {
		u.ConfirmedAt = &now
	}
	a := in.Attrs
	if in.ResetPassword || in.ForceRandomPassword {
		// The flags win over a given password: the account gets a random
		// one that nobody knows (a reset is required to sign in).
		random := auth.NewSecret("", 40)
		a.Password = &random
		u.PasswordExpiresAt = &now
	}
	var f model.FieldErrors
	if a.External == nil && st.UserDefaultExternal {
		// New users are external, unless their e-mail matches the
		// internal pattern.
		u.External = true
		if p := st.UserDefaultInternalRegex; p != nil && *p != "" && a.Email != nil {
			if re, err := regexp.Compile(*p); err == nil && re.MatchString(*a.Email) {
				u.External = false
			}
		}
	}
	s.apply(&f, &u, &a, true)
	// Report clashes the way GitLab does: 409 for another user's e-mail or
	// username, before any other validation message.
	if taken, err := s.db.EmailTaken(ctx, u.Email, 0); err != nil {
		return model.User{}, err
	} else if taken {
		return model.User{}, model.Conflict("Email has already been taken")
	}
	if taken, err := s.db.UsernameTaken(ctx, u.Username, 0); err != nil {
		return model.User{}, err
	} else if taken {
		return model.User{}, model.Conflict("Username has already been taken")
	}
	if err := s.checkNamespacePath(ctx, &f, u.Username, 0); err != nil {
		return model.User{}, err
	}
	if err := f.Err(); err != nil {
		return model.User{}, err
	}
	if err := s.hashPassword(&u, a.Password); err != nil {
		return model.User{}, err
	}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateUser(ctx, &u); err != nil {
			return err
		}
		return s.saveRelated(ctx, tx, &u, &a)
	})
	if err != nil {
		return model.User{}, s.mapWriteErr(err)
	}
	if a.Avatar != nil {
		if err := s.saveAvatar(ctx, &u, a.Avatar); err != nil {
			return model.User{}, err
		}
	}
	return s.reload(ctx, u.ID)
}

// Update changes a user (administrators only).
func (s *Service) Update(ctx context.Context, actor auth.Actor, id int64, a Attrs) (model.User, error) {
	if !auth.Can(actor, auth.AdminUsers, auth.Resource{}) {
		return model.User{}, model.Forbidden("")
	}
	u, err := s.db.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return model.User{}, model.NotFound("User")
	} else if err != nil {
		return model.User{}, err
	}
	if a.Email != nil {
		if taken, err := s.db.EmailTaken(ctx, *a.Email, u.ID); err != nil {
			return model.User{}, err
		} else if taken {
			return model.User{}, updateConflict("Email has already been taken")
		}
	}
	if a.Username != nil {
		if taken, err := s.db.UsernameTaken(ctx, *a.Username, u.ID); err != nil {
			return model.User{}, err
		} else if taken {
			return model.User{}, updateConflict("Username has already been taken")
		}
	}
	now := s.now().UTC()
	var f model.FieldErrors
	oldUsername := u.Username
	s.apply(&f, &u, &a, false)
	if a.Username != nil && !strings.EqualFold(*a.Username, oldUsername) {
		if err := s.checkNamespacePath(ctx, &f, u.Username, u.NamespaceID); err != nil {
			return model.User{}, err
		}
	}
	if err := f.Err(); err != nil {
		return model.User{}, err
	}
	if a.Password != nil {
		if err := s.hashPassword(&u, a.Password); err != nil {
			return model.User{}, err
		}
		if !actor.Is(u.ID) {
			// An administrator set it: the owner must change it at next sign-in.
			u.PasswordExpiresAt = &now
		}
	}
	u.UpdatedAt = now
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateUser(ctx, &u); err != nil {
			return err
		}
		return s.saveRelated(ctx, tx, &u, &a)
	})
	s.sessions.Invalidate()
	if err != nil {
		return model.User{}, s.mapWriteErr(err)
	}
	if a.Avatar != nil {
		if err := s.saveAvatar(ctx, &u, a.Avatar); err != nil {
			return model.User{}, err
		}
	}
	return s.reload(ctx, u.ID)
}

// updateConflict reports an update that clashes with another user. The
// spec states that such conflicts of PUT /users/:id answer 404 (not 409 as
// on create); the message still says what clashed.
func updateConflict(msg string) error {
	return &model.Error{Kind: model.KindNotFound, Message: msg, Raw: true}
}

// apply copies the given attributes onto u and validates them.
func (s *Service) apply(f *model.FieldErrors, u *model.User, a *Attrs, creating bool) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	if a.Email != nil {
		e := strings.TrimSpace(*a.Email)
		a.Email = &e
		if creating || a.SkipReconfirmation {
			u.Email, u.UnconfirmedEmail = e, ""
			if !creating {
				now := s.now().UTC()
				u.ConfirmedAt = &now
				// Addresses that pointed at the old e-mail are no longer the
				// user's: GitLab clears them.
				if a.PublicEmail == nil && !strings.EqualFold(u.PublicEmail, e) {
					u.PublicEmail = ""
				}
				if a.CommitEmail == nil && u.CommitEmail != "_private" && !strings.EqualFold(u.CommitEmail, e) {
					u.CommitEmail = ""
				}
			}
		} else if !strings.EqualFold(e, u.Email) {
			// Like GitLab: a changed address waits for confirmation and the
			// old one stays primary until then.
			u.UnconfirmedEmail = e
		}
	}
	set(&u.Name, a.Name)
	set(&u.Username, a.Username)
	set(&u.Bio, a.Bio)
	set(&u.Location, a.Location)
	set(&u.PublicEmail, a.PublicEmail)
	set(&u.CommitEmail, a.CommitEmail)
	set(&u.Skype, a.Skype)
	set(&u.Linkedin, a.Linkedin)
	set(&u.Twitter, a.Twitter)
	set(&u.Discord, a.Discord)
	set(&u.WebsiteURL, a.WebsiteURL)
	set(&u.Organization, a.Organization)
	set(&u.JobTitle, a.JobTitle)
	set(&u.Pronouns, a.Pronouns)
	set(&u.Note, a.Note)
	if a.Admin != nil {
		u.Admin = *a.Admin
	}
	if a.External != nil {
		u.External = *a.External
		if creating && u.External && a.CanCreateGroup == nil {
			u.CanCreateGroup = false
		}
	}
	if a.CanCreateGroup != nil {
		u.CanCreateGroup = *a.CanCreateGroup
	}
	if a.PrivateProfile.Set {
		// null means the instance default, which is a public profile.
		u.PrivateProfile = a.PrivateProfile.Value != nil && *a.PrivateProfile.Value
	}
	if a.ProjectsLimit != nil {
		u.ProjectsLimit = *a.ProjectsLimit
	}
	if a.ThemeID != nil {
		u.ThemeID = *a.ThemeID
	}
	if a.ColorSchemeID != nil {
		u.ColorSchemeID = *a.ColorSchemeID
	}
	if a.SharedRunnersMinutesLimit.Set {
		u.SharedRunnersMinutesLimit = a.SharedRunnersMinutesLimit.Value
	}
	if a.ExtraSharedRunnersMinutesLimit.Set {
		u.ExtraSharedRunnersMinutesLimit = a.ExtraSharedRunnersMinutesLimit.Value
	}
	validate(f, a, u)
	if a.Avatar != nil {
		for _, m := range uploads.ValidateAvatar(a.Avatar) {
			f.Add("avatar", m)
		}
	}
	if creating && a.Password == nil {
		f.Add("password", "can't be blank")
	}
}

// checkNamespacePath reports a username that a group already uses as its
// path: GitLab answers that with a validation error, not a conflict.
func (s *Service) checkNamespacePath(ctx context.Context, f *model.FieldErrors, username string, exceptNamespace int64) error {
	if username == "" {
		return nil
	}
	taken, err := s.db.TopLevelPathTaken(ctx, username, exceptNamespace)
	if err != nil {
		return err
	}
	if taken {
		f.Add("username", "has already been taken")
	}
	return nil
}

func (s *Service) hashPassword(u *model.User, password *string) error {
	if password == nil {
		return nil
	}
	h, err := auth.HashPassword(*password, s.passwordCost)
	if err != nil {
		return err
	}
	u.PasswordHash = h
	return nil
}

// saveRelated writes what lives beside the users row: the identity and the
// diff preference.
func (s *Service) saveRelated(ctx context.Context, tx *store.Tx, u *model.User, a *Attrs) error {
	if a.Provider != nil && a.ExternUID != nil {
		var saml *int64
		if a.GroupIDForSAML != nil {
			saml = a.GroupIDForSAML
		}
		if err := tx.SetIdentity(ctx, model.Identity{UserID: u.ID, Provider: *a.Provider, ExternUID: *a.ExternUID, SAMLProviderID: saml}); err != nil {
			return err
		}
	}
	if a.ViewDiffsFileByFile != nil {
		p, err := tx.UserPreferences(ctx, u.ID)
		if err != nil {
			return err
		}
		p.ViewDiffsFileByFile = *a.ViewDiffsFileByFile
		return tx.UpdateUserPreferences(ctx, p)
	}
	return nil
}

func (s *Service) saveAvatar(ctx context.Context, u *model.User, f *uploads.File) error {
	rel, err := s.uploads.Save(fmt.Sprintf("user/avatar/%d", u.ID), f)
	if err != nil {
		return err
	}
	defer s.sessions.Invalidate()
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.UserByID(ctx, u.ID)
		if err != nil {
			return err
		}
		cur.Avatar = rel
		return tx.UpdateUser(ctx, &cur)
	})
}

// mapWriteErr turns unique-index races into the answers GitLab gives.
func (s *Service) mapWriteErr(err error) error {
	switch {
	case store.IsUnique(err, store.UniqueEmail):
		return model.Conflict("Email has already been taken")
	case store.IsUnique(err, store.UniqueUsername):
		return model.Conflict("Username has already been taken")
	case store.IsUnique(err, store.UniqueTopPath), store.IsUnique(err, store.UniqueFullPath):
		return model.Invalid("username", "has already been taken")
	case store.IsUnique(err, store.UniqueIdentity):
		return model.Invalid("identities", "is invalid")
	}
	return err
}

func (s *Service) reload(ctx context.Context, id int64) (model.User, error) {
	u, err := s.db.UserByID(ctx, id)
	if err != nil {
		return u, err
	}
	us := []model.User{u}
	err = s.WithIdentities(ctx, us)
	return us[0], err
}

func ptr[T any](v T) *T { return &v }

// Creators loads the users who created the given users (admin view).
func (s *Service) Creators(ctx context.Context, us []model.User) (map[int64]model.User, error) {
	var ids []int64
	for _, u := range us {
		if u.CreatedByID != nil {
			ids = append(ids, *u.CreatedByID)
		}
	}
	return s.db.UsersByIDs(ctx, ids)
}

// Basics loads several users by id (for embedded user summaries).
func (s *Service) Basics(ctx context.Context, ids []int64) (map[int64]model.User, error) {
	return s.db.UsersByIDs(ctx, ids)
}

// CheckPassword authenticates a username and password (git over HTTP).
// Blocked and deactivated accounts are refused with a 403 reason.
func (s *Service) CheckPassword(ctx context.Context, username, password string) (model.User, error) {
	u, err := s.db.UserByUsername(ctx, username)
	if err != nil || !auth.CheckPassword(u.PasswordHash, password) {
		return model.User{}, model.Unauthorized("")
	}
	if u.State.IsBlocked() {
		return u, model.ForbiddenRaw("Your account has been blocked.")
	}
	if u.State == model.UserDeactivated {
		return u, model.ForbiddenRaw("Your account has been deactivated by your administrator. Please log back in to reactivate your account.")
	}
	return u, nil
}
