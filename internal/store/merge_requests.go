package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"quarry/internal/model"
)

// Merge requests, their assignees and reviewers. Writes that race carry
// the version read (UpdateMergeRequest) or the state read (a state move).

// IIDMergeRequests counts a project's merge requests.
const IIDMergeRequests = "merge_requests"

const mrColumns = `id, iid, target_project_id, source_project_id, source_branch, target_branch, title, description, state, author_id,
	labels, squash, remove_source_branch, discussion_locked, head_sha, base_sha, start_sha, merge_status, merge_status_source,
	merge_status_target, conflicts, merge_commit_sha, squash_commit_sha, merge_error, merged_by_id, merged_at, closed_by_id, closed_at,
	created_at, updated_at, version, fast_forward, changes_count, changes_base, changes_head, entity_version`

func mrDest(m *model.MergeRequest) []any {
	return []any{&m.ID, &m.IID, &m.TargetProjectID, &m.SourceProjectID, &m.SourceBranch, &m.TargetBranch, &m.Title, &m.Description,
		&m.State, nullInt64{&m.AuthorID}, jsonText{&m.Labels}, &m.Squash, &m.RemoveSourceBranch, &m.DiscussionLocked, &m.HeadSHA,
		&m.BaseSHA, &m.StartSHA, &m.MergeStatus, &m.MergeStatusSource, &m.MergeStatusTarget, &m.Conflicts,
		nullString{&m.MergeCommitSHA}, nullString{&m.SquashCommitSHA}, nullString{&m.MergeError}, nullInt64{&m.MergedByID},
		nullTSScan{&m.MergedAt}, nullInt64{&m.ClosedByID}, nullTSScan{&m.ClosedAt}, tsScan{&m.CreatedAt}, tsScan{&m.UpdatedAt},
		&m.Version, &m.FastForward, &m.ChangedFiles, &m.ChangesBase, &m.ChangesHead, &m.EntityVersion}
}

// CreateMergeRequest stores m with its project's next iid and sets its
// ID, IID and times.
func (tx *Tx) CreateMergeRequest(ctx context.Context, m *model.MergeRequest) error {
	iid, err := tx.NextIID(ctx, m.TargetProjectID, IIDMergeRequests)
	if err != nil {
		return err
	}
	now := tx.Now()
	m.IID, m.CreatedAt, m.UpdatedAt = iid, now, now
	m.ID, err = tx.insert(ctx, `INSERT INTO merge_requests (iid, target_project_id, source_project_id, source_branch, target_branch,
		title, description, state, author_id, labels, squash, remove_source_branch, discussion_locked, head_sha, base_sha, start_sha,
		merge_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.IID, m.TargetProjectID, m.SourceProjectID, m.SourceBranch, m.TargetBranch, m.Title, m.Description, m.State,
		zeroNull(m.AuthorID), jsonValue(m.Labels), m.Squash, m.RemoveSourceBranch, m.DiscussionLocked, m.HeadSHA, m.BaseSHA,
		m.StartSHA, m.MergeStatus, micros(now), micros(now))
	if err != nil {
		return err
	}
	return tx.setMRPeople(ctx, m)
}

// setMRPeople replaces a merge request's assignees and reviewers.
func (tx *Tx) setMRPeople(ctx context.Context, m *model.MergeRequest) error {
	for _, t := range []struct {
		table string
		ids   []int64
	}{{"merge_request_assignees", m.AssigneeIDs}, {"merge_request_reviewers", m.ReviewerIDs}} {
		if _, err := tx.exec(ctx, "DELETE FROM "+t.table+" WHERE merge_request_id = ?", m.ID); err != nil {
			return err
		}
		for i, uid := range t.ids {
			if _, err := tx.exec(ctx, "INSERT INTO "+t.table+" (merge_request_id, user_id, position) VALUES (?, ?, ?)", m.ID, uid, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// MergeRequest returns a project's merge request by iid.
func (tx *Tx) MergeRequest(ctx context.Context, projectID, iid int64) (model.MergeRequest, error) {
	var m model.MergeRequest
	if err := tx.row(ctx, mrDest(&m), "SELECT "+mrColumns+" FROM merge_requests WHERE target_project_id = ? AND iid = ?", projectID, iid); err != nil {
		return m, err
	}
	return m, tx.loadMRPeople(ctx, []*model.MergeRequest{&m})
}

// loadMRPeople fills the assignees and reviewers of merge requests (one
// query for all).
func (tx *Tx) loadMRPeople(ctx context.Context, list []*model.MergeRequest) error {
	if len(list) == 0 {
		return nil
	}
	byID := make(map[int64]*model.MergeRequest, len(list))
	ids := make([]int64, 0, len(list))
	for _, m := range list {
		byID[m.ID] = m
		ids = append(ids, m.ID)
		m.AssigneeIDs, m.ReviewerIDs = nil, nil
	}
	in := placeholders(len(ids))
	return tx.each(ctx, "SELECT 0, merge_request_id, user_id, position FROM merge_request_assignees WHERE merge_request_id IN ("+in+
		") UNION ALL SELECT 1, merge_request_id, user_id, position FROM merge_request_reviewers WHERE merge_request_id IN ("+in+
		") ORDER BY 1, 2, 4", append(anys(ids), anys(ids)...), func(r *sql.Rows) error {
		var kind, mid, uid, pos int64
		if err := r.Scan(&kind, &mid, &uid, &pos); err != nil {
			return err
		}
		if m := byID[mid]; m != nil {
			if kind == 0 {
				m.AssigneeIDs = append(m.AssigneeIDs, uid)
			} else {
				m.ReviewerIDs = append(m.ReviewerIDs, uid)
			}
		}
		return nil
	})
}

// UpdateMergeRequest writes m if it still has the version read (its
// people too); model.ErrConflict when another writer changed it first.
// The merge check and the changes count are not written (SetMergeCheck
// and SetChangesCount keep them, by compare-and-set of their own): a
// merge status of MergeUnchecked asks for the check to be made again.
func (tx *Tx) UpdateMergeRequest(ctx context.Context, m *model.MergeRequest) error {
	m.UpdatedAt = tx.Now()
	reset := ""
	if m.MergeStatus == model.MergeUnchecked {
		reset = "merge_status = '" + model.MergeUnchecked + "', "
	}
	n, err := tx.execN(ctx, `UPDATE merge_requests SET source_branch = ?, target_branch = ?, title = ?, description = ?, state = ?,
		labels = ?, squash = ?, remove_source_branch = ?, discussion_locked = ?, head_sha = ?, base_sha = ?, start_sha = ?, `+reset+
		`merge_commit_sha = ?, squash_commit_sha = ?, merge_error = ?, merged_by_id = ?, merged_at = ?, closed_by_id = ?, closed_at = ?,
		updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
		m.SourceBranch, m.TargetBranch, m.Title, m.Description, m.State, jsonValue(m.Labels), m.Squash, m.RemoveSourceBranch,
		m.DiscussionLocked, m.HeadSHA, m.BaseSHA, m.StartSHA,
		emptyNull(m.MergeCommitSHA), emptyNull(m.SquashCommitSHA), emptyNull(m.MergeError), zeroNull(m.MergedByID),
		nullMicros(m.MergedAt), zeroNull(m.ClosedByID), nullMicros(m.ClosedAt), micros(m.UpdatedAt), m.ID, m.Version)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("409 Conflict: merge request changed")
	}
	m.Version++
	return tx.setMRPeople(ctx, m)
}

// SetMergeCheck records an open merge request's merge check if the one
// stored is still old (compare-and-set; false when another writer stored
// one first). Nothing else changes (a cache of git, no version bump).
func (tx *Tx) SetMergeCheck(ctx context.Context, id int64, old, c model.MergeCheck) (bool, error) {
	n, err := tx.execN(ctx, `UPDATE merge_requests SET merge_status = ?, merge_status_source = ?, merge_status_target = ?, conflicts = ?,
		fast_forward = ? WHERE id = ? AND state = ? AND merge_status = ? AND merge_status_source = ? AND merge_status_target = ?
		AND conflicts = ? AND fast_forward = ?`, c.Status, c.Source, c.Target, c.Conflicts, c.FastForward, id, model.MRStateOpened,
		old.Status, old.Source, old.Target, old.Conflicts, old.FastForward)
	return n == 1, err
}

// SetChangesCount records the number of files a merge request changes
// between base and head if they are still its diff refs (false when they
// moved). The count follows from the two commits: writers of the same
// refs write the same count.
func (tx *Tx) SetChangesCount(ctx context.Context, id int64, base, head string, n int) (bool, error) {
	k, err := tx.execN(ctx, `UPDATE merge_requests SET changes_count = ?, changes_base = ?, changes_head = ?
		WHERE id = ? AND base_sha = ? AND head_sha = ?`, n, base, head, id, base, head)
	return k == 1, err
}

// DeleteMergeRequest removes a merge request; false when there was none.
func (tx *Tx) DeleteMergeRequest(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM merge_requests WHERE id = ?", id)
	return n == 1, err
}

// OpenMergeRequestFrom returns the open merge request from a source
// branch into a target project, if any.
func (tx *Tx) OpenMergeRequestFrom(ctx context.Context, sourceProjectID int64, sourceBranch string, targetProjectID int64, targetBranch string) (model.MergeRequest, error) {
	var m model.MergeRequest
	err := tx.row(ctx, mrDest(&m), "SELECT "+mrColumns+` FROM merge_requests WHERE source_project_id = ? AND source_branch = ?
		AND target_project_id = ? AND target_branch = ? AND state = ? ORDER BY id LIMIT 1`,
		sourceProjectID, sourceBranch, targetProjectID, targetBranch, model.MRStateOpened)
	return m, err
}

// OpenMergeRequestsOfBranch lists the open merge requests whose source
// or target is a branch of a project (a push moved it).
func (tx *Tx) OpenMergeRequestsOfBranch(ctx context.Context, projectID int64, branch string) ([]model.MergeRequest, error) {
	var out []model.MergeRequest
	err := tx.each(ctx, "SELECT "+mrColumns+` FROM merge_requests WHERE state = ? AND
		((source_project_id = ? AND source_branch = ?) OR (target_project_id = ? AND target_branch = ?)) ORDER BY id`,
		[]any{model.MRStateOpened, projectID, branch, projectID, branch}, func(r *sql.Rows) error {
			var m model.MergeRequest
			if err := r.Scan(mrDest(&m)...); err != nil {
				return err
			}
			out = append(out, m)
			return nil
		})
	if err != nil {
		return nil, err
	}
	ptrs := make([]*model.MergeRequest, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, tx.loadMRPeople(ctx, ptrs)
}

// MergeRequestFilter selects merge requests for a list.
type MergeRequestFilter struct {
	// ProjectIDs limits to these target projects (nil: no limit; empty:
	// none).
	ProjectIDs    []int64
	State         string // "" or "all": any
	AuthorID      int64
	AssigneeID    int64 // a user, FilterNone or FilterAny
	ReviewerID    int64 // a user, FilterNone or FilterAny
	SourceBranch  string
	TargetBranch  string
	Search        string // title or description
	IIDs          []int64
	Labels        []string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
	OrderBy       string // created_at (default), updated_at, title
	Asc           bool
	WIP           string // "yes", "no", ""
}

// MergeRequestFilter's AssigneeID and ReviewerID take a user's id or
// one of these.
const (
	FilterNone int64 = -1 // no one
	FilterAny  int64 = -2 // someone
)

// MergeRequests lists merge requests, newest first unless asked.
func (tx *Tx) MergeRequests(ctx context.Context, f MergeRequestFilter, page model.Page) ([]model.MergeRequest, model.PageInfo, error) {
	list, info, err := tx.mergeRequests(ctx, f, page)
	if err != nil {
		return nil, info, err
	}
	ptrs := make([]*model.MergeRequest, len(list))
	for i := range list {
		ptrs[i] = &list[i]
	}
	return list, info, tx.loadMRPeople(ctx, ptrs)
}

// mergeRequests is MergeRequests without the assignees and reviewers.
func (tx *Tx) mergeRequests(ctx context.Context, f MergeRequestFilter, page model.Page) ([]model.MergeRequest, model.PageInfo, error) {
	w, ord := tx.mrList(f)
	return tx.mergeRequestsWhere(ctx, w, ord, page)
}

// mrList is the conditions and order of a list of merge requests.
func (tx *Tx) mrList(f MergeRequestFilter) (where, order) {
	var w where
	if f.ProjectIDs != nil {
		if len(f.ProjectIDs) == 0 {
			w.add("1 = 0")
		} else {
			w.add("target_project_id IN ("+placeholders(len(f.ProjectIDs))+")", anys(f.ProjectIDs)...)
		}
	}
	if f.State != "" && f.State != "all" {
		w.add("state = ?", f.State)
	}
	if f.AuthorID != 0 {
		w.add("author_id = ?", f.AuthorID)
	}
	for _, people := range []struct {
		table string
		id    int64
	}{{"merge_request_assignees", f.AssigneeID}, {"merge_request_reviewers", f.ReviewerID}} {
		switch {
		case people.id > 0:
			w.add("id IN (SELECT merge_request_id FROM "+people.table+" WHERE user_id = ?)", people.id)
		case people.id == FilterNone:
			w.add("id NOT IN (SELECT merge_request_id FROM " + people.table + ")")
		case people.id == FilterAny:
			w.add("id IN (SELECT merge_request_id FROM " + people.table + ")")
		}
	}
	if f.SourceBranch != "" {
		w.add("source_branch = ?", f.SourceBranch)
	}
	if f.TargetBranch != "" {
		w.add("target_branch = ?", f.TargetBranch)
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		w.add("("+tx.ilike("title")+" OR "+tx.ilike("description")+")", pat, pat)
	}
	if len(f.IIDs) > 0 {
		w.add("iid IN ("+placeholders(len(f.IIDs))+")", anys(f.IIDs)...)
	}
	for _, l := range f.Labels {
		w.add(tx.labelCond("labels"), labelArg(l))
	}
	for _, c := range []struct {
		cond string
		t    *time.Time
	}{{"created_at >= ?", f.CreatedAfter}, {"created_at <= ?", f.CreatedBefore}, {"updated_at >= ?", f.UpdatedAfter},
		{"updated_at <= ?", f.UpdatedBefore}} {
		if c.t != nil {
			w.add(c.cond, micros(*c.t))
		}
	}
	switch f.WIP {
	case "yes":
		w.add("(" + draftCond() + ")")
	case "no":
		w.add("NOT (" + draftCond() + ")")
	}
	col := "created_at"
	switch f.OrderBy {
	case "updated_at":
		col = "updated_at"
	case "title":
		col = "title"
	}
	return w, order{column: col, desc: !f.Asc}
}

// mergeRequestsWhere reads a page of the merge requests w selects.
func (tx *Tx) mergeRequestsWhere(ctx context.Context, w where, ord order, page model.Page) ([]model.MergeRequest, model.PageInfo, error) {
	col := ord.column
	list, info, err := list(ctx, tx, listSpec[model.MergeRequest]{
		columns: mrColumns, from: "merge_requests", idCol: "id", where: w, order: ord, keyNotNull: true,
		scan: func(r *sql.Rows) (model.MergeRequest, error) {
			var m model.MergeRequest
			return m, r.Scan(mrDest(&m)...)
		},
		keyOf: func(m model.MergeRequest) (any, int64) {
			switch col {
			case "updated_at":
				return micros(m.UpdatedAt), m.ID
			case "title":
				return m.Title, m.ID
			}
			return micros(m.CreatedAt), m.ID
		},
	}, page)
	return list, info, err
}

// draftCond matches draft titles (model.IsDraftTitle's prefixes).
func draftCond() string {
	var conds []string
	for _, p := range []string{"draft:", "[draft]", "(draft)", "draft -"} {
		conds = append(conds, "lower(title) LIKE '"+strings.ReplaceAll(p, "'", "''")+"%'")
	}
	return strings.Join(conds, " OR ")
}

// ProjectsWithMergeRequests lists the projects that have merge requests
// (the candidates of GET /merge_requests, filtered by access after).
func (tx *Tx) ProjectsWithMergeRequests(ctx context.Context) ([]model.Project, error) {
	return tx.projectsWhere(ctx, "p.id IN (SELECT DISTINCT target_project_id FROM merge_requests)")
}

// ProjectsUnderNamespace lists the projects of a group and its
// subgroups (traversal "1/5/").
func (tx *Tx) ProjectsUnderNamespace(ctx context.Context, traversal string) ([]model.Project, error) {
	return tx.projectsWhere(ctx, `n.traversal LIKE ? ESCAPE '\'`, escapeLike(traversal)+"%")
}

func (tx *Tx) projectsWhere(ctx context.Context, cond string, args ...any) ([]model.Project, error) {
	var out []model.Project
	err := tx.each(ctx, "SELECT "+projectColumns+" FROM "+projectFrom+" WHERE "+cond+" ORDER BY p.id", args, func(r *sql.Rows) error {
		var p model.Project
		if err := r.Scan(tx.projectDest(&p)...); err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// A merge holds a merge request's lock (state locked) under a token of its
// own, with a lease it renews while it runs (lock_expires_at) and, once
// its commits are made and before it moves the target branch, the result
// it is moving to (in_progress_merge). Every write of a lock is a
// compare-and-set on the state and the token: a merge whose lock was taken
// from it changes nothing.

// LockMergeRequest moves an open merge request to locked for the merge
// lock names (token, merger, lease); false when it is not open (another
// merge holds it, or it is closed or merged).
func (tx *Tx) LockMergeRequest(ctx context.Context, id int64, lock model.MergeLock) (bool, error) {
	if !model.MRStateCanMoveTo(model.MRStateOpened, model.MRStateLocked) {
		return false, model.ErrTransition
	}
	n, err := tx.execN(ctx, `UPDATE merge_requests SET state = ?, lock_token = ?, locked_by_id = ?, lock_expires_at = ?,
		in_progress_merge = NULL, updated_at = ?, version = version + 1 WHERE id = ? AND state = ?`,
		model.MRStateLocked, lock.Token, zeroNull(lock.UserID), micros(lock.Until), micros(tx.Now()), id, model.MRStateOpened)
	return n == 1, err
}

// RenewMergeLock extends the lease of the merge holding a merge request's
// lock under token to until, and records result when not nil; false when
// that merge no longer holds it.
func (tx *Tx) RenewMergeLock(ctx context.Context, id int64, token string, until time.Time, result *model.MergeResult) (bool, error) {
	q := "UPDATE merge_requests SET lock_expires_at = ?"
	args := []any{micros(until)}
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return false, err
		}
		q += ", in_progress_merge = ?"
		args = append(args, string(b))
	}
	n, err := tx.execN(ctx, q+" WHERE id = ? AND state = ? AND lock_token = ?", append(args, id, model.MRStateLocked, token)...)
	return n == 1, err
}

// MergeRequestLock returns a merge request with the lock it is under (the
// zero MergeLock when it is not locked).
func (tx *Tx) MergeRequestLock(ctx context.Context, id int64) (model.MergeRequest, model.MergeLock, error) {
	var m model.MergeRequest
	var lock model.MergeLock
	var until *time.Time
	var result string
	err := tx.row(ctx, append(mrDest(&m), nullString{&lock.Token}, nullInt64{&lock.UserID}, nullTSScan{&until}, nullString{&result}),
		"SELECT "+mrColumns+", lock_token, locked_by_id, lock_expires_at, in_progress_merge FROM merge_requests WHERE id = ?", id)
	if err != nil {
		return m, lock, err
	}
	if m.State != model.MRStateLocked {
		return m, model.MergeLock{}, tx.loadMRPeople(ctx, []*model.MergeRequest{&m})
	}
	if until != nil {
		lock.Until = *until
	}
	if result != "" {
		lock.Result = &model.MergeResult{}
		if err := json.Unmarshal([]byte(result), lock.Result); err != nil {
			return m, lock, fmt.Errorf("merge request %d: in-progress merge: %w", id, err)
		}
	}
	return m, lock, tx.loadMRPeople(ctx, []*model.MergeRequest{&m})
}

// LockedMergeRequest is a locked merge request and when its lock's lease
// ends.
type LockedMergeRequest struct {
	ID    int64
	Until time.Time
}

// LockedMergeRequests lists the locked merge requests, by id (through the
// partial index merge_requests_locked, whose condition the query repeats
// word for word).
func (tx *Tx) LockedMergeRequests(ctx context.Context) ([]LockedMergeRequest, error) {
	var out []LockedMergeRequest
	err := tx.each(ctx, "SELECT id, COALESCE(lock_expires_at, 0) FROM merge_requests WHERE state = 'locked' ORDER BY id",
		nil, func(r *sql.Rows) error {
			var l LockedMergeRequest
			if err := r.Scan(&l.ID, tsScan{&l.Until}); err != nil {
				return err
			}
			out = append(out, l)
			return nil
		})
	return out, err
}

// lockHeld is the condition of a write by, or about, the merge holding a
// lock: still locked, under that token, with the lease last seen (a
// recovery's write fails when the merge renewed its lease meanwhile).
func lockHeld(token string, until *time.Time) (string, []any) {
	cond, args := " AND state = ? AND lock_token = ?", []any{model.MRStateLocked, token}
	if until != nil {
		cond += " AND lock_expires_at = ?"
		args = append(args, micros(*until))
	}
	return cond, args
}

// MergeOutcome is how a merge ended, as its merge request records it.
type MergeOutcome struct {
	MergedByID                               int64
	MergedAt                                 time.Time
	HeadSHA, MergeCommitSHA, SquashCommitSHA string
	Squash                                   bool
}

// MarkMerged moves a locked merge request to merged with the merge's
// outcome and clears its lock; false when the merge under token (and,
// with until, the lease last seen) no longer holds it.
func (tx *Tx) MarkMerged(ctx context.Context, id int64, token string, until *time.Time, o MergeOutcome) (bool, error) {
	if !model.MRStateCanMoveTo(model.MRStateLocked, model.MRStateMerged) {
		return false, model.ErrTransition
	}
	cond, cargs := lockHeld(token, until)
	args := append([]any{model.MRStateMerged, zeroNull(o.MergedByID), micros(o.MergedAt), o.HeadSHA, emptyNull(o.MergeCommitSHA),
		emptyNull(o.SquashCommitSHA), o.Squash, micros(tx.Now()), id}, cargs...)
	n, err := tx.execN(ctx, `UPDATE merge_requests SET state = ?, merged_by_id = ?, merged_at = ?, head_sha = ?, merge_commit_sha = ?,
		squash_commit_sha = ?, squash = ?, lock_token = NULL, locked_by_id = NULL, lock_expires_at = NULL, in_progress_merge = NULL,
		updated_at = ?, version = version + 1 WHERE id = ?`+cond, args...)
	return n == 1, err
}

// UnlockMergeRequest opens a locked merge request again (its merge failed,
// or died without moving the target) and clears its lock; false when the
// merge under token (and, with until, the lease last seen) no longer holds
// it.
func (tx *Tx) UnlockMergeRequest(ctx context.Context, id int64, token string, until *time.Time) (bool, error) {
	if !model.MRStateCanMoveTo(model.MRStateLocked, model.MRStateOpened) {
		return false, model.ErrTransition
	}
	cond, cargs := lockHeld(token, until)
	n, err := tx.execN(ctx, `UPDATE merge_requests SET state = ?, lock_token = NULL, locked_by_id = NULL, lock_expires_at = NULL,
		in_progress_merge = NULL, version = version + 1 WHERE id = ?`+cond, append([]any{model.MRStateOpened, id}, cargs...)...)
	return n == 1, err
}

// MergeRequestByID returns a merge request by id.
func (tx *Tx) MergeRequestByID(ctx context.Context, id int64) (model.MergeRequest, error) {
	var m model.MergeRequest
	if err := tx.row(ctx, mrDest(&m), "SELECT "+mrColumns+" FROM merge_requests WHERE id = ?", id); err != nil {
		return m, err
	}
	return m, tx.loadMRPeople(ctx, []*model.MergeRequest{&m})
}
