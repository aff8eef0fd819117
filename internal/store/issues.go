package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"quarry/internal/model"
)

// Issues and their assignees. Edits carry the version read
// (UpdateIssue); every write recounts its project's open issues in the
// project's row (recountOpenIssues), which moves the project's
// entity_version.

// IIDIssues counts a project's issues.
const IIDIssues = "issues"

const issueColumns = `i.id, i.iid, i.project_id, i.title, i.description, i.state, i.author_id, i.closed_by_id, i.closed_at,
	i.confidential, i.discussion_locked, i.due_date, i.milestone_id, i.labels, i.created_at, i.updated_at, i.version`

func issueDest(i *model.Issue) []any {
	return []any{&i.ID, &i.IID, &i.ProjectID, &i.Title, &i.Description, &i.State, nullInt64{&i.AuthorID}, nullInt64{&i.ClosedByID},
		nullTSScan{&i.ClosedAt}, &i.Confidential, &i.DiscussionLocked, nullString{&i.DueDate}, nullInt64{&i.MilestoneID},
		jsonText{&i.Labels}, tsScan{&i.CreatedAt}, tsScan{&i.UpdatedAt}, &i.Version}
}

func scanIssue(r *sql.Rows) (model.Issue, error) {
	var i model.Issue
	return i, r.Scan(issueDest(&i)...)
}

// CreateIssue stores i with its project's next iid and sets its ID, IID
// and times (CreatedAt, when set, is kept: an owner's backdated issue).
func (tx *Tx) CreateIssue(ctx context.Context, i *model.Issue) error {
	iid, err := tx.NextIID(ctx, i.ProjectID, IIDIssues)
	if err != nil {
		return err
	}
	now := tx.Now()
	i.IID, i.UpdatedAt = iid, now
	if i.CreatedAt.IsZero() {
		i.CreatedAt = now
	}
	if i.Labels == nil {
		i.Labels = []string{}
	}
	i.ID, err = tx.insert(ctx, `INSERT INTO issues (iid, project_id, title, description, state, author_id, closed_by_id, closed_at,
		confidential, discussion_locked, due_date, milestone_id, labels, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.IID, i.ProjectID, i.Title, i.Description, i.State, zeroNull(i.AuthorID), zeroNull(i.ClosedByID), nullMicros(i.ClosedAt),
		i.Confidential, i.DiscussionLocked, emptyNull(i.DueDate), zeroNull(i.MilestoneID), jsonValue(i.Labels),
		micros(i.CreatedAt), micros(i.UpdatedAt))
	if err != nil {
		return err
	}
	if err := tx.setIssueAssignees(ctx, i); err != nil {
		return err
	}
	return tx.recountOpenIssues(ctx, i.ProjectID)
}

// setIssueAssignees replaces an issue's assignees.
func (tx *Tx) setIssueAssignees(ctx context.Context, i *model.Issue) error {
	if _, err := tx.exec(ctx, "DELETE FROM issue_assignees WHERE issue_id = ?", i.ID); err != nil {
		return err
	}
	for n, uid := range i.AssigneeIDs {
		if _, err := tx.exec(ctx, "INSERT INTO issue_assignees (issue_id, user_id, position) VALUES (?, ?, ?)", i.ID, uid, n); err != nil {
			return err
		}
	}
	return nil
}

// recountOpenIssues sets a project's open issue counts from its issues
// (written only when they changed, so the project's entity_version moves
// only then).
func (tx *Tx) recountOpenIssues(ctx context.Context, projectID int64) error {
	_, err := tx.exec(ctx, `UPDATE projects SET
		open_issues_count = (SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened'),
		open_confidential_issues_count = (SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened' AND confidential)
		WHERE id = ? AND (open_issues_count <> (SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened')
		OR open_confidential_issues_count <> (SELECT COUNT(*) FROM issues WHERE project_id = ? AND state = 'opened' AND confidential))`,
		projectID, projectID, projectID, projectID, projectID)
	return err
}

// Issue returns a project's issue by iid with its assignees.
func (tx *Tx) Issue(ctx context.Context, projectID, iid int64) (model.Issue, error) {
	var i model.Issue
	if err := tx.row(ctx, issueDest(&i), "SELECT "+issueColumns+" FROM issues i WHERE i.project_id = ? AND i.iid = ?", projectID, iid); err != nil {
		return i, err
	}
	return i, tx.loadIssueAssignees(ctx, []*model.Issue{&i})
}

// loadIssueAssignees fills the assignees of issues, in order (one
// statement for all).
func (tx *Tx) loadIssueAssignees(ctx context.Context, list []*model.Issue) error {
	if len(list) == 0 {
		return nil
	}
	byID := make(map[int64]*model.Issue, len(list))
	ids := make([]int64, 0, len(list))
	for _, i := range list {
		byID[i.ID] = i
		ids = append(ids, i.ID)
		i.AssigneeIDs = nil
	}
	return tx.each(ctx, "SELECT issue_id, user_id FROM issue_assignees WHERE issue_id IN ("+placeholders(len(ids))+
		") ORDER BY issue_id, position", int64Args(ids), func(r *sql.Rows) error {
		var iid, uid int64
		if err := r.Scan(&iid, &uid); err != nil {
			return err
		}
		if i := byID[iid]; i != nil {
			i.AssigneeIDs = append(i.AssigneeIDs, uid)
		}
		return nil
	})
}

// UpdateIssue writes i (its assignees too) if it still has the version
// read; model.ErrConflict when another writer changed it first. Its
// updated_at moves to now.
func (tx *Tx) UpdateIssue(ctx context.Context, i *model.Issue) error {
	i.UpdatedAt = tx.Now()
	if i.Labels == nil {
		i.Labels = []string{}
	}
	n, err := tx.execN(ctx, `UPDATE issues SET title = ?, description = ?, state = ?, closed_by_id = ?, closed_at = ?,
		confidential = ?, discussion_locked = ?, due_date = ?, milestone_id = ?, labels = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ?`,
		i.Title, i.Description, i.State, zeroNull(i.ClosedByID), nullMicros(i.ClosedAt), i.Confidential, i.DiscussionLocked,
		emptyNull(i.DueDate), zeroNull(i.MilestoneID), jsonValue(i.Labels), micros(i.UpdatedAt), i.ID, i.Version)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("409 Conflict: issue changed")
	}
	i.Version++
	if err := tx.setIssueAssignees(ctx, i); err != nil {
		return err
	}
	return tx.recountOpenIssues(ctx, i.ProjectID)
}

// DeleteIssue removes an issue (and its events, notes and award emoji);
// false when there was none.
func (tx *Tx) DeleteIssue(ctx context.Context, i model.Issue) (bool, error) {
	if err := tx.DeleteNotesOf(ctx, model.NoteableIssue, i.ID); err != nil {
		return false, err
	}
	if _, err := tx.exec(ctx, "DELETE FROM events WHERE target_type = ? AND target_id = ?", model.EventTargetIssue, i.ID); err != nil {
		return false, err
	}
	n, err := tx.execN(ctx, "DELETE FROM issues WHERE id = ?", i.ID)
	if err != nil || n == 0 {
		return false, err
	}
	return true, tx.recountOpenIssues(ctx, i.ProjectID)
}

// AddIssueEvent records that author did action to issue id, in its
// project; nothing when author is 0 (a system write).
func (tx *Tx) AddIssueEvent(ctx context.Context, id, authorID int64, action model.EventAction) error {
	if authorID == 0 {
		return nil
	}
	_, err := tx.exec(ctx, `INSERT INTO events (project_id, author_id, action, target_type, target_id, created_at)
		SELECT project_id, ?, ?, ?, id, ? FROM issues WHERE id = ?`,
		authorID, string(action), model.EventTargetIssue, micros(tx.Now()), id)
	return err
}

// IssueVisibility limits a list to the issues a viewer may see:
// confidential ones only in the projects where the viewer sees them all
// (Reporter up), or where the viewer is their author or an assignee.
type IssueVisibility struct {
	UserID int64 // 0: anonymous
	// AllIn are the projects whose confidential issues the viewer sees.
	AllIn []int64
}

func (v *IssueVisibility) cond(w *where) {
	conds := "i.confidential = FALSE"
	var args []any
	if len(v.AllIn) > 0 {
		conds += " OR i.project_id IN (" + placeholders(len(v.AllIn)) + ")"
		args = append(args, int64Args(v.AllIn)...)
	}
	if v.UserID != 0 {
		conds += " OR i.author_id = ? OR i.id IN (SELECT issue_id FROM issue_assignees WHERE user_id = ?)"
		args = append(args, v.UserID, v.UserID)
	}
	w.add("("+conds+")", args...)
}

// IssueFilter selects issues for a list.
type IssueFilter struct {
	// ProjectIDs limits to these projects (nil: no limit; empty: none).
	ProjectIDs []int64
	// Under, a namespace's traversal ("1/5/"), limits to the projects of
	// its tree; Viewer, when set, to the projects the viewer sees whose
	// issues are enabled for everyone who sees them.
	Under  string
	Viewer *Viewer
	// Visibility, when set, hides the confidential issues the viewer may
	// not see.
	Visibility *IssueVisibility
	State      string // "" or "all": any
	AuthorID   int64
	AssigneeID int64 // a user, FilterNone or FilterAny
	// Labels must all be carried; LabelsNone: no label at all; LabelsAny:
	// some label.
	Labels                []string
	LabelsNone, LabelsAny bool
	// MilestoneID is a milestone's id; Milestone a title, or "None" (no
	// milestone) or "Any" (some milestone).
	MilestoneID int64
	Milestone   string
	// ReleaseTag keeps the issues whose milestone is one of the
	// milestones of their project's release of that tag (the web list's
	// release_tag); "None" (any case) those whose milestone is in no
	// release (or who have none), "Any" those whose milestone is in one.
	ReleaseTag string
	Search     string
	// SearchTitle and SearchDescription say where Search looks (both
	// when neither).
	SearchTitle, SearchDescription bool
	IIDs                           []int64
	Confidential                   *bool
	ClosedByID                     int64
	// DueNone keeps issues without a due date, DueAny those with one;
	// DueFrom and DueTo (YYYY-MM-DD, inclusive, "" unbounded) bound it.
	DueNone, DueAny bool
	DueFrom, DueTo  string
	// Nothing matches nothing (an issue type Quarry has none of).
	Nothing       bool
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	UpdatedAfter  *time.Time
	UpdatedBefore *time.Time
	OrderBy       string // created_at (default), updated_at, due_date, title
	Asc           bool
}

func (f IssueFilter) where(tx *Tx) where {
	var w where
	if f.ProjectIDs != nil {
		if len(f.ProjectIDs) == 0 {
			w.add("1 = 0")
		} else {
			w.add("i.project_id IN ("+placeholders(len(f.ProjectIDs))+")", int64Args(f.ProjectIDs)...)
		}
	}
	if f.Under != "" {
		w.add(`i.project_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id
			WHERE n.traversal LIKE ? ESCAPE '\' AND p.issues_access_level <> 'disabled')`, escapeLike(f.Under)+"%")
	}
	if f.Viewer != nil && !f.Viewer.Admin {
		var pw where
		pw.visibleProjectCond(*f.Viewer)
		pw.add("p.issues_access_level = 'enabled'")
		w.add("i.project_id IN (SELECT p.id FROM projects p"+pw.sql()+")", pw.args...)
	}
	if f.Visibility != nil {
		f.Visibility.cond(&w)
	}
	if f.State != "" && f.State != "all" {
		w.add("i.state = ?", f.State)
	}
	if f.AuthorID != 0 {
		w.add("i.author_id = ?", f.AuthorID)
	}
	switch {
	case f.AssigneeID > 0:
		w.add("i.id IN (SELECT issue_id FROM issue_assignees WHERE user_id = ?)", f.AssigneeID)
	case f.AssigneeID == FilterNone:
		w.add("i.id NOT IN (SELECT issue_id FROM issue_assignees)")
	case f.AssigneeID == FilterAny:
		w.add("i.id IN (SELECT issue_id FROM issue_assignees)")
	}
	for _, l := range f.Labels {
		w.add(tx.labelCond("i.labels"), labelArg(l))
	}
	if f.LabelsNone {
		w.add("i.labels = '[]'")
	}
	if f.LabelsAny {
		w.add("i.labels <> '[]'")
	}
	if f.MilestoneID != 0 {
		w.add("i.milestone_id = ?", f.MilestoneID)
	}
	switch f.Milestone {
	case "":
	case "None":
		w.add("i.milestone_id IS NULL")
	case "Any":
		w.add("i.milestone_id IS NOT NULL")
	default:
		w.add("i.milestone_id IN (SELECT id FROM milestones WHERE title = ?)", f.Milestone)
	}
	switch {
	case f.ReleaseTag == "":
	case strings.EqualFold(f.ReleaseTag, "none"):
		w.add("(i.milestone_id IS NULL OR i.milestone_id NOT IN (SELECT milestone_id FROM release_milestones))")
	case strings.EqualFold(f.ReleaseTag, "any"):
		w.add("i.milestone_id IN (SELECT milestone_id FROM release_milestones)")
	default:
		w.add(`i.milestone_id IN (SELECT rm.milestone_id FROM release_milestones rm JOIN releases r ON r.id = rm.release_id
			WHERE r.project_id = i.project_id AND r.tag = ?)`, f.ReleaseTag)
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		switch {
		case f.SearchTitle && !f.SearchDescription:
			w.add(tx.ilike("i.title"), pat)
		case f.SearchDescription && !f.SearchTitle:
			w.add(tx.ilike("i.description"), pat)
		default:
			w.add("("+tx.ilike("i.title")+" OR "+tx.ilike("i.description")+")", pat, pat)
		}
	}
	if len(f.IIDs) > 0 {
		w.add("i.iid IN ("+placeholders(len(f.IIDs))+")", int64Args(f.IIDs)...)
	}
	if f.Confidential != nil {
		w.add("i.confidential = ?", *f.Confidential)
	}
	if f.ClosedByID != 0 {
		w.add("i.closed_by_id = ?", f.ClosedByID)
	}
	if f.DueNone {
		w.add("i.due_date IS NULL")
	}
	if f.DueAny {
		w.add("i.due_date IS NOT NULL")
	}
	if f.DueFrom != "" {
		w.add("i.due_date >= ?", f.DueFrom)
	}
	if f.DueTo != "" {
		w.add("i.due_date <= ?", f.DueTo)
	}
	if f.Nothing {
		w.add("1 = 0")
	}

	for _, c := range []struct {
		cond string
		t    *time.Time
	}{{"i.created_at >= ?", f.CreatedAfter}, {"i.created_at <= ?", f.CreatedBefore}, {"i.updated_at >= ?", f.UpdatedAfter},
		{"i.updated_at <= ?", f.UpdatedBefore}} {
		if c.t != nil {
			w.add(c.cond, micros(*c.t))
		}
	}
	return w
}

// noDueDate sorts issues without a due date after every date.
const noDueDate = "9999-12-31"

// Issues lists issues with their assignees, newest first unless asked.
func (tx *Tx) Issues(ctx context.Context, f IssueFilter, page model.Page) ([]model.Issue, model.PageInfo, error) {
	col := "i.created_at"
	switch f.OrderBy {
	case "updated_at":
		col = "i.updated_at"
	case "title":
		col = "i.title"
	case "due_date":
		col = "COALESCE(i.due_date, '" + noDueDate + "')"
	}
	if page.Keyset && page.Cursor != "" {
		// A cursor's key must be of the ordering's type (a time's micros,
		// or a text): PostgreSQL refuses a comparison of others.
		c, err := decodeCursor(page.Cursor)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		_, isText := c.Key.(string)
		_, isNumber := c.Key.(int64)
		if text := f.OrderBy == "title" || f.OrderBy == "due_date"; (text && !isText) || (!text && !isNumber) {
			return nil, model.PageInfo{}, model.Param("cursor is invalid")
		}
	}
	list, info, err := list(ctx, tx, listSpec[model.Issue]{
		columns: issueColumns, from: "issues i", idCol: "i.id", where: f.where(tx), order: order{column: col, desc: !f.Asc},
		keyNotNull: true, scan: scanIssue,
		keyOf: func(i model.Issue) (any, int64) {
			switch f.OrderBy {
			case "updated_at":
				return micros(i.UpdatedAt), i.ID
			case "title":
				return i.Title, i.ID
			case "due_date":
				if i.DueDate == "" {
					return noDueDate, i.ID
				}
				return i.DueDate, i.ID
			}
			return micros(i.CreatedAt), i.ID
		},
	}, page)
	if err != nil {
		return nil, info, err
	}
	ptrs := make([]*model.Issue, len(list))
	for n := range list {
		ptrs[n] = &list[n]
	}
	return list, info, tx.loadIssueAssignees(ctx, ptrs)
}

// MilestonesByIDs loads milestones (with their parents' paths) by id, in
// one statement.
func (tx *Tx) MilestonesByIDs(ctx context.Context, ids []int64) (map[int64]model.Milestone, error) {
	out := map[int64]model.Milestone{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+milestoneColumns+" FROM "+milestoneFrom+" WHERE m.id IN ("+placeholders(len(ids))+")",
		int64Args(ids), func(r *sql.Rows) error {
			m, err := scanMilestone(r)
			out[m.ID] = m
			return err
		})
	return out, err
}

// IssueCounts are counts of issues by state.
type IssueCounts struct {
	Opened, Closed int
}

// IssueCountsWhere counts the issues of a filter by state, up to
// model.CountLimit each (milestones' issue_stats, labels' counts).
func (tx *Tx) IssueCountsWhere(ctx context.Context, f IssueFilter) (IssueCounts, error) {
	var c IssueCounts
	w := f.where(tx)
	for _, s := range []struct {
		state string
		n     *int
	}{{model.IssueOpened, &c.Opened}, {model.IssueClosed, &c.Closed}} {
		ws := w
		ws.conds = append(append([]string{}, w.conds...), "i.state = ?")
		ws.args = append(append([]any{}, w.args...), s.state)
		if err := tx.row(ctx, []any{s.n}, "SELECT COUNT(*) FROM (SELECT 1 FROM issues i"+ws.sql()+" LIMIT ?) AS counted",
			append(ws.args, model.CountLimit)...); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ProjectsWithIssues lists the projects that have issues (the candidates
// of GET /issues, filtered by access after).
func (tx *Tx) ProjectsWithIssues(ctx context.Context) ([]model.Project, error) {
	return tx.projectsWhere(ctx, "p.id IN (SELECT DISTINCT project_id FROM issues)")
}

// MilestoneIssueCounts counts the issues of milestones by state (a
// release's issue_stats: GitLab counts every issue of the milestone), in
// one statement.
func (tx *Tx) MilestoneIssueCounts(ctx context.Context, milestoneIDs []int64) (map[int64]IssueCounts, error) {
	out := map[int64]IssueCounts{}
	if len(milestoneIDs) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT milestone_id, state, COUNT(*) FROM issues WHERE milestone_id IN ("+placeholders(len(milestoneIDs))+
		") GROUP BY milestone_id, state", int64Args(milestoneIDs), func(r *sql.Rows) error {
		var id int64
		var state string
		var n int
		if err := r.Scan(&id, &state, &n); err != nil {
			return err
		}
		c := out[id]
		switch state {
		case model.IssueOpened:
			c.Opened = n
		case model.IssueClosed:
			c.Closed = n
		}
		out[id] = c
		return nil
	})
	return out, err
}

// IssuesByIDs loads issues (with their assignees) by id, in two
// statements: the events of a page whose visibility depends on them.
func (tx *Tx) IssuesByIDs(ctx context.Context, ids []int64) (map[int64]model.Issue, error) {
	out := map[int64]model.Issue{}
	if len(ids) == 0 {
		return out, nil
	}
	var list []model.Issue
	err := tx.each(ctx, "SELECT "+issueColumns+" FROM issues i WHERE i.id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			i, err := scanIssue(r)
			list = append(list, i)
			return err
		})
	if err != nil {
		return nil, err
	}
	ptrs := make([]*model.Issue, len(list))
	for n := range list {
		ptrs[n] = &list[n]
	}
	if err := tx.loadIssueAssignees(ctx, ptrs); err != nil {
		return nil, err
	}
	for _, i := range list {
		out[i.ID] = i
	}
	return out, nil
}

// LabelsTitled lists the labels of projects and groups whose titles are
// among titles, in one statement (an issue list's with_labels_details).
func (tx *Tx) LabelsTitled(ctx context.Context, projectIDs, groupIDs []int64, titles []string) ([]model.Label, error) {
	if len(titles) == 0 || len(projectIDs)+len(groupIDs) == 0 {
		return nil, nil
	}
	var or []string
	var args []any
	if len(projectIDs) > 0 {
		or = append(or, "l.project_id IN ("+placeholders(len(projectIDs))+")")
		args = append(args, int64Args(projectIDs)...)
	}
	if len(groupIDs) > 0 {
		or = append(or, "l.group_id IN ("+placeholders(len(groupIDs))+")")
		args = append(args, int64Args(groupIDs)...)
	}
	args = append(args, anys(titles)...)
	var out []model.Label
	err := tx.each(ctx, "SELECT "+labelColumns+" FROM labels l WHERE ("+strings.Join(or, " OR ")+") AND l.title IN ("+
		placeholders(len(titles))+")", args, func(r *sql.Rows) error {
		l, err := scanLabel(r)
		out = append(out, l)
		return err
	})
	return out, err
}
