package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"quarry/internal/model"
)

const milestoneColumns = `m.id, m.iid, m.project_id, m.group_id, m.title, m.description, m.state, m.due_date, m.start_date,
	m.created_at, m.updated_at, m.version, COALESCE(gn.full_path, pn.full_path || '/' || p.path, '')`

// milestoneFrom joins a milestone's group or project, for its full path.
const milestoneFrom = `milestones m LEFT JOIN namespaces gn ON gn.id = m.group_id
	LEFT JOIN projects p ON p.id = m.project_id LEFT JOIN namespaces pn ON pn.id = p.namespace_id`

func milestoneDest(m *model.Milestone) []any {
	return []any{&m.ID, &m.IID, nullInt64{&m.ProjectID}, nullInt64{&m.GroupID}, &m.Title, nullStrPtr{&m.Description}, &m.State,
		nullString{&m.DueDate}, nullString{&m.StartDate}, tsScan{&m.CreatedAt}, tsScan{&m.UpdatedAt}, &m.Version, &m.ParentPath}
}

func scanMilestone(r *sql.Rows) (model.Milestone, error) {
	var m model.Milestone
	err := r.Scan(milestoneDest(&m)...)
	return m, err
}

// Unique indexes on milestones: one title per project and per group.
const (
	UniqueMilestoneProjectTitle = "milestones_project_title"
	UniqueMilestoneGroupTitle   = "milestones_group_title"
)

func init() {
	sqliteColumnUniques["milestones.project_id, milestones.title"] = UniqueMilestoneProjectTitle
	sqliteColumnUniques["milestones.group_id, milestones.title"] = UniqueMilestoneGroupTitle
}

// IIDMilestones is the internal id usage of milestones, per project and
// per group.
const IIDMilestones = "milestones"

// NextNamespaceIID hands out the next per-group number of a kind (1, 2,
// …), never the same twice: NextIID's twin for groups.
func (tx *Tx) NextNamespaceIID(ctx context.Context, namespaceID int64, usage string) (int64, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, `INSERT INTO namespace_internal_ids (namespace_id, usage, last_value) VALUES (?, ?, 1)
		ON CONFLICT (namespace_id, usage) DO UPDATE SET last_value = namespace_internal_ids.last_value + 1 RETURNING last_value`,
		namespaceID, usage)
	return n, err
}

// CreateMilestone stores m with its project's or group's next iid and
// sets its ID, IID, version and times.
func (tx *Tx) CreateMilestone(ctx context.Context, m *model.Milestone) error {
	var iid int64
	var err error
	if m.ProjectID != 0 {
		iid, err = tx.NextIID(ctx, m.ProjectID, IIDMilestones)
	} else {
		iid, err = tx.NextNamespaceIID(ctx, m.GroupID, IIDMilestones)
	}
	if err != nil {
		return err
	}
	now := tx.Now()
	m.IID, m.CreatedAt, m.UpdatedAt, m.Version = iid, now, now, 1
	m.ID, err = tx.insert(ctx, `INSERT INTO milestones (project_id, group_id, iid, title, description, state, due_date, start_date,
		created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
		zeroNull(m.ProjectID), zeroNull(m.GroupID), m.IID, m.Title, nullStringValue(m.Description), m.State, emptyNull(m.DueDate),
		emptyNull(m.StartDate), micros(now), micros(now))
	return err
}

// ImportMilestone stores m keeping its IID (a group or project import
// bringing its milestones along) and moves the parent's counter past it,
// so milestones made later never take an imported iid. It sets m's ID,
// version and times (CreatedAt and UpdatedAt kept when set).
func (tx *Tx) ImportMilestone(ctx context.Context, m *model.Milestone) error {
	var err error
	if m.ProjectID != 0 {
		_, err = tx.exec(ctx, `INSERT INTO internal_ids (project_id, usage, last_value) VALUES (?, ?, ?)
			ON CONFLICT (project_id, usage) DO UPDATE SET last_value = CASE WHEN internal_ids.last_value > excluded.last_value
			THEN internal_ids.last_value ELSE excluded.last_value END`, m.ProjectID, IIDMilestones, m.IID)
	} else {
		_, err = tx.exec(ctx, `INSERT INTO namespace_internal_ids (namespace_id, usage, last_value) VALUES (?, ?, ?)
			ON CONFLICT (namespace_id, usage) DO UPDATE SET last_value = CASE WHEN namespace_internal_ids.last_value > excluded.last_value
			THEN namespace_internal_ids.last_value ELSE excluded.last_value END`, m.GroupID, IIDMilestones, m.IID)
	}
	if err != nil {
		return err
	}
	now := tx.Now()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = now
	}
	m.Version = 1
	m.ID, err = tx.insert(ctx, `INSERT INTO milestones (project_id, group_id, iid, title, description, state, due_date, start_date,
		created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
		zeroNull(m.ProjectID), zeroNull(m.GroupID), m.IID, m.Title, nullStringValue(m.Description), m.State, emptyNull(m.DueDate),
		emptyNull(m.StartDate), micros(m.CreatedAt), micros(m.UpdatedAt))
	return err
}

// UpdateMilestone writes m's title, description, state and dates if its
// version is still m.Version; ok is false when another writer came first.
func (tx *Tx) UpdateMilestone(ctx context.Context, m *model.Milestone) (ok bool, err error) {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE milestones SET title = ?, description = ?, state = ?, due_date = ?, start_date = ?, updated_at = ?,
		version = version + 1 WHERE id = ? AND version = ?`,
		m.Title, nullStringValue(m.Description), m.State, emptyNull(m.DueDate), emptyNull(m.StartDate), micros(now), m.ID, m.Version)
	if err != nil || n == 0 {
		return false, err
	}
	m.UpdatedAt = now
	m.Version++
	return true, nil
}

// DeleteMilestone removes a milestone; model.ErrNotFound when it is gone.
func (tx *Tx) DeleteMilestone(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM milestones WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// MilestoneByID returns one milestone.
func (tx *Tx) MilestoneByID(ctx context.Context, id int64) (model.Milestone, error) {
	var m model.Milestone
	err := tx.row(ctx, milestoneDest(&m), "SELECT "+milestoneColumns+" FROM "+milestoneFrom+" WHERE m.id = ?", id)
	return m, err
}

// MilestoneTitleInProjectScope reports whether title is used by another
// milestone (not except) of the project or of the groups groupIDs (the
// project's group and its ancestors): GitLab's uniqueness for a project
// milestone.
func (tx *Tx) MilestoneTitleInProjectScope(ctx context.Context, projectID int64, groupIDs []int64, title string, except int64) (bool, error) {
	q := "SELECT COUNT(*) FROM milestones WHERE title = ? AND id <> ? AND (project_id = ?"
	args := []any{title, except, projectID}
	if len(groupIDs) > 0 {
		q += " OR group_id IN (" + placeholders(len(groupIDs)) + ")"
		args = append(args, int64Args(groupIDs)...)
	}
	var n int
	err := tx.row(ctx, []any{&n}, q+")", args...)
	return n > 0, err
}

// MilestoneTitleInGroupScope reports whether title is used by another
// milestone (not except) of the groups ancestorIDs, of the group at
// traversal or its descendants, or of their projects: GitLab's uniqueness
// for a group milestone (its whole hierarchy).
func (tx *Tx) MilestoneTitleInGroupScope(ctx context.Context, traversal string, ancestorIDs []int64, title string, except int64) (bool, error) {
	like := escapeLike(traversal) + "%"
	q := `SELECT COUNT(*) FROM milestones WHERE title = ? AND id <> ? AND (
		group_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\')
		OR project_id IN (SELECT pr.id FROM projects pr JOIN namespaces ns ON ns.id = pr.namespace_id WHERE ns.traversal LIKE ? ESCAPE '\')`
	args := []any{title, except, like, like}
	if len(ancestorIDs) > 0 {
		q += " OR group_id IN (" + placeholders(len(ancestorIDs)) + ")"
		args = append(args, int64Args(ancestorIDs)...)
	}
	var n int
	err := tx.row(ctx, []any{&n}, q+")", args...)
	return n > 0, err
}

// MilestoneFilter selects milestones: those of ProjectID and of the groups
// GroupIDs, narrowed by the other fields (zero values do not narrow).
type MilestoneFilter struct {
	ProjectID int64
	GroupIDs  []int64
	// OtherGroupIDs adds the group milestones of these groups, and
	// GroupsUnder those of every group whose traversal starts with it (a
	// group and its descendants); of those groups, only the ones
	// OtherGroupsVisibleTo sees when it is set.
	OtherGroupIDs        []int64
	GroupsUnder          string
	OtherGroupsVisibleTo *Viewer
	IIDs                 []int64
	State                string // active, closed
	Title                string // exact
	Search               string // title or description
	SearchTitle          string
	// UpdatedBefore and UpdatedAfter bound updated_at (exclusive).
	UpdatedBefore, UpdatedAfter *time.Time
	// TimeframeStart and TimeframeEnd (YYYY-MM-DD, both or neither) keep
	// milestones with a date that overlap the timeframe.
	TimeframeStart, TimeframeEnd string
}

// fuzzyCond matches a search term as GitLab's fuzzy_search does: terms of
// three characters or more anywhere in a column, shorter ones only as the
// whole value; case ignored.
func (tx *Tx) fuzzyCond(w *where, term string, cols ...string) {
	conds := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		if len([]rune(term)) >= 3 {
			conds[i], args[i] = tx.ilike(c), likePattern(term)
		} else {
			conds[i], args[i] = "lower("+c+") = ?", strings.ToLower(term)
		}
	}
	w.add("("+strings.Join(conds, " OR ")+")", args...)
}

// ListMilestones returns one page of milestones, by due date (none last),
// then id.
func (tx *Tx) ListMilestones(ctx context.Context, f MilestoneFilter, page model.Page) ([]model.Milestone, model.PageInfo, error) {
	var w where
	var owners []string
	var ownerArgs []any
	if f.ProjectID != 0 {
		owners = append(owners, "m.project_id = ?")
		ownerArgs = append(ownerArgs, f.ProjectID)
	}
	if len(f.GroupIDs) > 0 {
		owners = append(owners, "m.group_id IN ("+placeholders(len(f.GroupIDs))+")")
		ownerArgs = append(ownerArgs, int64Args(f.GroupIDs)...)
	}
	if len(f.OtherGroupIDs) > 0 || f.GroupsUnder != "" {
		var which []string
		var sub where
		var whichArgs []any
		if len(f.OtherGroupIDs) > 0 {
			which = append(which, "n.id IN ("+placeholders(len(f.OtherGroupIDs))+")")
			whichArgs = append(whichArgs, int64Args(f.OtherGroupIDs)...)
		}
		if f.GroupsUnder != "" {
			which = append(which, `n.traversal LIKE ? ESCAPE '\'`)
			whichArgs = append(whichArgs, escapeLike(f.GroupsUnder)+"%")
		}
		sub.add("("+strings.Join(which, " OR ")+")", whichArgs...)
		if f.OtherGroupsVisibleTo != nil {
			sub.visibleGroupCond(*f.OtherGroupsVisibleTo)
		}
		owners = append(owners, "m.group_id IN (SELECT n.id FROM namespaces n"+sub.sql()+")")
		ownerArgs = append(ownerArgs, sub.args...)
	}
	if len(owners) == 0 {
		owners = []string{"1 = 0"}
	}
	w.add("("+strings.Join(owners, " OR ")+")", ownerArgs...)
	if len(f.IIDs) > 0 {
		w.add("m.iid IN ("+placeholders(len(f.IIDs))+")", int64Args(f.IIDs)...)
	}
	if f.State != "" {
		w.add("m.state = ?", f.State)
	}
	if f.Title != "" {
		w.add("m.title = ?", f.Title)
	}
	if f.Search != "" {
		tx.fuzzyCond(&w, f.Search, "m.title", "m.description")
	}
	if f.SearchTitle != "" {
		tx.fuzzyCond(&w, f.SearchTitle, "m.title")
	}
	if f.UpdatedBefore != nil {
		w.add("m.updated_at < ?", micros(*f.UpdatedBefore))
	}
	if f.UpdatedAfter != nil {
		w.add("m.updated_at > ?", micros(*f.UpdatedAfter))
	}
	if f.TimeframeStart != "" && f.TimeframeEnd != "" {
		w.add("(m.start_date IS NOT NULL OR m.due_date IS NOT NULL)")
		w.add("(m.start_date IS NULL OR m.start_date <= ?)", f.TimeframeEnd)
		w.add("(m.due_date IS NULL OR m.due_date >= ?)", f.TimeframeStart)
	}
	spec := listSpec[model.Milestone]{columns: milestoneColumns, from: milestoneFrom, idCol: "m.id", where: w,
		order: order{column: "COALESCE(m.due_date, '9999-99-99')"}, scan: scanMilestone,
		keyOf: func(m model.Milestone) (any, int64) {
			if m.DueDate == "" {
				return "9999-99-99", m.ID
			}
			return m.DueDate, m.ID
		}}
	return list(ctx, tx, spec, page)
}

// GroupMilestones returns a group's milestones with ids after afterID,
// oldest first, at most limit (for exports, a page at a time: a group's
// milestones with their ids, to remap on import).
func (tx *Tx) GroupMilestones(ctx context.Context, groupID, afterID int64, limit int) ([]model.Milestone, error) {
	var out []model.Milestone
	err := tx.each(ctx, "SELECT "+milestoneColumns+" FROM "+milestoneFrom+" WHERE m.group_id = ? AND m.id > ? ORDER BY m.id LIMIT ?",
		[]any{groupID, afterID, limit},
		func(r *sql.Rows) error {
			m, err := scanMilestone(r)
			out = append(out, m)
			return err
		})
	return out, err
}

// nullStrPtr scans a nullable text column into a *string (nil for NULL).
type nullStrPtr struct{ p **string }

func (n nullStrPtr) Scan(v any) error {
	if v == nil {
		*n.p = nil
		return nil
	}
	var s string
	if err := (nullString{&s}).Scan(v); err != nil {
		return err
	}
	*n.p = &s
	return nil
}
