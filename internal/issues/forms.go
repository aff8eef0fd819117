package issues

import (
	"context"
	"errors"
	"strings"

	"quarry/internal/model"
)

// FormRefs resolves what the web's issue forms name by text, for those
// who set an issue's metadata: a milestone's title (the project's or one
// of its groups'; "": none) and the assignees' usernames. A name that
// matches nothing is the form's validation error.
func (s *Service) FormRefs(ctx context.Context, p model.Project, milestoneTitle string, usernames []string) (int64, []int64, error) {
	var milestoneID int64
	if milestoneTitle != "" {
		var groups []int64
		if p.Namespace.Kind == model.NamespaceGroup {
			groups = traversalIDs(p.Namespace.Traversal)
		}
		ids, err := s.db.MilestoneIDsByTitle(ctx, p.ID, groups, []string{milestoneTitle})
		if err != nil {
			return 0, nil, err
		}
		if milestoneID = ids[milestoneTitle]; milestoneID == 0 {
			return 0, nil, model.Invalid("milestone", "does not exist")
		}
	}
	usernames = model.CleanList(usernames)
	if len(usernames) > maxAssignees {
		return 0, nil, model.Param("assignee_ids has too many values")
	}
	ids := make([]int64, 0, len(usernames))
	for _, name := range usernames {
		u, err := s.db.UserByUsername(ctx, strings.TrimPrefix(name, "@"))
		if errors.Is(err, model.ErrNotFound) {
			return 0, nil, model.Invalid("assignees", "@"+strings.TrimPrefix(name, "@")+" does not exist")
		}
		if err != nil {
			return 0, nil, err
		}
		ids = append(ids, u.ID)
	}
	return milestoneID, ids, nil
}
