package store

import (
	"context"
	"database/sql"
	"strings"

	"quarry/internal/model"
)

const memberColumns = `m.id, m.source_type, m.source_id, m.user_id, m.access_level, m.expires_at, m.created_by_id,
	m.pending, m.override, m.invite_source, m.created_at, m.updated_at, ` + userColumns

func memberDest(m *model.Member) []any {
	return append([]any{&m.ID, &m.SourceType, &m.SourceID, &m.UserID, &m.AccessLevel, nullString{&m.ExpiresAt},
		nullInt64Ptr{&m.CreatedByID}, &m.Pending, &m.Override, nullString{&m.InviteSource}, tsScan{&m.CreatedAt}, tsScan{&m.UpdatedAt}},
		userDest(&m.User)...)
}

func scanMember(r *sql.Rows) (model.Member, error) {
	var m model.Member
	err := r.Scan(memberDest(&m)...)
	return m, err
}

// UniqueMember allows one membership per user and source.
const UniqueMember = "members_source_user_key"

// CreateMember stores a membership and sets m.ID.
func (tx *Tx) CreateMember(ctx context.Context, m *model.Member) error {
	id, err := tx.insert(ctx, `INSERT INTO members (source_type, source_id, user_id, access_level, expires_at, created_by_id,
		pending, override, invite_source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, FALSE, ?, ?, ?)`,
		m.SourceType, m.SourceID, m.UserID, int(m.AccessLevel), emptyNull(m.ExpiresAt), m.CreatedByID, m.Pending,
		emptyNull(m.InviteSource), micros(m.CreatedAt), micros(m.UpdatedAt))
	m.ID = id
	return err
}

// UpdateMember writes a membership's level, expiry, override and state.
func (tx *Tx) UpdateMember(ctx context.Context, m *model.Member) error {
	_, err := tx.exec(ctx, "UPDATE members SET access_level = ?, expires_at = ?, override = ?, pending = ?, updated_at = ? WHERE id = ?",
		int(m.AccessLevel), emptyNull(m.ExpiresAt), m.Override, m.Pending, micros(tx.Now()), m.ID)
	return err
}

// DeleteMember removes a membership.
func (tx *Tx) DeleteMember(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM members WHERE id = ?", id)
	return err
}

// Member returns a user's direct membership of a source.
func (tx *Tx) Member(ctx context.Context, sourceType string, sourceID, userID int64) (model.Member, error) {
	var m model.Member
	err := tx.row(ctx, memberDest(&m), "SELECT "+memberColumns+" FROM members m JOIN users u ON u.id = m.user_id WHERE m.source_type = ? AND m.source_id = ? AND m.user_id = ?",
		sourceType, sourceID, userID)
	return m, err
}

// MemberFilter narrows member lists.
type MemberFilter struct {
	Query   string
	UserIDs []int64
	Pending *bool
}

func (f MemberFilter) apply(tx *Tx, w *where) {
	if f.Query != "" {
		pat := likePattern(f.Query)
		w.add("("+tx.ilike("u.name")+" OR "+tx.ilike("u.username")+" OR lower(u.email) = ?)", pat, pat, strings.ToLower(f.Query))
	}
	if len(f.UserIDs) > 0 {
		w.add("m.user_id IN ("+placeholders(len(f.UserIDs))+")", int64Args(f.UserIDs)...)
	}
	if f.Pending != nil {
		w.add("m.pending = ?", *f.Pending)
	}
}

// ListMembers returns one page of a source's direct members.
func (tx *Tx) ListMembers(ctx context.Context, sourceType string, sourceID int64, f MemberFilter, page model.Page) ([]model.Member, model.PageInfo, error) {
	var w where
	w.add("m.source_type = ? AND m.source_id = ?", sourceType, sourceID)
	f.apply(tx, &w)
	spec := listSpec[model.Member]{columns: memberColumns, from: "members m JOIN users u ON u.id = m.user_id", idCol: "m.id",
		where: w, order: order{}, scan: scanMember, keyOf: func(m model.Member) (any, int64) { return nil, m.ID }}
	// Every member is a user: the count and the start of an offset page
	// join users only when a condition reads them.
	if !w.reads("u.") {
		spec.countFrom = "members m"
	}
	return list(ctx, tx, spec, page)
}

// MembershipsReaching returns every membership that reaches a project or
// group: direct ones, those of the groups above it, and (for a project)
// those of groups it is shared with and their ancestors, with the level
// capped and the expiry shortened by the share. Active memberships only.
func (tx *Tx) MembershipsReaching(ctx context.Context, sourceType string, sourceID int64, f MemberFilter, today string) ([]model.Member, error) {
	var traversal string
	var nsID int64
	if sourceType == model.SourceProject {
		if err := tx.row(ctx, []any{&nsID, &traversal}, "SELECT n.id, n.traversal FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ?", sourceID); err != nil {
			return nil, err
		}
	} else {
		if err := tx.row(ctx, []any{&traversal}, "SELECT traversal FROM namespaces WHERE id = ?", sourceID); err != nil {
			return nil, err
		}
	}
	active := "m.pending = FALSE AND (m.expires_at IS NULL OR m.expires_at > ?)"
	type part struct {
		q    string
		args []any
	}
	var parts []part
	add := func(q string, a ...any) { parts = append(parts, part{q, a}) }
	cols := memberColumns
	if sourceType == model.SourceProject {
		add("SELECT "+cols+" FROM members m JOIN users u ON u.id = m.user_id WHERE m.source_type = 'Project' AND m.source_id = ? AND "+active, sourceID, today)
	}
	// Groups above (and, for a group, the group itself).
	add("SELECT "+cols+` FROM members m JOIN users u ON u.id = m.user_id JOIN namespaces g ON g.id = m.source_id
		WHERE m.source_type = 'Namespace' AND ? LIKE g.traversal || '%' AND `+active, traversal, today)
	if sourceType == model.SourceProject {
		capped := strings.Replace(cols, "m.access_level,", "CASE WHEN m.access_level < l.group_access THEN m.access_level ELSE l.group_access END,", 1)
		capped = strings.Replace(capped, "m.expires_at,", `CASE WHEN m.expires_at IS NULL THEN l.expires_at WHEN l.expires_at IS NULL THEN m.expires_at
			WHEN m.expires_at < l.expires_at THEN m.expires_at ELSE l.expires_at END,`, 1)
		add("SELECT "+capped+` FROM project_group_links l JOIN namespaces sg ON sg.id = l.group_id
			JOIN namespaces g ON sg.traversal LIKE g.traversal || '%'
			JOIN members m ON m.source_type = 'Namespace' AND m.source_id = g.id JOIN users u ON u.id = m.user_id
			WHERE l.project_id = ? AND (l.expires_at IS NULL OR l.expires_at > ?) AND `+active, sourceID, today, today)
	}
	var out []model.Member
	for _, pt := range parts {
		var w where
		f.apply(tx, &w)
		filter := ""
		if len(w.conds) > 0 {
			filter = " AND " + strings.Join(w.conds, " AND ")
		}
		err := tx.each(ctx, pt.q+filter, append(append([]any{}, pt.args...), w.args...), func(r *sql.Rows) error {
			m, err := scanMember(r)
			out = append(out, m)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OwnerCount counts a group's active owners.
func (tx *Tx) OwnerCount(ctx context.Context, groupID int64, today string) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, `SELECT COUNT(*) FROM members WHERE source_type = 'Namespace' AND source_id = ? AND access_level = 50
		AND pending = FALSE AND (expires_at IS NULL OR expires_at > ?)`, groupID, today)
	return n, err
}

// MembershipsInTree returns every direct membership (group or project) of
// a user inside a top-level group's tree.
func (tx *Tx) MembershipsInTree(ctx context.Context, traversal string, userID int64) ([]model.Member, error) {
	like := escapeLike(traversal) + "%"
	var out []model.Member
	err := tx.each(ctx, "SELECT "+memberColumns+` FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.user_id = ? AND ((m.source_type = 'Namespace' AND m.source_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\'))
		OR (m.source_type = 'Project' AND m.source_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE ? ESCAPE '\')))
		ORDER BY m.id`, []any{userID, like, like}, func(r *sql.Rows) error {
		m, err := scanMember(r)
		out = append(out, m)
		return err
	})
	return out, err
}

// BillableUsers returns the users with a membership anywhere in a
// top-level group's tree (bots and blocked users excluded), with their
// earliest membership time.
func (tx *Tx) BillableUsers(ctx context.Context, traversal string) ([]model.Member, error) {
	like := escapeLike(traversal) + "%"
	var out []model.Member
	err := tx.each(ctx, "SELECT "+memberColumns+` FROM members m JOIN users u ON u.id = m.user_id
		WHERE u.user_type = 'human' AND u.state NOT IN ('blocked', 'banned', 'ldap_blocked')
		AND ((m.source_type = 'Namespace' AND m.source_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\'))
		OR (m.source_type = 'Project' AND m.source_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE ? ESCAPE '\')))
		ORDER BY m.id`, []any{like, like}, func(r *sql.Rows) error {
		m, err := scanMember(r)
		out = append(out, m)
		return err
	})
	return out, err
}

// SourceNames returns display names and full paths of member sources.
func (tx *Tx) SourceNames(ctx context.Context, sourceType string, ids []int64) (map[int64][2]string, error) {
	out := map[int64][2]string{}
	if len(ids) == 0 {
		return out, nil
	}
	q := "SELECT id, full_name, full_path FROM namespaces WHERE id IN (" + placeholders(len(ids)) + ")"
	if sourceType == model.SourceProject {
		q = "SELECT p.id, n.full_name || ' / ' || p.name, n.full_path || '/' || p.path FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id IN (" + placeholders(len(ids)) + ")"
	}
	err := tx.each(ctx, q, int64Args(ids), func(r *sql.Rows) error {
		var id int64
		var name, path string
		err := r.Scan(&id, &name, &path)
		out[id] = [2]string{name, path}
		return err
	})
	return out, err
}
