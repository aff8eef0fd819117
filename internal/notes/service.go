// Package notes holds the notes (comments) and award emoji of issues,
// with GitLab's permissions: whoever sees an issue reads its notes
// (internal ones: reporters up) and, signed in, comments on it and
// awards emoji — unless the project is archived, or the issue's
// discussion is locked and they are not a member; a note is edited and
// deleted by its author or a maintainer up (admin_note), an award emoji
// deleted by whoever gave it or an administrator.
package notes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kyokomi/emoji/v2"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Issues finds a project's issue the caller may see, with the project
// and the caller's access to it (the issues service).
type Issues interface {
	Resolve(ctx context.Context, a auth.Actor, projectRef string, iid int64) (model.Project, model.AccessLevel, model.Issue, error)
}

// Service is the notes service.
type Service struct {
	db     *store.DB
	issues Issues
}

// New returns the notes service.
func New(db *store.DB, issues Issues) *Service { return &Service{db: db, issues: issues} }

// Target is an issue with what the caller may do there.
type Target struct {
	Project model.Project
	Access  model.AccessLevel
	Issue   model.Issue
	// SeeInternal: the caller reads internal notes (reporters up).
	SeeInternal bool
	// CanComment: the caller may comment and award emoji.
	CanComment bool
}

// View is a note with its author (nil: deleted) and its issue's iid.
type View struct {
	model.Note
	Author      *model.User
	NoteableIID int64
}

// AwardView is an award emoji with its user.
type AwardView struct {
	model.AwardEmoji
	User *model.User
}

// Listing orders a list of notes.
type Listing struct {
	// OrderBy: created_at (default) or updated_at.
	OrderBy string
	Asc     bool
	// System keeps only system notes (true: GitLab's only_activity) or
	// only comments (false: only_comments); nil: all_notes.
	System *bool
}

// CreateInput is a new note. CreatedAt is kept for administrators and
// project owners only; Internal for reporters up (GitLab saves others'
// notes public).
type CreateInput struct {
	Body      string
	Internal  bool
	CreatedAt *time.Time
}

// MaxEmojiName bounds an award emoji's name.
const MaxEmojiName = 255

// target resolves an issue for the caller.
func (s *Service) target(ctx context.Context, a auth.Actor, projectRef string, iid int64) (Target, error) {
	p, acc, i, err := s.issues.Resolve(ctx, a, projectRef, iid)
	if err != nil {
		return Target{}, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	t := Target{Project: p, Access: acc, Issue: i, SeeInternal: auth.Can(a, auth.ReadConfidentialIssues, res)}
	t.CanComment = auth.Can(a, auth.CreateIssue, res) && (!i.DiscussionLocked || a.Admin() || acc >= model.Guest)
	return t, nil
}

// Target returns an issue the caller sees with what they may do there
// (the web's issue page).
func (s *Service) Target(ctx context.Context, a auth.Actor, projectRef string, iid int64) (Target, error) {
	return s.target(ctx, a, projectRef, iid)
}

// List lists an issue's notes the caller sees, newest first unless
// asked.
func (s *Service) List(ctx context.Context, a auth.Actor, projectRef string, iid int64, l Listing, page model.Page) ([]View, model.PageInfo, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.ListOf(ctx, t, l, page)
}

// ListOf lists the notes of a resolved target (the web's issue page).
func (s *Service) ListOf(ctx context.Context, t Target, l Listing, page model.Page) ([]View, model.PageInfo, error) {
	list, info, err := s.db.Notes(ctx, store.NoteFilter{NoteableType: model.NoteableIssue, NoteableID: t.Issue.ID,
		WithInternal: t.SeeInternal, OrderBy: l.OrderBy, Asc: l.Asc, System: l.System}, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.views(ctx, t, list)
	return out, info, err
}

// views loads the authors of a page of notes in one statement.
func (s *Service) views(ctx context.Context, t Target, list []model.Note) ([]View, error) {
	var ids []int64
	for _, n := range list {
		if n.AuthorID != 0 {
			ids = append(ids, n.AuthorID)
		}
	}
	users, err := s.db.UserBasicsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(list))
	for k, n := range list {
		out[k] = View{Note: n, NoteableIID: t.Issue.IID}
		if u, ok := users[n.AuthorID]; ok {
			out[k].Author = &u
		}
	}
	return out, nil
}

// note reads a target's note the caller sees (404 Note Not Found).
func (s *Service) note(ctx context.Context, t Target, id int64) (model.Note, error) {
	n, err := s.db.Note(ctx, model.NoteableIssue, t.Issue.ID, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && n.Internal && !t.SeeInternal) {
		return n, model.NotFound("Note")
	}
	return n, err
}

// Get returns one of an issue's notes the caller sees.
func (s *Service) Get(ctx context.Context, a auth.Actor, projectRef string, iid, id int64) (View, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return View{}, err
	}
	n, err := s.note(ctx, t, id)
	if err != nil {
		return View{}, err
	}
	vs, err := s.views(ctx, t, []model.Note{n})
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// checkBody applies GitLab's rules to a note's body: 400 in GitLab's
// words ("Note {:note=>[...]}").
func checkBody(body string) error {
	switch {
	case strings.TrimSpace(body) == "":
		return model.BadRequestRaw(`400 Bad request - Note {:note=>["can't be blank"]}`)
	case utf8.RuneCountInString(body) > model.NoteBodyMax:
		return model.BadRequestRaw(fmt.Sprintf(`400 Bad request - Note {:note=>["is too long (maximum is %d characters)"]}`, model.NoteBodyMax))
	case !utf8.ValidString(body) || strings.ContainsRune(body, 0):
		return model.BadRequestRaw(`400 Bad request - Note {:note=>["is invalid"]}`)
	}
	return nil
}

// Create comments on an issue.
func (s *Service) Create(ctx context.Context, a auth.Actor, projectRef string, iid int64, in CreateInput) (View, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return View{}, err
	}
	if !t.CanComment {
		return View{}, model.Forbidden("")
	}
	if err := checkBody(in.Body); err != nil {
		return View{}, err
	}
	n := model.Note{NoteableType: model.NoteableIssue, NoteableID: t.Issue.ID, ProjectID: t.Project.ID, AuthorID: a.UserID(),
		Body: in.Body, Internal: in.Internal && t.SeeInternal}
	if in.CreatedAt != nil && (a.Admin() || t.Access >= model.Owner) {
		n.CreatedAt = in.CreatedAt.UTC()
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateNote(ctx, &n) }); err != nil {
		return View{}, err
	}
	vs, err := s.views(ctx, t, []model.Note{n})
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// mayAdmin reports whether the caller edits and deletes note n (GitLab's
// admin_note: its author, maintainers up; not on an archived project,
// not a non-member on a locked issue).
func mayAdmin(a auth.Actor, t Target, n model.Note) bool {
	if !a.SignedIn() || t.Project.Archived {
		return false
	}
	if t.Issue.DiscussionLocked && !a.Admin() && t.Access < model.Guest {
		return false
	}
	return (n.AuthorID != 0 && a.Is(n.AuthorID)) || a.Admin() || t.Access >= model.Maintainer
}

// Update sets a note's body (nil: no change).
func (s *Service) Update(ctx context.Context, a auth.Actor, projectRef string, iid, id int64, body *string) (View, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return View{}, err
	}
	n, err := s.note(ctx, t, id)
	if err != nil {
		return View{}, err
	}
	if !mayAdmin(a, t, n) {
		return View{}, model.Forbidden("")
	}
	if body != nil {
		if err := checkBody(*body); err != nil {
			return View{}, err
		}
		n.Body = *body
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			ok, err := tx.UpdateNoteBody(ctx, &n)
			if err == nil && !ok {
				err = model.NotFound("Note")
			}
			return err
		})
		if err != nil {
			return View{}, err
		}
	}
	vs, err := s.views(ctx, t, []model.Note{n})
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// Delete removes a note.
func (s *Service) Delete(ctx context.Context, a auth.Actor, projectRef string, iid, id int64) error {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return err
	}
	n, err := s.note(ctx, t, id)
	if err != nil {
		return err
	}
	if !mayAdmin(a, t, n) {
		return model.Forbidden("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteNote(ctx, n.ID)
		if err == nil && !ok {
			err = model.NotFound("Note")
		}
		return err
	})
}

// ValidEmoji reports whether name is an emoji's name (without colons).
func ValidEmoji(name string) bool {
	if name == "" || len(name) > MaxEmojiName || strings.Contains(name, ":") {
		return false
	}
	_, ok := emoji.CodeMap()[":"+name+":"]
	return ok
}

// awardViews loads the users of award emoji in one statement.
func (s *Service) awardViews(ctx context.Context, list []model.AwardEmoji) ([]AwardView, error) {
	ids := make([]int64, len(list))
	for k, e := range list {
		ids[k] = e.UserID
	}
	users, err := s.db.UserBasicsByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]AwardView, len(list))
	for k, e := range list {
		out[k] = AwardView{AwardEmoji: e}
		if u, ok := users[e.UserID]; ok {
			out[k].User = &u
		}
	}
	return out, nil
}

// Awards lists an issue's award emoji, oldest first.
func (s *Service) Awards(ctx context.Context, a auth.Actor, projectRef string, iid int64, page model.Page) ([]AwardView, model.PageInfo, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info, err := s.db.AwardEmojiList(ctx, model.NoteableIssue, t.Issue.ID, page)
	if err != nil {
		return nil, info, err
	}
	out, err := s.awardViews(ctx, list)
	return out, info, err
}

// award reads one of a target's award emoji (GitLab's 404 Not found).
func (s *Service) award(ctx context.Context, t Target, id int64) (model.AwardEmoji, error) {
	e, err := s.db.AwardEmoji(ctx, model.NoteableIssue, t.Issue.ID, id)
	if errors.Is(err, model.ErrNotFound) {
		return e, model.RecordNotFound()
	}
	return e, err
}

// Award returns one of an issue's award emoji.
func (s *Service) Award(ctx context.Context, a auth.Actor, projectRef string, iid, id int64) (AwardView, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return AwardView{}, err
	}
	e, err := s.award(ctx, t, id)
	if err != nil {
		return AwardView{}, err
	}
	vs, err := s.awardViews(ctx, []model.AwardEmoji{e})
	if err != nil {
		return AwardView{}, err
	}
	return vs[0], nil
}

// awardError is GitLab's answer to an award emoji its model refuses.
func awardError(msg string) error {
	return model.NotFoundRaw(`404 Award Emoji ["` + msg + `"] Not Found`)
}

// AddAward awards emoji name to an issue as the caller: GitLab's 404s
// for a caller who may not ("404 Award Emoji Not Found"), an unknown
// name and a name the caller gave already.
func (s *Service) AddAward(ctx context.Context, a auth.Actor, projectRef string, iid int64, name string) (AwardView, error) {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return AwardView{}, err
	}
	if !t.CanComment {
		return AwardView{}, model.NotFound("Award Emoji")
	}
	if !ValidEmoji(name) {
		return AwardView{}, awardError("Name is not a valid emoji name")
	}
	e := model.AwardEmoji{Name: name, UserID: a.UserID(), AwardableType: model.NoteableIssue, AwardableID: t.Issue.ID, ProjectID: t.Project.ID}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateAwardEmoji(ctx, &e) })
	if errors.Is(err, model.ErrConflict) {
		return AwardView{}, awardError("Name has already been taken")
	}
	if err != nil {
		return AwardView{}, err
	}
	vs, err := s.awardViews(ctx, []model.AwardEmoji{e})
	if err != nil {
		return AwardView{}, err
	}
	return vs[0], nil
}

// RemoveAward deletes an issue's award emoji: its giver or an
// administrator (GitLab's 401 for others).
func (s *Service) RemoveAward(ctx context.Context, a auth.Actor, projectRef string, iid, id int64) error {
	t, err := s.target(ctx, a, projectRef, iid)
	if err != nil {
		return err
	}
	e, err := s.award(ctx, t, id)
	if err != nil {
		return err
	}
	if !a.SignedIn() || (!a.Is(e.UserID) && !a.Admin()) {
		return model.Unauthorized("")
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.DeleteAwardEmoji(ctx, e.ID)
		if err == nil && !ok {
			err = model.RecordNotFound()
		}
		return err
	})
}
