package alerts

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// View is an alert with its assignees and its project.
type View struct {
	model.Alert
	Assignees []model.User
	Project   *model.Project
}

// ListInput are a list's filters; zero values do not filter.
type ListInput struct {
	Statuses   []model.AlertStatus
	Severities []model.AlertSeverity
	Search     string
	// Sort is one of store.AlertSorts' names ("" for created_desc).
	Sort string
}

// Sorts are the sort names a list takes.
func Sorts() []string {
	out := make([]string, 0, len(store.AlertSorts))
	for k := range store.AlertSorts {
		out = append(out, k)
	}
	return out
}

// views loads the assignees of alerts.
func (s *Service) views(ctx context.Context, p *model.Project, as []model.Alert) ([]View, error) {
	var ids []int64
	for _, a := range as {
		ids = append(ids, a.AssigneeIDs...)
	}
	users, err := s.db.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(as))
	for i, a := range as {
		out[i] = View{Alert: a, Project: p}
		for _, id := range a.AssigneeIDs {
			if u, ok := users[id]; ok {
				out[i].Assignees = append(out[i].Assignees, u)
			}
		}
	}
	return out, nil
}

// List returns a project's alerts.
func (s *Service) List(ctx context.Context, a auth.Actor, ref string, in ListInput, page model.Page) ([]View, model.PageInfo, error) {
	p, err := s.open(ctx, a, ref, auth.ReadAlert)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	as, info, err := s.db.ListAlerts(ctx, store.AlertFilter{ProjectID: p.ID, Statuses: in.Statuses, Severities: in.Severities,
		Search: in.Search, Sort: in.Sort}, page)
	if err != nil {
		return nil, info, err
	}
	vs, err := s.views(ctx, &p, as)
	return vs, info, err
}

// Get returns alert iid of a project.
func (s *Service) Get(ctx context.Context, a auth.Actor, ref string, iid int64) (View, error) {
	p, err := s.open(ctx, a, ref, auth.ReadAlert)
	if err != nil {
		return View{}, err
	}
	return s.get(ctx, &p, iid)
}

func (s *Service) get(ctx context.Context, p *model.Project, iid int64) (View, error) {
	al, err := s.db.AlertByIID(ctx, p.ID, iid)
	if err != nil {
		return View{}, model.NotFoundAs(err, "Alert")
	}
	vs, err := s.views(ctx, p, []model.Alert{al})
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// UpdateInput changes an alert; nil means "not given".
type UpdateInput struct {
	Status      *model.AlertStatus
	AssigneeIDs *[]int64
}

// Update moves an alert to another state (the transition table, applied
// by compare and set: a change that raced another is a 409) and replaces
// its assignees (users who may not read the project's alerts are left
// out, as GitLab does).
func (s *Service) Update(ctx context.Context, a auth.Actor, ref string, iid int64, in UpdateInput) (View, error) {
	p, err := s.open(ctx, a, ref, auth.UpdateAlert)
	if err != nil {
		return View{}, err
	}
	if in.AssigneeIDs != nil && len(*in.AssigneeIDs) > MaxAssignees {
		return View{}, model.Invalid("assignee_ids", fmt.Sprintf("has more than %d users", MaxAssignees))
	}
	cur, err := s.db.AlertByIID(ctx, p.ID, iid)
	if err != nil {
		return View{}, model.NotFoundAs(err, "Alert")
	}
	var assignees []int64
	if in.AssigneeIDs != nil {
		if assignees, err = s.readers(ctx, &p, *in.AssigneeIDs); err != nil {
			return View{}, err
		}
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if in.Status != nil && *in.Status != cur.Status {
			if !model.CanMoveAlert(cur.Status, *in.Status) {
				return model.Invalid("status", fmt.Sprintf("cannot change from %s to %s", cur.Status, *in.Status))
			}
			ok, err := tx.SetAlertStatus(ctx, cur.ID, cur.Status, *in.Status, tx.Now())
			var ue *store.UniqueError
			if errors.As(err, &ue) {
				return model.Invalid("fingerprint", "Cannot have multiple unresolved alerts")
			}
			if err != nil {
				return err
			}
			if !ok {
				return model.Conflict("409 Conflict - the alert changed meanwhile")
			}
		}
		if in.AssigneeIDs != nil {
			return tx.SetAlertAssignees(ctx, cur.ID, assignees)
		}
		return nil
	})
	if err != nil {
		return View{}, err
	}
	return s.get(ctx, &p, iid)
}

// readers keeps the users of ids that exist and may read p's alerts.
func (s *Service) readers(ctx context.Context, p *model.Project, ids []int64) ([]int64, error) {
	users, err := s.db.UsersByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	today := s.now().UTC().Format(model.DateLayout)
	var out []int64
	seen := map[int64]bool{}
	for _, id := range ids {
		u, ok := users[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		acc, err := s.db.ProjectAccess(ctx, id, p.ID, today)
		if err != nil {
			return nil, err
		}
		if auth.Can(auth.Actor{User: &u}, auth.ReadAlert, auth.Resource{Project: p, Access: acc}) {
			out = append(out, id)
		}
	}
	return out, nil
}
