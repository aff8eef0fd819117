package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"quarry/internal/model"
)

// RefreshAuthorizations recomputes, for each user, every path of access to
// projects and namespaces: direct memberships, memberships inherited down
// the group tree, groups shared with groups the user is a direct member
// of (and the groups below them), the personal namespace, projects shared
// with groups, and level-0 "can see" rows for the groups above anything
// the user reaches.
func (tx *Tx) RefreshAuthorizations(ctx context.Context, userIDs ...int64) error {
	seen := map[int64]bool{}
	for _, u := range userIDs {
		if u == 0 || seen[u] {
			continue
		}
		seen[u] = true
		if err := tx.refreshUser(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) refreshUser(ctx context.Context, u int64) error {
	steps := []struct {
		q    string
		args []any
	}{
		{"DELETE FROM namespace_authorizations WHERE user_id = ?", []any{u}},
		{"DELETE FROM project_authorizations WHERE user_id = ?", []any{u}},
		// Group memberships reach the group and every group below it.
		{`INSERT INTO namespace_authorizations (user_id, namespace_id, access_level, expires_at)
			SELECT m.user_id, d.id, m.access_level, m.expires_at FROM members m
			JOIN namespaces g ON g.id = m.source_id
			JOIN namespaces d ON d.traversal LIKE g.traversal || '%'
			WHERE m.user_id = ? AND m.source_type = 'Namespace' AND m.pending = FALSE`, []any{u}},
		// A group shared with a group the user is a direct member of reaches
		// the shared group and every group below it, capped at the share's
		// level and expiring with the earlier of the two dates (GitLab gives
		// a share to the invited group's direct members only).
		{`INSERT INTO namespace_authorizations (user_id, namespace_id, access_level, expires_at)
			SELECT m.user_id, d.id,
				CASE WHEN m.access_level < l.group_access THEN m.access_level ELSE l.group_access END,
				CASE WHEN m.expires_at IS NULL THEN l.expires_at WHEN l.expires_at IS NULL THEN m.expires_at
					WHEN m.expires_at < l.expires_at THEN m.expires_at ELSE l.expires_at END
			FROM members m JOIN group_group_links l ON l.shared_with_group_id = m.source_id
			JOIN namespaces g ON g.id = l.shared_group_id
			JOIN namespaces d ON d.traversal LIKE g.traversal || '%'
			WHERE m.user_id = ? AND m.source_type = 'Namespace' AND m.pending = FALSE`, []any{u}},
		// The personal namespace belongs to its user.
		{`INSERT INTO namespace_authorizations (user_id, namespace_id, access_level, expires_at)
			SELECT ?, n.id, 50, NULL FROM namespaces n WHERE n.owner_id = ? AND n.kind = 'user'`, []any{u, u}},
		// Namespace access reaches the projects inside.
		{`INSERT INTO project_authorizations (user_id, project_id, access_level, expires_at)
			SELECT a.user_id, p.id, a.access_level, a.expires_at FROM namespace_authorizations a
			JOIN projects p ON p.namespace_id = a.namespace_id WHERE a.user_id = ? AND a.access_level > 0`, []any{u}},
		// Direct project memberships.
		{`INSERT INTO project_authorizations (user_id, project_id, access_level, expires_at)
			SELECT m.user_id, m.source_id, m.access_level, m.expires_at FROM members m
			WHERE m.user_id = ? AND m.source_type = 'Project' AND m.pending = FALSE`, []any{u}},
		// Projects shared with a group the user belongs to, capped at the
		// share's level and expiring with the earlier of the two dates.
		{`INSERT INTO project_authorizations (user_id, project_id, access_level, expires_at)
			SELECT a.user_id, l.project_id,
				CASE WHEN a.access_level < l.group_access THEN a.access_level ELSE l.group_access END,
				CASE WHEN a.expires_at IS NULL THEN l.expires_at WHEN l.expires_at IS NULL THEN a.expires_at
					WHEN a.expires_at < l.expires_at THEN a.expires_at ELSE l.expires_at END
			FROM namespace_authorizations a JOIN project_group_links l ON l.group_id = a.namespace_id
			WHERE a.user_id = ? AND a.access_level > 0`, []any{u}},
	}
	for _, s := range steps {
		if _, err := tx.exec(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	// Groups above anything the user reaches become visible to them.
	var traversals []string
	err := tx.each(ctx, `SELECT n.traversal FROM namespace_authorizations a JOIN namespaces n ON n.id = a.namespace_id WHERE a.user_id = ?
		UNION SELECT n.traversal FROM project_authorizations a JOIN projects p ON p.id = a.project_id
			JOIN namespaces n ON n.id = p.namespace_id WHERE a.user_id = ?`, []any{u, u}, func(r *sql.Rows) error {
		var t string
		err := r.Scan(&t)
		traversals = append(traversals, t)
		return err
	})
	if err != nil {
		return err
	}
	have := map[int64]bool{}
	err = tx.each(ctx, "SELECT namespace_id FROM namespace_authorizations WHERE user_id = ?", []any{u}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		have[id] = true
		return err
	})
	if err != nil {
		return err
	}
	for _, t := range traversals {
		for _, part := range strings.Split(strings.TrimSuffix(t, "/"), "/") {
			id, err := strconv.ParseInt(part, 10, 64)
			if err != nil || have[id] {
				continue
			}
			have[id] = true
			if _, err := tx.exec(ctx, "INSERT INTO namespace_authorizations (user_id, namespace_id, access_level, expires_at) VALUES (?, ?, 0, NULL)", u, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// UsersReaching lists the users with access (above "can see") to any of the
// given namespaces: whose authorizations a change there may alter.
func (tx *Tx) UsersReaching(ctx context.Context, namespaceIDs ...int64) ([]int64, error) {
	if len(namespaceIDs) == 0 {
		return nil, nil
	}
	var out []int64
	err := tx.each(ctx, "SELECT DISTINCT user_id FROM namespace_authorizations WHERE access_level > 0 AND namespace_id IN ("+placeholders(len(namespaceIDs))+")",
		int64Args(namespaceIDs), func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// UsersInTree lists users with any authorization inside a namespace tree.
func (tx *Tx) UsersInTree(ctx context.Context, traversal string) ([]int64, error) {
	var out []int64
	err := tx.each(ctx, `SELECT DISTINCT a.user_id FROM namespace_authorizations a JOIN namespaces n ON n.id = a.namespace_id
		WHERE n.traversal LIKE ? ESCAPE '\'
		UNION SELECT DISTINCT a.user_id FROM project_authorizations a JOIN projects p ON p.id = a.project_id
		JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE ? ESCAPE '\'`,
		[]any{escapeLike(traversal) + "%", escapeLike(traversal) + "%"}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// ProjectAccess is a user's highest unexpired access to a project (0: none).
func (tx *Tx) ProjectAccess(ctx context.Context, userID, projectID int64, today string) (model.AccessLevel, error) {
	var lvl sql.NullInt64
	err := tx.row(ctx, []any{&lvl}, `SELECT MAX(access_level) FROM project_authorizations
		WHERE user_id = ? AND project_id = ? AND (expires_at IS NULL OR expires_at > ?)`, userID, projectID, today)
	return model.AccessLevel(lvl.Int64), err
}

// AddMember stores a membership (used for the creator of a group or
// project); it does not refresh authorizations.
func (tx *Tx) AddMember(ctx context.Context, sourceType string, sourceID, userID int64, level model.AccessLevel, createdBy int64, now int64) error {
	_, err := tx.exec(ctx, `INSERT INTO members (source_type, source_id, user_id, access_level, created_by_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, sourceType, sourceID, userID, int(level), zeroNull(createdBy), now, now)
	return err
}

// ProjectAccessLevels is ProjectAccess for several projects at once.
func (tx *Tx) ProjectAccessLevels(ctx context.Context, userID int64, ids []int64, today string) (map[int64]model.AccessLevel, error) {
	return tx.levels(ctx, "SELECT project_id, MAX(access_level) FROM project_authorizations WHERE user_id = ? AND (expires_at IS NULL OR expires_at > ?) AND project_id IN (%s) GROUP BY project_id",
		[]any{userID, today}, userID, ids)
}

// NamespaceAccessLevels is NamespaceAccess for several namespaces at once.
func (tx *Tx) NamespaceAccessLevels(ctx context.Context, userID int64, ids []int64, today string) (map[int64]model.AccessLevel, error) {
	return tx.levels(ctx, "SELECT namespace_id, MAX(access_level) FROM namespace_authorizations WHERE user_id = ? AND (expires_at IS NULL OR expires_at > ?) AND namespace_id IN (%s) GROUP BY namespace_id",
		[]any{userID, today}, userID, ids)
}

// GroupMembershipLevels returns, for several groups, the user's highest
// membership in the group or a group above it — what GitLab shows as a
// project's permissions.group_access (access through a group share is
// not a membership and does not count).
func (tx *Tx) GroupMembershipLevels(ctx context.Context, userID int64, ids []int64, today string) (map[int64]model.AccessLevel, error) {
	return tx.levels(ctx, `SELECT d.id, MAX(m.access_level) FROM namespaces d
		JOIN namespaces g ON d.traversal LIKE g.traversal || '%%'
		JOIN members m ON m.source_type = 'Namespace' AND m.source_id = g.id
		WHERE m.user_id = ? AND m.pending = FALSE AND (m.expires_at IS NULL OR m.expires_at > ?) AND d.id IN (%s)
		GROUP BY d.id`, []any{userID, today}, userID, ids)
}

// MemberLevels returns a user's direct membership level in several
// sources of one type.
func (tx *Tx) MemberLevels(ctx context.Context, sourceType string, ids []int64, userID int64, today string) (map[int64]model.AccessLevel, error) {
	return tx.levels(ctx, "SELECT source_id, access_level FROM members WHERE source_type = ? AND user_id = ? AND pending = FALSE AND (expires_at IS NULL OR expires_at > ?) AND source_id IN (%s)",
		[]any{sourceType, userID, today}, userID, ids)
}

// levels runs a query of (id, level) rows for the ids (substituted at %s)
// after the leading args; nothing to ask for an anonymous user.
func (tx *Tx) levels(ctx context.Context, q string, args []any, userID int64, ids []int64) (map[int64]model.AccessLevel, error) {
	out := map[int64]model.AccessLevel{}
	if userID == 0 || len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, fmt.Sprintf(q, placeholders(len(ids))), append(args, int64Args(ids)...), func(r *sql.Rows) error {
		var id int64
		var lvl model.AccessLevel
		err := r.Scan(&id, &lvl)
		out[id] = lvl
		return err
	})
	return out, err
}
