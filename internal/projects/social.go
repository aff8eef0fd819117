package projects

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Star stars a project for the actor; 304 when already starred.
func (s *Service) Star(ctx context.Context, a auth.Actor, ref string, star bool) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.StarProject, &p, acc) {
		return p, model.Forbidden("")
	}
	var changed bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if star {
			changed, err = tx.Star(ctx, a.UserID(), p.ID, s.now().UTC())
		} else {
			changed, err = tx.Unstar(ctx, a.UserID(), p.ID)
		}
		return err
	})
	if err != nil {
		return p, err
	}
	if !changed {
		return p, model.NotModified()
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// Starrers lists who starred a project; private profiles are hidden from
// everyone but their owner and administrators.
func (s *Service) Starrers(ctx context.Context, a auth.Actor, ref, search string, page model.Page) ([]model.Starrer, model.PageInfo, error) {
	p, _, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	hide := a.UserID()
	if a.Admin() {
		hide = -1
	}
	return s.db.ListStarrers(ctx, p.ID, search, hide, page)
}

// ForkInput describes a fork.
type ForkInput struct {
	Name, Path, Description, Visibility *string
	// Namespace is an id or a full path; "" for the actor's own.
	Namespace string
}

// forkTask copies a source repository into a fork.
var forkTask = tasks.Define("fork_project", tasks.KindOptions[projectPayload]{MaxAttempts: 3})

// Fork creates a fork at once (import_status "scheduled") and copies the
// repository in the background.
func (s *Service) Fork(ctx context.Context, a auth.Actor, ref string, in ForkInput) (model.Project, error) {
	src, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return src, err
	}
	if !can(a, auth.ForkProject, &src, acc) {
		return src, model.NotFound("")
	}
	ns, err := s.forkNamespace(ctx, a, in.Namespace)
	if err != nil {
		return src, err
	}
	now := s.now().UTC()
	fork := model.Project{NamespaceID: ns.ID, Namespace: ns, CreatorID: a.UserID(), Name: src.Name, Path: src.Path,
		Description: src.Description, Visibility: src.Visibility, DefaultBranch: src.DefaultBranch,
		RepositoryStorage: src.RepositoryStorage, EmptyRepo: true, ImportStatus: "scheduled",
		ForkedFromID: &src.ID, IssuesAccessLevel: src.IssuesAccessLevel, MergeRequestsAccessLevel: src.MergeRequestsAccessLevel,
		Settings: src.Settings, LastActivityAt: now, CreatedAt: now, UpdatedAt: now}
	fork.Settings.RunnersToken = auth.NewSecret("GR1348941", 20)
	if ns.Kind == model.NamespaceGroup && model.VisibilityRank(ns.Visibility) < model.VisibilityRank(fork.Visibility) {
		fork.Visibility = ns.Visibility
	}
	var f model.FieldErrors
	in2 := Input{Name: in.Name, Path: in.Path, Description: in.Description, Visibility: in.Visibility}
	if in.Name != nil && in.Path == nil {
		path := *in.Name
		if len(model.ValidateProjectPath(path)) > 0 {
			path = model.Parameterize(path)
		}
		in2.Path = &path
	}
	if err := s.apply(ctx, &f, a, &fork, in2, false); err != nil {
		return fork, err
	}
	if model.VisibilityRank(fork.Visibility) > model.VisibilityRank(src.Visibility) {
		f.Add("visibility_level", fmt.Sprintf("%s is not allowed since the fork source project has lower visibility.", fork.Visibility))
	}
	if len(f) > 0 {
		if f["name"] != nil || f["path"] != nil {
			if taken(f, "name") || taken(f, "path") {
				return fork, &model.Error{Kind: model.KindConflict, Fields: f}
			}
		}
		return fork, f.Err()
	}
	// A fork starts with no topics, as GitLab's do.
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateProject(ctx, &fork); err != nil {
			return err
		}
		if err := tx.AddEvent(ctx, &model.Event{ProjectID: fork.ID, AuthorID: a.UserID(), Action: model.EventCreated}); err != nil {
			return err
		}
		fork.DiskPath = gitrepo.HashedPath("", fork.ID)
		if err := tx.UpdateProject(ctx, &fork); err != nil {
			return err
		}
		if ns.Kind == model.NamespaceUser {
			if err := tx.AddMember(ctx, model.SourceProject, fork.ID, ns.OwnerID, model.Owner, a.UserID(), now.UnixMicro()); err != nil {
				return err
			}
		}
		if ns.Kind == model.NamespaceGroup {
			lvl, err := tx.NamespaceAccess(ctx, a.UserID(), ns.ID, s.today())
			if err != nil {
				return err
			}
			if lvl < model.Maintainer {
				if err := tx.AddMember(ctx, model.SourceProject, fork.ID, a.UserID(), model.Maintainer, a.UserID(), now.UnixMicro()); err != nil {
					return err
				}
				if err := tx.RefreshAuthorizations(ctx, a.UserID()); err != nil {
					return err
				}
			}
		}
		_, err := forkTask.Enqueue(ctx, tx, projectPayload{ProjectID: fork.ID, SourceID: src.ID})
		return err
	})
	if err != nil {
		if e := mapWriteErr(err); e != err {
			return fork, &model.Error{Kind: model.KindConflict, Fields: model.FieldErrors{"path": {"has already been taken"}}}
		}
		return fork, err
	}
	return s.db.ProjectByID(ctx, fork.ID)
}

func taken(f model.FieldErrors, field string) bool {
	for _, m := range f[field] {
		if m == "has already been taken" {
			return true
		}
	}
	return false
}

// forkNamespace resolves where a fork goes.
func (s *Service) forkNamespace(ctx context.Context, a auth.Actor, ref string) (model.Namespace, error) {
	if ref == "" {
		return s.db.NamespaceByID(ctx, a.User.NamespaceID)
	}
	ns, err := s.db.NamespaceByRef(ctx, ref)
	if err != nil {
		return ns, model.NotFoundAs(err, "Target Namespace")
	}
	id := ns.ID
	if _, err := s.targetNamespace(ctx, a, a.User, &id); err != nil {
		if model.KindOf(err) == model.KindInvalid || model.KindOf(err) == model.KindNotFound {
			return ns, model.NotFound("Target Namespace")
		}
		return ns, err
	}
	return ns, nil
}

// runFork copies the source repository into the fork; it may run again
// after a crash, and the copy is idempotent.
func (s *Service) runFork(ctx context.Context, pl projectPayload) error {
	fork, err := s.db.ProjectByID(ctx, pl.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	src, err := s.db.ProjectByID(ctx, pl.SourceID)
	if errors.Is(err, model.ErrNotFound) {
		return tasks.Permanent{Err: errors.New("the source project no longer exists")}
	}
	if err != nil {
		return err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetImportStatus(ctx, fork.ID, "started", "") }); err != nil {
		return err
	}
	srcRepo, err := s.storages.Open(src.RepositoryStorage, src.DiskPath)
	if err != nil {
		return err
	}
	repo, err := s.storages.Open(fork.RepositoryStorage, fork.DiskPath)
	if err != nil {
		return err
	}
	if !repo.Exists() {
		if err := repo.Create(ctx, fork.DefaultBranch); err != nil {
			return err
		}
	}
	if empty, err := srcRepo.Empty(ctx); err != nil {
		return err
	} else if !empty {
		if err := repo.CopyFrom(ctx, srcRepo); err != nil {
			return err
		}
	}
	if err := s.RepositoryChanged(ctx, fork.ID); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetImportStatus(ctx, fork.ID, "finished", "") })
}

// forkFailed records a fork that could not be copied.
func (s *Service) forkFailed(ctx context.Context, pl projectPayload, cause error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetImportStatus(ctx, pl.ProjectID, "failed", cause.Error()) })
	if err != nil {
		s.log.Error("record failed fork", "project_id", pl.ProjectID, "err", err)
	}
}

// ForkRelation marks a project as a fork of another (from not nil), or
// removes the relation (from nil; 304 when it was not a fork).
func (s *Service) ForkRelation(ctx context.Context, a auth.Actor, ref string, from *int64) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.OwnProject, &p, acc) {
		return p, model.Forbidden("")
	}
	if from == nil {
		if p.ForkedFromID == nil {
			return p, model.NotModified()
		}
	} else {
		if p.ForkedFromID != nil {
			return p, model.Conflict("Project already forked")
		}
		src, sacc, err := s.Resolve(ctx, a, strconv.FormatInt(*from, 10))
		if err != nil {
			return p, err
		}
		if !can(a, auth.ForkProject, &src, sacc) {
			return p, model.Forbidden("")
		}
		if src.ID == p.ID {
			return p, model.BadRequestRaw("A project cannot be a fork of itself")
		}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetProjectFork(ctx, p.ID, p.ForkedFromID, from) })
	if err != nil {
		return p, err
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// Share shares a project with a group at an access level (maintainers).
func (s *Service) Share(ctx context.Context, a auth.Actor, ref string, groupID int64, level model.AccessLevel, expiresAt string) (model.GroupLink, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return model.GroupLink{}, err
	}
	if !can(a, auth.UpdateProject, &p, acc) {
		return model.GroupLink{}, model.Forbidden("")
	}
	g, err := s.db.GroupByID(ctx, groupID)
	if errors.Is(err, model.ErrNotFound) {
		return model.GroupLink{}, model.NotFound("Group")
	}
	if err != nil {
		return model.GroupLink{}, err
	}
	gacc, err := s.db.NamespaceAccess(ctx, a.UserID(), g.ID, s.today())
	if err != nil {
		return model.GroupLink{}, err
	}
	if !auth.Can(a, auth.ReadGroup, auth.Resource{Group: &g, Access: gacc}) {
		return model.GroupLink{}, model.NotFound("Group")
	}
	if p.Namespace.Kind == model.NamespaceGroup {
		owner, err := s.db.GroupByID(ctx, p.NamespaceID)
		if err != nil {
			return model.GroupLink{}, err
		}
		if owner.Settings.ShareWithGroupLock {
			return model.GroupLink{}, model.BadRequestRaw("400 Bad request - The project sharing with group is disabled")
		}
	}
	if expiresAt != "" && expiresAt <= s.today() {
		return model.GroupLink{}, model.Invalid("expires_at", "must be in the future")
	}
	l := model.GroupLink{ProjectID: p.ID, GroupID: g.ID, GroupAccess: level, ExpiresAt: expiresAt, Group: g.Namespace}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.ShareProject(ctx, l); err != nil {
			return err
		}
		users, err := tx.UsersReaching(ctx, g.ID)
		if err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
	if store.IsUnique(err, store.UniqueGroupLink) {
		return l, model.Conflict("409 Conflict: group_id has already been taken")
	}
	return l, err
}

// Unshare removes a project's share with a group.
func (s *Service) Unshare(ctx context.Context, a auth.Actor, ref string, groupID int64) error {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if !can(a, auth.UpdateProject, &p, acc) {
		return model.Forbidden("")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		users, err := tx.UsersReaching(ctx, groupID)
		if err != nil {
			return err
		}
		if err := tx.UnshareProject(ctx, p.ID, groupID); err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Group Link")
	}
	return err
}
