package projects

import (
	"context"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// LanguagesOf is Languages for a project the caller has resolved (with
// Resolve) as the actor: the shares (percent, two decimals) of the
// languages of its default branch, as GET /projects/:id/languages
// answers them, recorded when the repository last changed. An actor who
// may not read the code gets none.
func (s *Service) LanguagesOf(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel) (map[string]float64, error) {
	if !can(a, auth.ReadCode, &p, acc) {
		return nil, model.Forbidden("")
	}
	return s.db.ProjectLanguages(ctx, p.ID)
}
