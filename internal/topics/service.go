// Package topics holds the rules for topics: the labels projects share,
// with names unique regardless of case and project counts kept true.
package topics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/uploads"
)

// Service answers every topic question.
type Service struct {
	db      *store.DB
	uploads *uploads.Store
}

// New returns the topics service.
func New(db *store.DB, up *uploads.Store) *Service { return &Service{db: db, uploads: up} }

// List returns topics, most used first.
func (s *Service) List(ctx context.Context, search string, withoutProjects bool, page model.Page) ([]model.Topic, model.PageInfo, error) {
	return s.db.ListTopics(ctx, search, withoutProjects, page)
}

// Get returns one topic or 404 Not found.
func (s *Service) Get(ctx context.Context, id int64) (model.Topic, error) {
	t, err := s.db.TopicByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return t, model.RecordNotFound()
	}
	return t, err
}

// Input carries topic attributes; nil means "not given".
type Input struct {
	Name, Title, Description *string
	Avatar                   *uploads.File
	RemoveAvatar             bool
}

func validate(f *model.FieldErrors, t *model.Topic) {
	if strings.TrimSpace(t.Name) == "" {
		f.Add("name", "can't be blank")
	}
	if utf8.RuneCountInString(t.Name) > 255 {
		f.Add("name", "is too long (maximum is 255 characters)")
	}
	if strings.TrimSpace(t.Title) == "" {
		f.Add("title", "can't be blank")
	}
	if utf8.RuneCountInString(t.Description) > 1024 {
		f.Add("description", "is too long (maximum is 1024 characters)")
	}
}

// Create makes a topic (administrators).
func (s *Service) Create(ctx context.Context, a auth.Actor, in Input) (model.Topic, error) {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return model.Topic{}, model.Forbidden("")
	}
	var t model.Topic
	s.apply(&t, in)
	if t.Title == "" {
		t.Title = t.Name
	}
	return t, s.save(ctx, &t, in, true)
}

// Update changes a topic (administrators).
func (s *Service) Update(ctx context.Context, a auth.Actor, id int64, in Input) (model.Topic, error) {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return model.Topic{}, model.Forbidden("")
	}
	t, err := s.Get(ctx, id)
	if err != nil {
		return t, err
	}
	s.apply(&t, in)
	return t, s.save(ctx, &t, in, false)
}

func (s *Service) apply(t *model.Topic, in Input) {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if in.Title != nil {
		t.Title = strings.TrimSpace(*in.Title)
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if in.RemoveAvatar {
		t.Avatar = ""
	}
}

func (s *Service) save(ctx context.Context, t *model.Topic, in Input, creating bool) error {
	var f model.FieldErrors
	validate(&f, t)
	if in.Avatar != nil {
		for _, m := range uploads.ValidateAvatar(in.Avatar) {
			f.Add("avatar", m)
		}
	}
	if other, err := s.db.TopicByName(ctx, t.Name); err == nil && other.ID != t.ID {
		f.Add("name", "has already been taken")
	} else if err != nil && !errors.Is(err, model.ErrNotFound) {
		return err
	}
	if err := f.Err(); err != nil {
		return err
	}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if creating {
			return tx.CreateTopic(ctx, t)
		}
		return tx.UpdateTopic(ctx, t)
	})
	if store.IsUnique(err, store.UniqueTopicName) {
		return model.Invalid("name", "has already been taken")
	}
	if err != nil {
		return err
	}
	if in.Avatar != nil {
		rel, err := s.uploads.Save(fmt.Sprintf("projects/topic/avatar/%d", t.ID), in.Avatar)
		if err != nil {
			return err
		}
		t.Avatar = rel
		return s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateTopic(ctx, t) })
	}
	return nil
}

// Delete removes a topic (administrators); projects just lose it.
func (s *Service) Delete(ctx context.Context, a auth.Actor, id int64) error {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return model.Forbidden("")
	}
	t, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteTopic(ctx, t.ID) }); err != nil {
		return err
	}
	if t.Avatar != "" {
		_ = s.uploads.Remove(t.Avatar)
	}
	return nil
}

// Merge moves every project of source to target and deletes source.
func (s *Service) Merge(ctx context.Context, a auth.Actor, source, target int64) (model.Topic, error) {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return model.Topic{}, model.Forbidden("")
	}
	if source == target {
		return model.Topic{}, model.BadRequestRaw("The source topic and the target topic are identical.")
	}
	src, err := s.Get(ctx, source)
	if err != nil {
		return src, err
	}
	if _, err := s.Get(ctx, target); err != nil {
		return model.Topic{}, err
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.MergeTopics(ctx, source, target) }); err != nil {
		return model.Topic{}, err
	}
	if src.Avatar != "" {
		_ = s.uploads.Remove(src.Avatar)
	}
	return s.Get(ctx, target)
}
