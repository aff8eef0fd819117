package ci

import (
	"context"

	"quarry/internal/model"
)

// ProjectJobView is a job of any project with its project: the items of
// a runner's job list, which spans projects.
type ProjectJobView struct {
	JobView
	Project model.Project
}

// ProjectJobViews loads what the JSON of jobs from several projects
// shows: the projects in one read, then each project's jobs as jobViews
// loads them. The order of jobs is kept; a job whose project is gone is
// left out.
func (s *Service) ProjectJobViews(ctx context.Context, jobs []model.Job) ([]ProjectJobView, error) {
	ids := make([]int64, 0, len(jobs))
	byProject := map[int64][]model.Job{}
	for _, j := range jobs {
		if _, ok := byProject[j.ProjectID]; !ok {
			ids = append(ids, j.ProjectID)
		}
		byProject[j.ProjectID] = append(byProject[j.ProjectID], j)
	}
	projects, err := s.db.ProjectsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	views := map[int64]JobView{}
	for _, id := range ids {
		p, ok := projects[id]
		if !ok {
			continue
		}
		vs, err := s.jobViews(ctx, p, byProject[id])
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			views[v.ID] = v
		}
	}
	out := make([]ProjectJobView, 0, len(jobs))
	for _, j := range jobs {
		if v, ok := views[j.ID]; ok {
			out = append(out, ProjectJobView{JobView: v, Project: projects[j.ProjectID]})
		}
	}
	return out, nil
}
