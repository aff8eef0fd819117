package groups

import (
	"context"
	"errors"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Share is a group shared with another group (the invited group in
// SharedWith).
type Share = store.GroupShare

// ShareLevels are the levels a share may grant.
var ShareLevels = []model.AccessLevel{model.Guest, model.Reporter, model.Developer, model.Maintainer, model.Owner}

// errShareNotAllowed is GitLab's answer when the caller may not share the
// group (not its owner): a 404 whose message is just "Not Found".
var errShareNotAllowed = &model.Error{Kind: model.KindNotFound, Message: "Not Found", Raw: true}

// errShareTaken is GitLab's answer to a second share of the same groups:
// the link's validation message behind its attribute's name.
var errShareTaken = model.Conflict("Shared group The group has already been shared with this group")

// ShareWith shares the group ref with the group withRef at level until
// expiresAt (YYYY-MM-DD, "" for never) and returns the shared group. As in
// GitLab: the invited group must be one the actor may read (else 404 Group
// Not Found, looked up first), then the shared group (404 Group Not
// Found); only the shared group's owners and administrators may share it
// (404 Not Found); a second share of the same groups is a 409. A date
// that is not in the future is refused (400), as Quarry refuses it for
// project shares. The invited group's direct members gain the access at
// once.
func (s *Service) ShareWith(ctx context.Context, a auth.Actor, ref, withRef string, level model.AccessLevel, expiresAt string) (model.Group, error) {
	with, _, err := s.Resolve(ctx, a, withRef)
	if err != nil {
		return model.Group{}, err
	}
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return g, err
	}
	if !auth.Can(a, auth.AdminGroupMembers, auth.Resource{Group: &g, Access: acc}) {
		return g, errShareNotAllowed
	}
	if expiresAt != "" && expiresAt <= s.today() {
		return g, model.Invalid("expires_at", "must be in the future")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GroupShare(ctx, g.ID, with.ID); err == nil {
			return errShareTaken
		} else if !errors.Is(err, model.ErrNotFound) {
			return err
		}
		l := Share{SharedGroupID: g.ID, SharedWithGroupID: with.ID, GroupAccess: level, ExpiresAt: expiresAt}
		if err := tx.CreateGroupShare(ctx, &l); err != nil {
			return err
		}
		users, err := tx.DirectMemberIDs(ctx, with.ID)
		if err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
	if store.IsGroupShareTaken(err) {
		return g, errShareTaken
	}
	if err != nil {
		return g, err
	}
	return g, nil
}

// Unshare ends the share of the group ref with the group withID. As in
// GitLab: the group must be one the actor may read (404 Group Not Found)
// and shared with that group (404 Group Link Not Found); a caller who is
// not an owner of the group is answered as if it were done, and nothing
// changes.
func (s *Service) Unshare(ctx context.Context, a auth.Actor, ref string, withID int64) error {
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if _, err := s.db.GroupShare(ctx, g.ID, withID); errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Group Link")
	} else if err != nil {
		return err
	}
	if !auth.Can(a, auth.AdminGroupMembers, auth.Resource{Group: &g, Access: acc}) {
		// GitLab answers 204 here and removes nothing; a refusal that
		// says so is kinder to the client (docs/architecture.md).
		return model.Forbidden("")
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		users, err := tx.DirectMemberIDs(ctx, withID)
		if err != nil {
			return err
		}
		if err := tx.DeleteGroupShare(ctx, g.ID, withID); err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Group Link")
	}
	return err
}

// SharedWith lists the groups g is shared with that the actor may read,
// as the group's details show them.
func (s *Service) SharedWith(ctx context.Context, a auth.Actor, g model.Group) ([]Share, error) {
	links, err := s.db.GroupSharesOf(ctx, g.ID)
	if err != nil || len(links) == 0 {
		return []Share{}, err
	}
	ids := make([]int64, len(links))
	for i := range links {
		ids[i] = links[i].SharedWithGroupID
	}
	levels, err := s.db.NamespaceAccessLevels(ctx, a.UserID(), ids, s.today())
	if err != nil {
		return nil, err
	}
	out := make([]Share, 0, len(links))
	for _, l := range links {
		acc, ok := levels[l.SharedWithGroupID]
		if !ok {
			acc = -1
		}
		invited := model.Group{Namespace: l.SharedWith}
		if auth.Can(a, auth.ReadGroup, auth.Resource{Group: &invited, Access: acc}) {
			out = append(out, l)
		}
	}
	return out, nil
}
