package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// Notes (comments) and award emoji of issues (and, later, merge
// requests), named by their target's type and id. A target's deletion
// removes both in its transaction (DeleteNotesOf).

const noteColumns = `n.id, n.noteable_type, n.noteable_id, n.project_id, n.author_id, n.body, n.system, n.internal, n.resolvable,
	n.created_at, n.updated_at`

func noteDest(n *model.Note) []any {
	return []any{&n.ID, &n.NoteableType, &n.NoteableID, &n.ProjectID, nullInt64{&n.AuthorID}, &n.Body, &n.System, &n.Internal,
		&n.Resolvable, tsScan{&n.CreatedAt}, tsScan{&n.UpdatedAt}}
}

func scanNote(r *sql.Rows) (model.Note, error) {
	var n model.Note
	return n, r.Scan(noteDest(&n)...)
}

// CreateNote stores n and sets its ID and times (a CreatedAt already set
// is kept, and is its UpdatedAt too: an owner's backdated note); its
// issue's updated_at moves to now.
func (tx *Tx) CreateNote(ctx context.Context, n *model.Note) error {
	if n.CreatedAt.IsZero() {
		n.CreatedAt = tx.Now()
	}
	n.UpdatedAt = n.CreatedAt
	var err error
	n.ID, err = tx.insert(ctx, `INSERT INTO notes (noteable_type, noteable_id, project_id, author_id, body, system, internal, resolvable,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		n.NoteableType, n.NoteableID, n.ProjectID, zeroNull(n.AuthorID), n.Body, n.System, n.Internal, n.Resolvable,
		micros(n.CreatedAt), micros(n.UpdatedAt))
	if err != nil {
		return err
	}
	return tx.touchNoteable(ctx, *n)
}

// touchNoteable moves the updated_at of a note's issue to now (GitLab's
// Note#touch_noteable: a comment counts as the issue's activity).
func (tx *Tx) touchNoteable(ctx context.Context, n model.Note) error {
	if n.NoteableType != model.NoteableIssue {
		return nil
	}
	_, err := tx.exec(ctx, "UPDATE issues SET updated_at = ?, version = version + 1 WHERE id = ?", micros(tx.Now()), n.NoteableID)
	return err
}

// Note returns a target's note by id (model.ErrNotFound when it is not
// that target's).
func (tx *Tx) Note(ctx context.Context, noteableType string, noteableID, id int64) (model.Note, error) {
	var n model.Note
	err := tx.row(ctx, noteDest(&n), "SELECT "+noteColumns+" FROM notes n WHERE n.id = ? AND n.noteable_type = ? AND n.noteable_id = ?",
		id, noteableType, noteableID)
	return n, err
}

// UpdateNoteBody sets a note's body and moves its (and its issue's)
// updated_at to now; false when the note is gone.
func (tx *Tx) UpdateNoteBody(ctx context.Context, n *model.Note) (bool, error) {
	n.UpdatedAt = tx.Now()
	c, err := tx.execN(ctx, "UPDATE notes SET body = ?, updated_at = ? WHERE id = ?", n.Body, micros(n.UpdatedAt), n.ID)
	if err != nil || c == 0 {
		return false, err
	}
	return true, tx.touchNoteable(ctx, *n)
}

// DeleteNote removes a note (and its award emoji); false when it was
// gone.
func (tx *Tx) DeleteNote(ctx context.Context, id int64) (bool, error) {
	if _, err := tx.exec(ctx, "DELETE FROM award_emoji WHERE awardable_type = 'Note' AND awardable_id = ?", id); err != nil {
		return false, err
	}
	c, err := tx.execN(ctx, "DELETE FROM notes WHERE id = ?", id)
	return c > 0, err
}

// DeleteNotesOf removes a target's notes and award emoji (the target is
// being deleted).
func (tx *Tx) DeleteNotesOf(ctx context.Context, noteableType string, noteableID int64) error {
	if _, err := tx.exec(ctx, "DELETE FROM award_emoji WHERE awardable_type = 'Note' AND awardable_id IN "+
		"(SELECT id FROM notes WHERE noteable_type = ? AND noteable_id = ?)", noteableType, noteableID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "DELETE FROM award_emoji WHERE awardable_type = ? AND awardable_id = ?", noteableType, noteableID); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "DELETE FROM notes WHERE noteable_type = ? AND noteable_id = ?", noteableType, noteableID)
	return err
}

// NoteFilter selects a target's notes for a list.
type NoteFilter struct {
	NoteableType string
	NoteableID   int64
	// WithInternal keeps internal notes (the viewer is a reporter up).
	WithInternal bool
	// System keeps only system notes (true) or only comments (false);
	// nil: both.
	System  *bool
	OrderBy string // created_at (default) or updated_at
	Asc     bool
}

// Notes lists a target's notes, newest first unless asked.
func (tx *Tx) Notes(ctx context.Context, f NoteFilter, page model.Page) ([]model.Note, model.PageInfo, error) {
	var w where
	w.add("n.noteable_type = ?", f.NoteableType)
	w.add("n.noteable_id = ?", f.NoteableID)
	if !f.WithInternal {
		w.add("n.internal = FALSE")
	}
	if f.System != nil {
		w.add("n.system = ?", *f.System)
	}
	col := "n.created_at"
	if f.OrderBy == "updated_at" {
		col = "n.updated_at"
	}
	return list(ctx, tx, listSpec[model.Note]{
		columns: noteColumns, from: "notes n", idCol: "n.id", where: w, order: order{column: col, desc: !f.Asc},
		keyNotNull: true, scan: scanNote,
		keyOf: func(n model.Note) (any, int64) {
			if f.OrderBy == "updated_at" {
				return micros(n.UpdatedAt), n.ID
			}
			return micros(n.CreatedAt), n.ID
		},
	}, page)
}

// NoteAuthorIDs lists the authors of a target's comments (internal ones
// with withInternal), in the order of their first comment, at most
// limit of them, in one statement.
func (tx *Tx) NoteAuthorIDs(ctx context.Context, noteableType string, noteableID int64, withInternal bool, limit int) ([]int64, error) {
	q := "SELECT author_id FROM notes WHERE noteable_type = ? AND noteable_id = ? AND author_id IS NOT NULL AND system = FALSE"
	if !withInternal {
		q += " AND internal = FALSE"
	}
	var out []int64
	err := tx.each(ctx, q+" GROUP BY author_id ORDER BY MIN(id) LIMIT ?", []any{noteableType, noteableID, limit}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		out = append(out, id)
		return err
	})
	return out, err
}

// NoteCounts are what an issue's entity counts of its notes and award
// emoji.
type NoteCounts struct {
	// UserNotes are the non-system notes that are not internal;
	// InternalNotes the internal ones.
	UserNotes, InternalNotes int
	Upvotes, Downvotes       int
}

// NoteCountsOf counts the notes and votes of several targets of a type,
// in two statements whatever their number.
func (tx *Tx) NoteCountsOf(ctx context.Context, noteableType string, ids []int64) (map[int64]NoteCounts, error) {
	out := map[int64]NoteCounts{}
	if len(ids) == 0 {
		return out, nil
	}
	args := append([]any{noteableType}, int64Args(ids)...)
	err := tx.each(ctx, "SELECT noteable_id, internal, COUNT(*) FROM notes WHERE noteable_type = ? AND noteable_id IN ("+
		placeholders(len(ids))+") AND system = FALSE GROUP BY noteable_id, internal", args, func(r *sql.Rows) error {
		var id int64
		var internal bool
		var n int
		if err := r.Scan(&id, &internal, &n); err != nil {
			return err
		}
		c := out[id]
		if internal {
			c.InternalNotes = n
		} else {
			c.UserNotes = n
		}
		out[id] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	args = append(append([]any{noteableType}, int64Args(ids)...), model.EmojiThumbsUp, model.EmojiThumbsDown)
	err = tx.each(ctx, "SELECT awardable_id, name, COUNT(*) FROM award_emoji WHERE awardable_type = ? AND awardable_id IN ("+
		placeholders(len(ids))+") AND name IN (?, ?) GROUP BY awardable_id, name", args, func(r *sql.Rows) error {
		var id int64
		var name string
		var n int
		if err := r.Scan(&id, &name, &n); err != nil {
			return err
		}
		c := out[id]
		if name == model.EmojiThumbsUp {
			c.Upvotes = n
		} else {
			c.Downvotes = n
		}
		out[id] = c
		return nil
	})
	return out, err
}

const awardColumns = "e.id, e.name, e.user_id, e.awardable_type, e.awardable_id, e.project_id, e.created_at, e.updated_at"

func awardDest(e *model.AwardEmoji) []any {
	return []any{&e.ID, &e.Name, &e.UserID, &e.AwardableType, &e.AwardableID, &e.ProjectID, tsScan{&e.CreatedAt}, tsScan{&e.UpdatedAt}}
}

func scanAward(r *sql.Rows) (model.AwardEmoji, error) {
	var e model.AwardEmoji
	return e, r.Scan(awardDest(&e)...)
}

// CreateAwardEmoji stores e and sets its ID and times; model.ErrConflict
// when its user gave that name to that target already.
func (tx *Tx) CreateAwardEmoji(ctx context.Context, e *model.AwardEmoji) error {
	e.CreatedAt = tx.Now()
	e.UpdatedAt = e.CreatedAt
	var err error
	e.ID, err = tx.insert(ctx, `INSERT INTO award_emoji (name, user_id, awardable_type, awardable_id, project_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, e.Name, e.UserID, e.AwardableType, e.AwardableID, e.ProjectID, micros(e.CreatedAt), micros(e.UpdatedAt))
	return err
}

// AwardEmoji returns a target's award emoji by id (model.ErrNotFound
// when it is not that target's).
func (tx *Tx) AwardEmoji(ctx context.Context, awardableType string, awardableID, id int64) (model.AwardEmoji, error) {
	var e model.AwardEmoji
	err := tx.row(ctx, awardDest(&e), "SELECT "+awardColumns+" FROM award_emoji e WHERE e.id = ? AND e.awardable_type = ? AND e.awardable_id = ?",
		id, awardableType, awardableID)
	return e, err
}

// AwardEmojiList lists a target's award emoji, oldest first.
func (tx *Tx) AwardEmojiList(ctx context.Context, awardableType string, awardableID int64, page model.Page) ([]model.AwardEmoji, model.PageInfo, error) {
	var w where
	w.add("e.awardable_type = ?", awardableType)
	w.add("e.awardable_id = ?", awardableID)
	return list(ctx, tx, listSpec[model.AwardEmoji]{
		columns: awardColumns, from: "award_emoji e", idCol: "e.id", where: w, order: order{},
		scan: scanAward, keyOf: func(e model.AwardEmoji) (any, int64) { return nil, e.ID },
	}, page)
}

// DeleteAwardEmoji removes an award emoji; false when it was gone.
func (tx *Tx) DeleteAwardEmoji(ctx context.Context, id int64) (bool, error) {
	c, err := tx.execN(ctx, "DELETE FROM award_emoji WHERE id = ?", id)
	return c > 0, err
}
