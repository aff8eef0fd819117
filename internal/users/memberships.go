package users

import (
	"context"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Membership is one of a user's direct memberships: the source (a project
// or group), its name and the level.
type Membership = store.Membership

// Membership source kinds, as GET /users/:id/memberships filters them.
var MembershipTypes = []string{model.SourceProject, model.SourceNamespace}

// Memberships lists a user's direct memberships of projects and groups
// (only of sourceType's kind when set), for administrators. ref is the
// user's id as the path gives it (an integer, which may lie past 64 bits:
// no user has such an id). Anonymous callers get 401, other users 403, an
// unknown user 404 User Not Found.
func (s *Service) Memberships(ctx context.Context, actor auth.Actor, ref string, sourceType string, page model.Page) ([]Membership, model.PageInfo, error) {
	if !actor.SignedIn() {
		return nil, model.PageInfo{}, model.Unauthorized("")
	}
	id, ok := model.ParseID(ref)
	if !ok {
		id = 0 // no user has it
	}
	u, err := s.adminTarget(ctx, actor, id)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.ListMemberships(ctx, u.ID, sourceType, s.now().UTC().Format(model.DateLayout), page)
}
