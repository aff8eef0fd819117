package users

import (
	"context"
	"errors"
	"html"
	"time"
	"unicode/utf8"

	"github.com/kyokomi/emoji/v2"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// DefaultStatusEmoji is set when a status is given without an emoji.
const DefaultStatusEmoji = "speech_balloon"

// ClearStatusAfter lists the accepted clear_status_after values.
var ClearStatusAfter = map[string]time.Duration{
	"30_minutes": 30 * time.Minute, "3_hours": 3 * time.Hour, "8_hours": 8 * time.Hour,
	"1_day": 24 * time.Hour, "3_days": 72 * time.Hour, "7_days": 7 * 24 * time.Hour, "30_days": 30 * 24 * time.Hour,
}

// Availabilities lists the accepted availability values.
var Availabilities = []string{"not_set", "busy"}

// Status returns a user's current status; ok is false when none is set.
func (s *Service) Status(ctx context.Context, u model.User) (model.UserStatus, bool, error) {
	st, err := s.db.UserStatus(ctx, u.ID)
	if errors.Is(err, model.ErrNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if st.ClearStatusAt != nil && !st.ClearStatusAt.After(s.now()) {
		return model.UserStatus{}, false, nil
	}
	return st, true, nil
}

// StatusInput sets a status. Nil fields are cleared (PUT) or kept (PATCH,
// when Merge is set).
type StatusInput struct {
	Emoji, Message, Availability, ClearStatusAfter *string
	Merge                                          bool
}

// SetStatus sets the actor's own status; an input with nothing in it
// removes the status.
func (s *Service) SetStatus(ctx context.Context, actor auth.Actor, in StatusInput) (model.UserStatus, bool, error) {
	if !auth.Can(actor, auth.UpdateOwnStatus, auth.Resource{User: actor.User}) {
		return model.UserStatus{}, false, model.Forbidden("")
	}
	cur, has, err := s.Status(ctx, *actor.User)
	if err != nil {
		return cur, false, err
	}
	st := model.UserStatus{UserID: actor.User.ID, Availability: "not_set"}
	if in.Merge && has {
		st = cur
	}
	if in.Emoji != nil {
		st.Emoji = *in.Emoji
	}
	if in.Message != nil {
		st.Message = *in.Message
	}
	if in.Availability != nil {
		st.Availability = *in.Availability
	}
	if in.ClearStatusAfter != nil {
		t := s.now().UTC().Add(ClearStatusAfter[*in.ClearStatusAfter])
		st.ClearStatusAt = &t
	} else if !in.Merge {
		st.ClearStatusAt = nil
	}
	if st.Emoji == "" && st.Message == "" && (st.Availability == "" || st.Availability == "not_set") && st.ClearStatusAt == nil {
		err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.ClearUserStatus(ctx, actor.User.ID) })
		return model.UserStatus{}, false, err
	}
	if st.Emoji == "" {
		st.Emoji = DefaultStatusEmoji
	}
	var f model.FieldErrors
	if _, ok := emoji.CodeMap()[":"+st.Emoji+":"]; !ok {
		f.Add("emoji", "does not exist")
	}
	if utf8.RuneCountInString(st.Message) > 100 {
		f.Add("message", "is too long (maximum is 100 characters)")
	}
	if err := f.Err(); err != nil {
		return model.UserStatus{}, false, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetUserStatus(ctx, st) })
	return st, true, err
}

// MessageHTML renders a status message as HTML.
func MessageHTML(msg string) string { return html.EscapeString(msg) }

// Preferences returns the actor's preferences.
func (s *Service) Preferences(ctx context.Context, actor auth.Actor) (model.UserPreferences, error) {
	if !actor.SignedIn() {
		return model.UserPreferences{}, model.Unauthorized("")
	}
	return s.db.UserPreferences(ctx, actor.User.ID)
}

// PreferencesInput changes preferences; nil keeps a value.
type PreferencesInput struct {
	ViewDiffsFileByFile, ShowWhitespaceInDiffs, PassUserIdentitiesToCIJWT *bool
}

// SetPreferences changes the actor's preferences.
func (s *Service) SetPreferences(ctx context.Context, actor auth.Actor, in PreferencesInput) (model.UserPreferences, error) {
	if !auth.Can(actor, auth.UpdateOwnStatus, auth.Resource{User: actor.User}) {
		return model.UserPreferences{}, model.Forbidden("")
	}
	var p model.UserPreferences
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = tx.UserPreferences(ctx, actor.User.ID); err != nil {
			return err
		}
		if in.ViewDiffsFileByFile != nil {
			p.ViewDiffsFileByFile = *in.ViewDiffsFileByFile
		}
		if in.ShowWhitespaceInDiffs != nil {
			p.ShowWhitespaceInDiffs = *in.ShowWhitespaceInDiffs
		}
		if in.PassUserIdentitiesToCIJWT != nil {
			p.PassUserIdentitiesToCIJWT = *in.PassUserIdentitiesToCIJWT
		}
		return tx.UpdateUserPreferences(ctx, p)
	})
	return p, err
}
