package issues

import (
	"context"
	"errors"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Counts are the numbers of a list's issues by state (the web list's
// tabs), each up to model.CountLimit.
type Counts = store.IssueCounts

// ListPage is a page of a project's issues for the web's list: the
// project (its issues open to the caller), the page, and how many issues
// the filter keeps in each state, whatever State says.
type ListPage struct {
	Project model.Project
	Issues  []View
	Info    model.PageInfo
	Counts  Counts
}

// ProjectPage is ProjectIssues with the counts of the tabs, in a fixed
// number of statements whatever the page's size.
func (s *Service) ProjectPage(ctx context.Context, a auth.Actor, projectRef string, f Filter, page model.Page) (ListPage, error) {
	p, acc, err := s.project(ctx, a, projectRef)
	if err != nil {
		return ListPage{}, err
	}
	out := ListPage{Project: p}
	sf, err := s.storeFilter(ctx, a, f)
	if err != nil {
		return out, err
	}
	sf.ProjectIDs = []int64{p.ID}
	if !auth.Can(a, auth.ReadConfidentialIssues, auth.Resource{Project: &p, Access: acc}) {
		sf.Visibility = &store.IssueVisibility{UserID: a.UserID()}
	}
	list, info, err := s.db.Issues(ctx, sf, page)
	if err != nil {
		return out, err
	}
	if out.Issues, err = s.views(ctx, map[int64]model.Project{p.ID: p}, list); err != nil {
		return out, err
	}
	out.Info = info
	sf.State = ""
	out.Counts, err = s.db.IssueCountsWhere(ctx, sf)
	return out, err
}

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
