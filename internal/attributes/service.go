// Package attributes manages custom attributes: administrator-defined
// key/value pairs on users, projects and groups, which list filters match.
package attributes

import (
	"context"
	"errors"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Owner kinds, as the API names them in paths.
const (
	Users    = store.AttrsUser
	Projects = store.AttrsProject
	Groups   = store.AttrsGroup
)

// Service answers custom attribute questions (administrators only).
type Service struct{ db *store.DB }

// New returns the custom attributes service.
func New(db *store.DB) *Service { return &Service{db: db} }

// owner checks the actor and that the resource exists, returning the
// resource's id.
func (s *Service) owner(ctx context.Context, a auth.Actor, kind string, ref string) (int64, error) {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return 0, model.Forbidden("")
	}
	switch kind {
	case Users:
		// Users are named by id alone here.
		id, ok := model.ParseID(ref)
		if !ok {
			return 0, model.NotFound("User")
		}
		u, err := s.db.UserByID(ctx, id)
		return u.ID, model.NotFoundAs(err, "User")
	case Projects:
		p, err := s.db.ProjectByRef(ctx, ref)
		return p.ID, model.NotFoundAs(err, "Project")
	default:
		g, err := s.db.GroupByRef(ctx, ref)
		return g.ID, model.NotFoundAs(err, "Group")
	}
}

// List returns a resource's custom attributes.
func (s *Service) List(ctx context.Context, a auth.Actor, kind, ref string) ([]model.CustomAttribute, error) {
	id, err := s.owner(ctx, a, kind, ref)
	if err != nil {
		return nil, err
	}
	m, err := s.db.CustomAttributes(ctx, kind, []int64{id})
	return m[id], err
}

// Of loads the custom attributes of several resources of one kind.
func (s *Service) Of(ctx context.Context, kind string, ids []int64) (map[int64][]model.CustomAttribute, error) {
	return s.db.CustomAttributes(ctx, kind, ids)
}

// Get returns one custom attribute, or 404 Not found.
func (s *Service) Get(ctx context.Context, a auth.Actor, kind, ref, key string) (model.CustomAttribute, error) {
	attrs, err := s.List(ctx, a, kind, ref)
	if err != nil {
		return model.CustomAttribute{}, err
	}
	for _, at := range attrs {
		if at.Key == key {
			return at, nil
		}
	}
	return model.CustomAttribute{}, model.RecordNotFound()
}

// Set creates or replaces a custom attribute.
func (s *Service) Set(ctx context.Context, a auth.Actor, kind, ref string, at model.CustomAttribute) (model.CustomAttribute, error) {
	id, err := s.owner(ctx, a, kind, ref)
	if err != nil {
		return at, err
	}
	if at.Key == "" {
		return at, model.Invalid("key", "can't be blank")
	}
	return at, s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetCustomAttribute(ctx, kind, id, at) })
}

// Delete removes a custom attribute.
func (s *Service) Delete(ctx context.Context, a auth.Actor, kind, ref, key string) error {
	id, err := s.owner(ctx, a, kind, ref)
	if err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteCustomAttribute(ctx, kind, id, key) })
	if errors.Is(err, model.ErrNotFound) {
		return model.RecordNotFound()
	}
	return err
}
