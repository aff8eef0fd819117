package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"quarry/internal/model"
)

// ProjectHead is what reading a project for a signed-in caller needs on
// every request, in one statement: the versions of the rows its entity
// shows (the project and its namespace, the owner of a personal
// project), the caller's levels (effective, direct membership, group
// membership) and whether it is shared with groups. The wide row (the
// settings document, the sealed runners token) is read only when no
// decoded copy at these versions is at hand.
type ProjectHead struct {
	ID, EntityVersion                  int64
	CreatedAt                          time.Time
	NamespaceID, NamespaceVersion      int64
	NamespaceKind                      string
	OwnerID, OwnerVersion              int64 // personal projects
	OwnerCreatedAt                     time.Time
	Access, ProjectAccess, GroupAccess model.AccessLevel
	Shared                             bool
}

const projectHeadQuery = `SELECT p.id, p.entity_version, p.created_at, n.id, n.entity_version, n.kind,
	COALESCE(o.id, 0), COALESCE(o.entity_version, 0), COALESCE(o.created_at, 0),
	COALESCE((SELECT MAX(a.access_level) FROM project_authorizations a
		WHERE a.user_id = ? AND a.project_id = p.id AND (a.expires_at IS NULL OR a.expires_at > ?)), 0),
	COALESCE((SELECT MAX(m.access_level) FROM members m WHERE m.source_type = 'Project' AND m.source_id = p.id
		AND m.user_id = ? AND m.pending = FALSE AND (m.expires_at IS NULL OR m.expires_at > ?)), 0),
	COALESCE((SELECT MAX(m.access_level) FROM namespaces g JOIN members m ON m.source_type = 'Namespace' AND m.source_id = g.id
		WHERE n.kind = 'group' AND n.traversal LIKE g.traversal || '%' AND m.user_id = ? AND m.pending = FALSE
		AND (m.expires_at IS NULL OR m.expires_at > ?)), 0),
	CASE WHEN EXISTS (SELECT 1 FROM project_group_links l WHERE l.project_id = p.id) THEN 1 ELSE 0 END
	FROM projects p JOIN namespaces n ON n.id = p.namespace_id LEFT JOIN users o ON n.kind = 'user' AND o.id = n.owner_id
	WHERE `

// ProjectHeadByRef reads the head of a project named by id ("12") or
// full path, with userID's levels as of today.
func (tx *Tx) ProjectHeadByRef(ctx context.Context, ref string, userID int64, today string) (ProjectHead, error) {
	args := []any{userID, today, userID, today, userID, today}
	cond := "p.id = ?"
	if id, ok := model.ParseID(ref); ok {
		args = append(args, id)
	} else {
		i := strings.LastIndex(ref, "/")
		if i <= 0 {
			return ProjectHead{}, model.ErrNotFound
		}
		cond = "lower(n.full_path) = ? AND lower(p.path) = ?"
		args = append(args, strings.ToLower(ref[:i]), strings.ToLower(ref[i+1:]))
	}
	var h ProjectHead
	var shared int
	var owner sql.NullInt64
	err := tx.row(ctx, []any{&h.ID, &h.EntityVersion, tsScan{&h.CreatedAt}, &h.NamespaceID, &h.NamespaceVersion, &h.NamespaceKind,
		&owner, &h.OwnerVersion, tsScan{&h.OwnerCreatedAt}, &h.Access, &h.ProjectAccess, &h.GroupAccess, &shared},
		projectHeadQuery+cond, args...)
	h.OwnerID, h.Shared = owner.Int64, shared == 1
	return h, err
}
