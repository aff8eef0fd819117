package projects

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// SetArchived archives or unarchives a project (owners); idempotent.
func (s *Service) SetArchived(ctx context.Context, a auth.Actor, ref string, archived bool) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.OwnProject, &p, acc) {
		return p, model.Forbidden("")
	}
	if p.Archived == archived {
		return p, nil
	}
	p.Archived = archived
	p.UpdatedAt = s.now().UTC()
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProject(ctx, &p) }); err != nil {
		return p, err
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// Transfer moves a project to another namespace (owners); the repository
// stays where it is, at its hashed path.
func (s *Service) Transfer(ctx context.Context, a auth.Actor, ref, target string) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.OwnProject, &p, acc) {
		return p, model.Forbidden("")
	}
	ns, err := s.db.NamespaceByRef(ctx, target)
	if err != nil {
		return p, model.NotFoundAs(err, "Namespace")
	}
	if ns.ID == p.NamespaceID {
		return p, model.BadRequestRaw("Failed to transfer project {:namespace=>[\"Project is already in this namespace.\"]}")
	}
	id := ns.ID
	if _, err := s.targetNamespace(ctx, a, a.User, &id); err != nil {
		if model.KindOf(err) == model.KindNotFound {
			return p, model.NotFound("Namespace")
		}
		return p, model.BadRequestRaw("Failed to transfer project {:namespace=>[\"You don't have permission to transfer this project to that namespace.\"]}")
	}
	pathTaken, _, err := s.db.ProjectPathTaken(ctx, ns.ID, p.Path, "", p.ID)
	if err != nil {
		return p, err
	}
	if pathTaken {
		return p, model.BadRequestRaw("Failed to transfer project {:namespace=>[\"Project with same name or path in target namespace already exists\"]}")
	}
	old := p.NamespaceID
	p.NamespaceID = ns.ID
	if ns.Kind == model.NamespaceGroup && model.VisibilityRank(p.Visibility) > model.VisibilityRank(ns.Visibility) {
		p.Visibility = ns.Visibility
	}
	p.UpdatedAt = s.now().UTC()
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateProject(ctx, &p); err != nil {
			return err
		}
		users, err := tx.UsersReaching(ctx, old, ns.ID)
		if err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
	if err != nil {
		return p, mapWriteErr(err)
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// deleteTask is the background removal of a project.
var deleteTask = tasks.Define("delete_project", tasks.KindOptions[projectPayload]{MaxAttempts: 5})

type projectPayload struct {
	ProjectID int64 `json:"project_id"`
	SourceID  int64 `json:"source_id,omitempty"`
}

// Delete marks a project for deletion (owners). It is removed after the
// deletion delay, at once when the delay is zero or when permanently is set
// on a project already marked (with its full path as confirmation).
func (s *Service) Delete(ctx context.Context, a auth.Actor, ref string, permanently bool, fullPath string) error {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if !can(a, auth.OwnProject, &p, acc) {
		return model.Forbidden("")
	}
	st, err := s.instance(ctx)
	if err != nil {
		return err
	}
	plan, err := model.PlanDeletion("Project", p.MarkedForDeletionOn != "", permanently, fullPath, p.FullPath(), st.ProjectDeletionDelay(), s.now())
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if plan.Mark {
			p.MarkedForDeletionOn = s.today()
		} else {
			p.PendingDelete = true
		}
		p.UpdatedAt = s.now().UTC()
		if err := tx.UpdateProject(ctx, &p); err != nil {
			return err
		}
		_, err := deleteTask.Enqueue(ctx, tx, projectPayload{ProjectID: p.ID}, tasks.At(plan.RunAt))
		return err
	})
}

// Restore unmarks a project marked for deletion (owners).
func (s *Service) Restore(ctx context.Context, a auth.Actor, ref string) (model.Project, error) {
	p, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return p, err
	}
	if !can(a, auth.OwnProject, &p, acc) {
		return p, model.Forbidden("")
	}
	if p.MarkedForDeletionOn == "" {
		return p, model.BadRequestRaw("Project has not been marked for deletion")
	}
	p.MarkedForDeletionOn = ""
	p.UpdatedAt = s.now().UTC()
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProject(ctx, &p) }); err != nil {
		return p, err
	}
	return s.db.ProjectByID(ctx, p.ID)
}

// runDelete removes a project whose deletion is due (unless it was
// restored meanwhile).
func (s *Service) runDelete(ctx context.Context, pl projectPayload) error {
	p, err := s.db.ProjectByID(ctx, pl.ProjectID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !p.PendingDelete && p.MarkedForDeletionOn == "" {
		return nil
	}
	return s.RemoveProject(ctx, p)
}

// RemoveProject deletes a project's repository, uploads and rows.
func (s *Service) RemoveProject(ctx context.Context, p model.Project) error {
	for _, fn := range s.removing {
		if err := fn(ctx, p.ID); err != nil {
			return err
		}
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return err
	}
	if err := repo.Remove(); err != nil {
		return fmt.Errorf("remove repository: %w", err)
	}
	wiki, err := s.storages.Open(p.RepositoryStorage, gitrepo.WikiPath(p.DiskPath))
	if err != nil {
		return err
	}
	if err := wiki.Remove(); err != nil {
		return fmt.Errorf("remove wiki repository: %w", err)
	}
	if p.Avatar != "" {
		_ = s.uploads.Remove(p.Avatar)
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &p) }); err != nil {
		return err
	}
	var errs []error
	for _, fn := range s.removed {
		errs = append(errs, fn(p.ID))
	}
	return errors.Join(errs...)
}

// OnRemoving registers what goes first when a project is removed: what
// other services keep for it and find through rows that go with the
// project's (its snippets and their repositories). An error stops the
// removal, which is tried again. Call it while composing, before use.
func (s *Service) OnRemoving(fn func(ctx context.Context, projectID int64) error) {
	s.removing = append(s.removing, fn)
}

// OnRemoved registers what else goes when a project is removed (files
// other services keep for it, such as CI job logs and artifacts); the
// project's rows are gone by then. Call it while composing, before use.
func (s *Service) OnRemoved(fn func(projectID int64) error) { s.removed = append(s.removed, fn) }
