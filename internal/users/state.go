package users

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// adminTarget loads the user an administrator acts on.
func (s *Service) adminTarget(ctx context.Context, actor auth.Actor, id int64) (model.User, error) {
	if !auth.Can(actor, auth.AdminUsers, auth.Resource{}) {
		return model.User{}, model.Forbidden("")
	}
	u, err := s.db.UserByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return u, model.NotFound("User")
	}
	return u, err
}

// ProjectRemover removes a project with its repository (the projects
// service).
type ProjectRemover interface {
	RemoveProject(ctx context.Context, p model.Project) error
}

// GroupRemover removes a group with its subgroups and projects (the groups
// service).
type GroupRemover interface {
	RemoveGroup(ctx context.Context, g model.Group) error
}

// SetRemovers tells the service how to remove what a deleted user leaves
// behind; the composition root sets them.
func (s *Service) SetRemovers(p ProjectRemover, g GroupRemover) { s.projects, s.groups = p, g }

// SnippetRemover removes the snippets a user wrote with their
// repositories (the snippets service).
type SnippetRemover interface {
	RemoveUserSnippets(ctx context.Context, userID int64) error
}

// SetSnippetRemover tells the service how to remove a deleted user's
// snippets; the composition root sets it.
func (s *Service) SetSnippetRemover(r SnippetRemover) { s.snippets = r }

// Delete removes a user, their personal projects (repositories included)
// and memberships. A user who is the only owner of a group cannot be
// removed (409) unless hardDelete, which removes those groups too.
func (s *Service) Delete(ctx context.Context, actor auth.Actor, id int64, hardDelete bool) error {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return err
	}
	if u.Type.IsInternal() {
		return model.Forbidden("")
	}
	sole, err := s.db.SoleOwnedGroups(ctx, u.ID)
	if err != nil {
		return err
	}
	if len(sole) > 0 && !hardDelete {
		return model.Conflict("User cannot be removed while is the sole-owner of a group")
	}
	// Nothing of the user's is left half there: groups first (a group
	// inside another goes with it), then the projects of the user's own
	// namespace, the snippets the user wrote elsewhere, then the user.
	for _, id := range sole {
		g, err := s.db.GroupByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			continue // removed with its parent
		}
		if err != nil {
			return err
		}
		if err := s.groups.RemoveGroup(ctx, g); err != nil {
			return fmt.Errorf("remove group %d of deleted user %d: %w", g.ID, u.ID, err)
		}
	}
	ns, err := s.db.NamespaceByID(ctx, u.NamespaceID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return err
	}
	if err == nil {
		projects, err := s.db.ProjectsInTree(ctx, ns.Traversal)
		if err != nil {
			return err
		}
		for _, p := range projects {
			if err := s.projects.RemoveProject(ctx, p); err != nil {
				return fmt.Errorf("remove project %d of deleted user %d: %w", p.ID, u.ID, err)
			}
		}
	}
	if s.snippets != nil {
		if err := s.snippets.RemoveUserSnippets(ctx, u.ID); err != nil {
			return fmt.Errorf("remove snippets of deleted user %d: %w", u.ID, err)
		}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteUser(ctx, u.ID) })
	s.sessions.Invalidate()
	if err != nil {
		return err
	}
	if u.Avatar != "" {
		if err := s.uploads.Remove(u.Avatar); err != nil {
			s.log.Warn("remove avatar of deleted user", "user_id", u.ID, "err", err)
		}
	}
	return nil
}

// DeleteIdentity unlinks the user from provider.
func (s *Service) DeleteIdentity(ctx context.Context, actor auth.Actor, id int64, provider string) error {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteIdentity(ctx, u.ID, provider) })
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Identity")
	}
	return err
}

// setState moves a user from one of the allowed states to next, checking
// that nobody changed the user in between.
func (s *Service) setState(ctx context.Context, u model.User, next model.UserState) error {
	u.State = next
	u.UpdatedAt = s.now().UTC()
	defer s.sessions.Invalidate() // its sessions stop at once
	return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateUser(ctx, &u) })
}

// Block blocks a user. It reports false when the user was blocked already.
func (s *Service) Block(ctx context.Context, actor auth.Actor, id int64) (bool, error) {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return false, err
	}
	switch {
	case u.State == model.UserLDAPBlocked:
		return false, model.Forbidden("LDAP blocked users cannot be modified by the API")
	case actor.Is(u.ID):
		return false, model.Forbidden("The API initiating user cannot be blocked by the API")
	case u.State == model.UserBlocked:
		return false, nil
	case u.Type.IsInternal():
		return false, model.ForbiddenRaw("An internal user cannot be blocked")
	}
	return true, s.setState(ctx, u, model.UserBlocked)
}

// Unblock makes a blocked user active again.
func (s *Service) Unblock(ctx context.Context, actor auth.Actor, id int64) (bool, error) {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return false, err
	}
	switch u.State {
	case model.UserLDAPBlocked:
		return false, model.Forbidden("LDAP blocked users cannot be unblocked by the API")
	case model.UserDeactivated:
		return false, model.Forbidden("Deactivated users cannot be unblocked by the API")
	case model.UserActive:
		return true, nil
	}
	return true, s.setState(ctx, u, model.UserActive)
}

// deactivationWindow is how recently active a user may not be deactivated.
const deactivationWindow = 90 * 24 * time.Hour

// Deactivate deactivates a dormant user. It reports false when the user was
// deactivated already.
func (s *Service) Deactivate(ctx context.Context, actor auth.Actor, id int64) (bool, error) {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return false, err
	}
	if u.State == model.UserDeactivated {
		return false, nil
	}
	switch {
	case u.State.IsBlocked():
		return false, model.Forbidden("A blocked user cannot be deactivated by the API")
	case u.Type.IsInternal():
		return false, model.Forbidden("An internal user cannot be deactivated by the API")
	case u.LastActivityOn != "" && u.LastActivityOn > s.now().UTC().Add(-deactivationWindow).Format(model.DateLayout):
		return false, model.Forbidden("The user you are trying to deactivate has been active in the past 90 days and cannot be deactivated")
	}
	return true, s.setState(ctx, u, model.UserDeactivated)
}

// Activate reactivates a deactivated user.
func (s *Service) Activate(ctx context.Context, actor auth.Actor, id int64) (bool, error) {
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return false, err
	}
	if u.State.IsBlocked() {
		return false, model.Forbidden("A blocked user must be unblocked to be activated")
	}
	if u.State == model.UserActive {
		return true, nil
	}
	return true, s.setState(ctx, u, model.UserActive)
}
