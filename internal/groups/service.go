// Package groups holds the rules for groups and subgroups and for the
// namespaces API: creating, reading, listing, updating, transferring and
// deleting groups, with paths, visibility and permissions checked.
package groups

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
	"quarry/internal/uploads"
)

// Service answers every group question.
type Service struct {
	db      *store.DB
	uploads *uploads.Store
	log     *slog.Logger
	now     func() time.Time
	// DeletionDelay is how long a deleted group stays marked before it
	// goes, until SetSettings gives the instance's settings.
	DeletionDelay time.Duration
	remover       ProjectRemover
	removed       []func(ctx context.Context, groupID int64) error
	settings      Settings
	moves         StorageMoves
}

// StorageMoves are the repository storage moves (the storage moves
// service): the storage of a new group's wiki and the write leases a
// move waits for.
type StorageMoves interface {
	PickStorage(ctx context.Context) (string, error)
	BeginWrite(ctx context.Context, kind model.ContainerKind, id int64) (storage string, end func(), err error)
}

// SetStorageMoves gives the service the storage moves (before use):
// without them new groups keep their wiki on the default storage and
// nothing leases writes.
func (s *Service) SetStorageMoves(m StorageMoves) { s.moves = m }

// BeginWrite registers a write to g's wiki: refused with
// model.ErrRepositoryReadOnly while a storage move holds it, else g's
// storage is set to where it is now and end must be called once the
// write is over. It must not be called inside a transaction.
func (s *Service) BeginWrite(ctx context.Context, g *model.Group) (end func(), err error) {
	if s.moves == nil {
		if g.RepositoryReadOnly {
			return nil, model.ErrRepositoryReadOnly
		}
		return func() {}, nil
	}
	storage, end, err := s.moves.BeginWrite(ctx, model.ContainerGroup, g.ID)
	if err != nil {
		return nil, model.NotFoundAs(err, "Group")
	}
	g.RepositoryStorage = storage
	return end, nil
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings gives the service the instance's settings (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// instance are the application settings in effect.
func (s *Service) instance(ctx context.Context) (model.ApplicationSettings, error) {
	if s.settings == nil {
		st := model.DefaultApplicationSettings()
		if s.DeletionDelay > 0 {
			st.DelayedGroupDeletion, st.DeletionAdjournedPeriod = true, int64(s.DeletionDelay/(24*time.Hour))
		}
		return st, nil
	}
	return s.settings.Current(ctx)
}

// New returns the groups service.
func New(db *store.DB, up *uploads.Store, queue *tasks.Queue, log *slog.Logger, deletionDelay time.Duration) *Service {
	s := &Service{db: db, uploads: up, log: log, now: db.Now, DeletionDelay: deletionDelay}
	tasks.Handle(queue, deleteTask, s.runDelete, nil)
	return s
}

func (s *Service) today() string { return s.now().UTC().Format(model.DateLayout) }

// Viewer turns an actor into the store's list viewer.
func Viewer(a auth.Actor, today string) store.Viewer {
	v := store.Viewer{UserID: a.UserID(), Admin: a.Admin(), Today: today}
	if a.User != nil {
		v.External = a.User.External
	}
	return v
}

// Access is the actor's effective access to a namespace (-1: none).
func (s *Service) Access(ctx context.Context, a auth.Actor, nsID int64) (model.AccessLevel, error) {
	if !a.SignedIn() {
		return -1, nil
	}
	return s.db.NamespaceAccess(ctx, a.UserID(), nsID, s.today())
}

// Resolve finds a group by id or full path that the actor may read, and the
// actor's access to it; anything else is 404 Group Not Found.
func (s *Service) Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error) {
	g, err := s.db.GroupByRef(ctx, ref)
	if errors.Is(err, model.ErrNotFound) {
		return g, -1, model.NotFound("Group")
	}
	if err != nil {
		return g, -1, err
	}
	acc, err := s.Access(ctx, a, g.ID)
	if err != nil {
		return g, -1, err
	}
	if !auth.Can(a, auth.ReadGroup, auth.Resource{Group: &g, Access: acc}) {
		return g, -1, model.NotFound("Group")
	}
	return g, acc, nil
}

// Input carries group attributes; nil means "not given".
type Input struct {
	Name, Path, Description, Visibility, DefaultBranch *string
	ParentID                                           *int64
	ShareWithGroupLock, RequireTwoFactorAuthentication *bool
	TwoFactorGracePeriod                               *int
	ProjectCreationLevel, SubgroupCreationLevel        *string
	AutoDevopsEnabled, EmailsDisabled                  *bool
	MentionsDisabled, LFSEnabled, RequestAccessEnabled *bool
	DefaultBranchProtection                            *int
	FileTemplateProjectID                              *int64
	Avatar                                             *uploads.File
	RemoveAvatar                                       bool
}

// Enumerations of group settings.
var (
	ProjectCreationLevels  = []string{"noone", "owner", "maintainer", "developer", "administrator"}
	SubgroupCreationLevels = []string{"owner", "maintainer"}
)

// Create makes a group (a subgroup with ParentID) owned by the actor.
func (s *Service) Create(ctx context.Context, a auth.Actor, in Input) (model.Group, error) {
	return s.CreateWith(ctx, a, in, nil)
}

// CreateWith is Create that also runs fn (when not nil) in the
// transaction creating the group, once the group and its Owner exist: the
// group is created with whatever fn writes, or not at all when fn fails
// (its error is returned as it is).
func (s *Service) CreateWith(ctx context.Context, a auth.Actor, in Input, fn func(tx *store.Tx, g *model.Group) error) (model.Group, error) {
	now := s.now().UTC()
	st, err := s.instance(ctx)
	if err != nil {
		return model.Group{}, err
	}
	g := model.Group{Settings: model.DefaultGroupSettings()}
	g.Visibility = st.DefaultGroupVisibility
	g.Settings.ProjectCreationLevel = projectCreationLevel(st.DefaultProjectCreation)
	g.Settings.DefaultBranchProtection = int(st.DefaultBranchProtection)
	g.CreatedAt, g.UpdatedAt = now, now
	g.RunnersToken = auth.NewSecret("GR1348941", 20)
	g.RepositoryStorage = "default"
	if s.moves != nil {
		if g.RepositoryStorage, err = s.moves.PickStorage(ctx); err != nil {
			return g, err
		}
	}
	var parent *model.Group
	if in.ParentID != nil {
		p, acc, err := s.Resolve(ctx, a, strconv.FormatInt(*in.ParentID, 10))
		if err != nil {
			return g, err
		}
		if !auth.Can(a, auth.CreateSubgroup, auth.Resource{Group: &p, Access: acc}) {
			return g, model.Forbidden("")
		}
		parent = &p
		g.ParentID = p.ID
	} else if !auth.Can(a, auth.CreateTopLevelGroup, auth.Resource{}) {
		return g, model.Forbidden("")
	}
	var f model.FieldErrors
	s.apply(&f, &g, in, true)
	if msg, refused := st.RestrictedFor(a.Admin(), g.Visibility); refused && in.Visibility != nil {
		f.Add("visibility_level", msg)
	}
	if err := s.validate(ctx, &f, &g, parent, 0); err != nil {
		return g, err
	}
	if err := f.Err(); err != nil {
		return g, saveError(f)
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateGroup(ctx, &g); err != nil {
			return err
		}
		if err := tx.AddMember(ctx, model.SourceNamespace, g.ID, a.UserID(), model.Owner, a.UserID(), now.UnixMicro()); err != nil {
			return err
		}
		users, err := tx.UsersReaching(ctx, g.ParentID)
		if err != nil {
			return err
		}
		if err := tx.RefreshAuthorizations(ctx, append(users, a.UserID())...); err != nil {
			return err
		}
		if fn != nil {
			return fn(tx, &g)
		}
		return nil
	})
	if err != nil {
		return g, mapWriteErr(err)
	}
	if in.Avatar != nil {
		if err := s.saveAvatar(ctx, &g, in.Avatar); err != nil {
			return g, err
		}
	}
	return s.db.GroupByID(ctx, g.ID)
}

// saveError is GitLab's create failure: the errors rendered as a Ruby hash
// inside a message string.
func saveError(f model.FieldErrors) error {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		msgs := make([]string, len(f[k]))
		for j, m := range f[k] {
			msgs[j] = strconv.Quote(m)
		}
		parts[i] = fmt.Sprintf(":%s=>[%s]", k, strings.Join(msgs, ", "))
	}
	return model.BadRequestRaw("Failed to save group {" + strings.Join(parts, ", ") + "}")
}

func mapWriteErr(err error) error {
	if store.IsUnique(err, store.UniqueFullPath) || store.IsUnique(err, store.UniqueTopPath) || store.IsUnique(err, store.UniqueChildPath) {
		return saveError(model.FieldErrors{"path": {"has already been taken"}})
	}
	return err
}

// apply copies the given attributes onto g and checks their formats.
func (s *Service) apply(f *model.FieldErrors, g *model.Group, in Input, creating bool) {
	if in.Name != nil {
		g.Name = strings.TrimSpace(*in.Name)
	}
	if in.Path != nil {
		g.Path = *in.Path
	}
	if in.Description != nil {
		g.Description = *in.Description
	}
	if in.Visibility != nil {
		g.Visibility = model.Visibility(*in.Visibility)
	}
	st := &g.Settings
	setBool := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	setBool(&st.ShareWithGroupLock, in.ShareWithGroupLock)
	setBool(&st.RequireTwoFactorAuthentication, in.RequireTwoFactorAuthentication)
	setBool(&st.LFSEnabled, in.LFSEnabled)
	setBool(&st.RequestAccessEnabled, in.RequestAccessEnabled)
	if in.TwoFactorGracePeriod != nil {
		st.TwoFactorGracePeriod = *in.TwoFactorGracePeriod
	}
	if in.ProjectCreationLevel != nil {
		st.ProjectCreationLevel = *in.ProjectCreationLevel
	}
	if in.SubgroupCreationLevel != nil {
		st.SubgroupCreationLevel = *in.SubgroupCreationLevel
	}
	if in.AutoDevopsEnabled != nil {
		st.AutoDevopsEnabled = in.AutoDevopsEnabled
	}
	if in.EmailsDisabled != nil {
		st.EmailsDisabled = in.EmailsDisabled
	}
	if in.MentionsDisabled != nil {
		st.MentionsDisabled = in.MentionsDisabled
	}
	if in.DefaultBranchProtection != nil {
		st.DefaultBranchProtection = *in.DefaultBranchProtection
	}
	if in.DefaultBranch != nil {
		st.DefaultBranch = *in.DefaultBranch
	}
	if in.FileTemplateProjectID != nil {
		st.FileTemplateProjectID = in.FileTemplateProjectID
	}
	if in.RemoveAvatar {
		g.Avatar = ""
	}
	if g.Name == "" {
		f.Add("name", "can't be blank")
	} else if !model.ValidGroupName(g.Name) {
		f.Add("name", model.GroupNameMessage)
	}
	if utf8.RuneCountInString(g.Name) > 255 {
		f.Add("name", "is too long (maximum is 255 characters)")
	}
	if creating || in.Path != nil {
		for _, m := range model.ValidateNamespacePath(g.Path, g.ParentID == 0) {
			f.Add("path", m)
		}
	}
	if utf8.RuneCountInString(g.Description) > 500 {
		f.Add("description", "is too long (maximum is 500 characters)")
	}
	if st.TwoFactorGracePeriod < 0 {
		f.Add("two_factor_grace_period", "must be greater than or equal to 0")
	}
	if st.DefaultBranchProtection < 0 || st.DefaultBranchProtection > 4 {
		f.Add("default_branch_protection", "is not included in the list")
	}
	if in.Avatar != nil {
		for _, m := range uploads.ValidateAvatar(in.Avatar) {
			f.Add("avatar", m)
		}
	}
}

// validate checks g against its surroundings: unique path and name among
// siblings, and visibility within its parent and above its contents.
func (s *Service) validate(ctx context.Context, f *model.FieldErrors, g *model.Group, parent *model.Group, except int64) error {
	if g.Path != "" {
		taken, err := s.db.SiblingPathTaken(ctx, g.ParentID, g.Path, except)
		if err != nil {
			return err
		}
		if taken {
			f.Add("path", "has already been taken")
		}
	}
	if g.Name != "" {
		taken, err := s.db.SiblingNameTaken(ctx, g.ParentID, g.Name, except)
		if err != nil {
			return err
		}
		if taken {
			f.Add("name", "has already been taken")
		}
	}
	if parent != nil && model.VisibilityRank(g.Visibility) > model.VisibilityRank(parent.Visibility) {
		f.Add("visibility_level", fmt.Sprintf("%s is not allowed since the parent group has a %s visibility.", g.Visibility, parent.Visibility))
	}
	if except != 0 {
		maxV, err := s.db.MaxVisibilityInTree(ctx, g.Traversal, g.ID)
		if err != nil {
			return err
		}
		if model.VisibilityRank(g.Visibility) < model.VisibilityRank(maxV) {
			f.Add("visibility_level", fmt.Sprintf("%s is not allowed since there are sub-groups or projects with higher visibility.", g.Visibility))
		}
	}
	return nil
}

// Update changes a group's attributes (owners and administrators).
func (s *Service) Update(ctx context.Context, a auth.Actor, ref string, in Input) (model.Group, error) {
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return g, err
	}
	if !auth.Can(a, auth.AdminGroup, auth.Resource{Group: &g, Access: acc}) {
		return g, model.Forbidden("")
	}
	var parent *model.Group
	if g.ParentID != 0 {
		p, err := s.db.GroupByID(ctx, g.ParentID)
		if err != nil {
			return g, err
		}
		parent = &p
	}
	var f model.FieldErrors
	oldPath, oldName, oldVisibility := g.Path, g.Name, g.Visibility
	s.apply(&f, &g, in, false)
	if in.Visibility != nil && model.Visibility(*in.Visibility) != oldVisibility {
		st, err := s.instance(ctx)
		if err != nil {
			return g, err
		}
		if msg, refused := st.RestrictedFor(a.Admin(), g.Visibility); refused {
			f.Add("visibility_level", msg)
		}
	}
	probe := g
	if strings.EqualFold(g.Path, oldPath) {
		probe.Path = ""
	}
	if strings.EqualFold(g.Name, oldName) {
		probe.Name = ""
	}
	if err := s.validate(ctx, &f, &probe, parent, g.ID); err != nil {
		return g, err
	}
	if err := f.Err(); err != nil {
		return g, err
	}
	g.UpdatedAt = s.now().UTC()
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateGroup(ctx, &g) }); err != nil {
		if e := mapWriteErr(err); e != err {
			return g, model.Invalid("path", "has already been taken")
		}
		return g, err
	}
	if in.Avatar != nil {
		if err := s.saveAvatar(ctx, &g, in.Avatar); err != nil {
			return g, err
		}
	} else if in.RemoveAvatar {
		_ = s.uploads.Remove(g.Avatar)
	}
	return s.db.GroupByID(ctx, g.ID)
}

func (s *Service) saveAvatar(ctx context.Context, g *model.Group, file *uploads.File) error {
	rel, err := s.uploads.Save(fmt.Sprintf("group/avatar/%d", g.ID), file)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GroupByID(ctx, g.ID)
		if err != nil {
			return err
		}
		cur.Avatar = rel
		return tx.UpdateGroup(ctx, &cur)
	})
}

// Transfer moves a group under another group (or to the top level when
// target is nil).
func (s *Service) Transfer(ctx context.Context, a auth.Actor, ref string, target *int64) (model.Group, error) {
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return g, err
	}
	if !auth.Can(a, auth.AdminGroup, auth.Resource{Group: &g, Access: acc}) {
		return g, model.Forbidden("")
	}
	oldParent := g.ParentID
	var parent *model.Group
	if target != nil {
		p, pacc, err := s.Resolve(ctx, a, strconv.FormatInt(*target, 10))
		if err != nil {
			return g, err
		}
		if !auth.Can(a, auth.CreateSubgroup, auth.Resource{Group: &p, Access: pacc}) {
			return g, model.BadRequestRaw("Transfer failed: You don't have enough permissions.")
		}
		if p.ID == g.ID || strings.HasPrefix(p.Traversal, g.Traversal) {
			return g, model.BadRequestRaw("Transfer failed: Cannot transfer group to one of its subgroup.")
		}
		if p.ID == g.ParentID {
			return g, model.BadRequestRaw("Transfer failed: Group is already associated to the parent group.")
		}
		parent = &p
		g.ParentID = p.ID
	} else {
		if g.ParentID == 0 {
			return g, model.BadRequestRaw("Transfer failed: Group is already a root group.")
		}
		if !auth.Can(a, auth.CreateTopLevelGroup, auth.Resource{}) {
			return g, model.BadRequestRaw("Transfer failed: You don't have enough permissions.")
		}
		g.ParentID = 0
	}
	taken, err := s.db.SiblingPathTaken(ctx, g.ParentID, g.Path, g.ID)
	if err != nil {
		return g, err
	}
	if taken {
		return g, model.BadRequestRaw("Transfer failed: The parent group already has a subgroup or a project with the same path.")
	}
	if parent != nil && model.VisibilityRank(g.Visibility) > model.VisibilityRank(parent.Visibility) {
		// Like GitLab, a transferred group takes its new parent's visibility
		// when it was more visible (and so must everything inside).
		return g, model.BadRequestRaw(fmt.Sprintf("Transfer failed: The visibility of the group (%s) is higher than the parent group (%s).", g.Visibility, parent.Visibility))
	}
	g.UpdatedAt = s.now().UTC()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		before, err := tx.UsersInTree(ctx, g.Traversal)
		if err != nil {
			return err
		}
		if err := tx.UpdateGroup(ctx, &g); err != nil {
			return err
		}
		reach, err := tx.UsersReaching(ctx, g.ParentID, oldParent)
		if err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, append(before, reach...)...)
	})
	if err != nil {
		return g, mapWriteErr(err)
	}
	return s.db.GroupByID(ctx, g.ID)
}

// projectCreationLevel names GitLab's default_project_creation number as a
// group's project_creation_level.
func projectCreationLevel(n int64) string {
	switch n {
	case 0:
		return "noone"
	case 1:
		return "maintainer"
	case 3:
		return "administrator"
	case 4:
		return "owner"
	}
	return "developer"
}
