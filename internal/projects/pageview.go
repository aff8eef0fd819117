package projects

import (
	"context"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// PageView is View for a page's head, for a project the caller has
// resolved with the actor's access: the project, its topics, the access
// and what the actor may do (CanReadCode, CanAdmin, CanOwn), in one
// query, leaving out what only the API's entity shows (memberships,
// shares, the fork source, the owner, statistics).
func (s *Service) PageView(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel) (View, error) {
	topics, err := s.db.TopicsOf(ctx, []int64{p.ID})
	if err != nil {
		return View{}, err
	}
	v := View{Project: p, Access: acc, Topics: topics[p.ID]}
	v.CanReadCode = can(a, auth.ReadCode, &v.Project, acc)
	v.CanAdmin = can(a, auth.UpdateProject, &v.Project, acc)
	v.CanOwn = can(a, auth.OwnProject, &v.Project, acc)
	return v, nil
}
