package store

import (
	"context"
	"database/sql"
	"time"

	"quarry/internal/model"
)

// Contribution events (the events table): written in the transaction of
// the change they record, or by the refs-changed subscriber for pushes;
// read as feeds of a project or of an author, newest first by id.

const eventColumns = `e.id, e.project_id, e.author_id, e.action, e.target_type, e.target_id, e.created_at, e.push_action,
	e.push_ref_type, e.push_ref, e.push_commit_from, e.push_commit_to, e.push_commit_count, e.push_commit_title, e.push_ref_count,
	COALESCE(m.iid, iss.iid), COALESCE(m.title, iss.title)`

// eventFrom joins each event to its target's current iid and title (a
// merge request's or an issue's).
const eventFrom = "events e LEFT JOIN merge_requests m ON e.target_type = 'MergeRequest' AND m.id = e.target_id" +
	" LEFT JOIN issues iss ON e.target_type = 'Issue' AND iss.id = e.target_id"

func scanEvent(r *sql.Rows) (model.Event, error) {
	var e model.Event
	var targetType, pushAction, refType, ref, from, to, title, mrTitle sql.NullString
	var targetID, count, refCount, mrIID sql.NullInt64
	err := r.Scan(&e.ID, &e.ProjectID, &e.AuthorID, &e.Action, &targetType, &targetID, tsScan{&e.CreatedAt}, &pushAction,
		&refType, &ref, &from, &to, &count, &title, &refCount, &mrIID, &mrTitle)
	if err != nil {
		return e, err
	}
	e.TargetType, e.TargetID = targetType.String, targetID.Int64
	e.TargetIID, e.TargetTitle = mrIID.Int64, mrTitle.String
	if pushAction.Valid {
		e.Push = &model.PushData{Action: pushAction.String, RefType: refType.String, Ref: ref.String, CommitFrom: from.String,
			CommitTo: to.String, CommitCount: count.Int64, CommitTitle: title.String, RefCount: refCount.Int64}
	}
	return e, nil
}

// AddEvent records e (its CreatedAt, when zero, is now) and sets its id;
// nothing when e has no author (a system write).
func (tx *Tx) AddEvent(ctx context.Context, e *model.Event) error {
	if e.AuthorID == 0 {
		return nil
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = tx.Now()
	}
	var pushAction, refType, ref, from, to, title, count, refCount any
	if p := e.Push; p != nil {
		pushAction, refType, ref, from, to = p.Action, p.RefType, emptyNull(p.Ref), emptyNull(p.CommitFrom), emptyNull(p.CommitTo)
		title, count, refCount = emptyNull(p.CommitTitle), p.CommitCount, zeroNull(p.RefCount)
	}
	var err error
	e.ID, err = tx.insert(ctx, `INSERT INTO events (project_id, author_id, action, target_type, target_id, created_at, push_action,
		push_ref_type, push_ref, push_commit_from, push_commit_to, push_commit_count, push_commit_title, push_ref_count)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ProjectID, e.AuthorID, string(e.Action), emptyNull(e.TargetType), zeroNull(e.TargetID), micros(e.CreatedAt),
		pushAction, refType, ref, from, to, count, title, refCount)
	return err
}

// AddMergeRequestEvent records that author did action to merge request
// mrID, in its target project; nothing when author is 0 (a system
// write) or the merge request is gone.
func (tx *Tx) AddMergeRequestEvent(ctx context.Context, mrID, authorID int64, action model.EventAction) error {
	if authorID == 0 {
		return nil
	}
	_, err := tx.exec(ctx, `INSERT INTO events (project_id, author_id, action, target_type, target_id, created_at)
		SELECT target_project_id, ?, ?, ?, id, ? FROM merge_requests WHERE id = ?`,
		authorID, string(action), model.EventTargetMergeRequest, micros(tx.Now()), mrID)
	return err
}

// PushEventsRecorded reports whether the push events of a delivery (the
// actor's push to a project at at) are recorded already.
func (tx *Tx) PushEventsRecorded(ctx context.Context, projectID, authorID int64, at time.Time) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, `SELECT COUNT(*) FROM (SELECT 1 FROM events WHERE project_id = ? AND author_id = ? AND action = ?
		AND created_at = ? LIMIT 1) AS found`, projectID, authorID, string(model.EventPushed), micros(at))
	return n > 0, err
}

// EventFilter selects a feed's events.
type EventFilter struct {
	ProjectID int64 // 0: any project
	AuthorID  int64 // 0: any author
	// Viewer, when set, keeps the events of projects the viewer may see.
	Viewer     *Viewer
	Action     model.EventAction
	TargetType string // stored target type ("MergeRequest")
	// Before and After bound created_at, both exclusive; nil for no
	// bound.
	Before, After *time.Time
	Asc           bool
	// ExcludeActions and ExcludeTargetTypes leave out the events of
	// features the caller may not read.
	ExcludeActions     []model.EventAction
	ExcludeTargetTypes []string
	// HideConfidentialIssues leaves out the events of confidential issues
	// but those authored by, or assigned to, ConfidentialViewer (0:
	// anonymous).
	HideConfidentialIssues bool
	ConfidentialViewer     int64
}

// ListEvents returns one page of events, by id (newest first unless Asc).
func (tx *Tx) ListEvents(ctx context.Context, f EventFilter, page model.Page) ([]model.Event, model.PageInfo, error) {
	var w where
	if f.ProjectID != 0 {
		w.add("e.project_id = ?", f.ProjectID)
	}
	if f.AuthorID != 0 {
		w.add("e.author_id = ?", f.AuthorID)
	}
	if f.Viewer != nil && !f.Viewer.Admin {
		// The projects the viewer may see, as the projects list decides.
		var pw where
		pw.visibleProjectCond(*f.Viewer)
		w.add("e.project_id IN (SELECT p.id FROM projects p"+pw.sql()+")", pw.args...)
	}
	if f.Action != "" {
		w.add("e.action = ?", string(f.Action))
	}
	if f.TargetType != "" {
		w.add("e.target_type = ?", f.TargetType)
	}
	for _, a := range f.ExcludeActions {
		w.add("e.action <> ?", string(a))
	}
	for _, t := range f.ExcludeTargetTypes {
		w.add("(e.target_type IS NULL OR e.target_type <> ?)", t)
	}
	if f.HideConfidentialIssues {
		w.add(`NOT (e.target_type = 'Issue' AND e.target_id IN (SELECT i.id FROM issues i WHERE i.confidential
			AND COALESCE(i.author_id, 0) <> ? AND i.id NOT IN (SELECT issue_id FROM issue_assignees WHERE user_id = ?)))`,
			f.ConfidentialViewer, f.ConfidentialViewer)
	}
	if f.Before != nil {
		w.add("e.created_at < ?", micros(*f.Before))
	}
	if f.After != nil {
		w.add("e.created_at > ?", micros(*f.After))
	}
	return list(ctx, tx, listSpec[model.Event]{
		columns: eventColumns, from: eventFrom, countFrom: "events e", idCol: "e.id", where: w, order: order{desc: !f.Asc},
		scan: scanEvent, keyOf: func(e model.Event) (any, int64) { return e.ID, e.ID },
	}, page)
}
