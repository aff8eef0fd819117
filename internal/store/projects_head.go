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

// projectHeadColumns are a head's columns (projectHeadScan), from
// projectHeadFrom, with the caller's id and today three times as their
// arguments.
const projectHeadColumns = `p.id, p.entity_version, p.created_at, n.id, n.entity_version, n.kind,
	COALESCE(o.id, 0), COALESCE(o.entity_version, 0), COALESCE(o.created_at, 0),
	COALESCE((SELECT MAX(a.access_level) FROM project_authorizations a
		WHERE a.user_id = ? AND a.project_id = p.id AND (a.expires_at IS NULL OR a.expires_at > ?)), 0),
	COALESCE((SELECT MAX(m.access_level) FROM members m WHERE m.source_type = 'Project' AND m.source_id = p.id
		AND m.user_id = ? AND m.pending = FALSE AND (m.expires_at IS NULL OR m.expires_at > ?)), 0),
	COALESCE((SELECT MAX(m.access_level) FROM namespaces g JOIN members m ON m.source_type = 'Namespace' AND m.source_id = g.id
		WHERE n.kind = 'group' AND n.traversal LIKE g.traversal || '%' AND m.user_id = ? AND m.pending = FALSE
		AND (m.expires_at IS NULL OR m.expires_at > ?)), 0),
	CASE WHEN EXISTS (SELECT 1 FROM project_group_links l WHERE l.project_id = p.id) THEN 1 ELSE 0 END`

const projectHeadFrom = `projects p JOIN namespaces n ON n.id = p.namespace_id LEFT JOIN users o ON n.kind = 'user' AND o.id = n.owner_id`

const projectHeadQuery = "SELECT " + projectHeadColumns + " FROM " + projectHeadFrom + " WHERE "

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
	var sc headScan
	err := tx.row(ctx, sc.dest(&h), projectHeadQuery+cond, args...)
	sc.done(&h)
	return h, err
}

// ProjectHeads reads the heads of several projects (a page), in one
// statement, by id.
func (tx *Tx) ProjectHeads(ctx context.Context, ids []int64, userID int64, today string) (map[int64]ProjectHead, error) {
	out := make(map[int64]ProjectHead, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := append([]any{userID, today, userID, today, userID, today}, int64Args(ids)...)
	var h ProjectHead
	var sc headScan
	dest := sc.dest(&h)
	err := tx.each(ctx, projectHeadQuery+"p.id IN ("+placeholders(len(ids))+")", args, func(r *sql.Rows) error {
		h = ProjectHead{}
		err := r.Scan(dest...)
		sc.done(&h)
		out[h.ID] = h
		return err
	})
	return out, err
}

// headScan holds the columns of a head scanned into other types.
type headScan struct {
	shared int
	owner  sql.NullInt64
}

func (sc *headScan) dest(h *ProjectHead) []any {
	return []any{&h.ID, &h.EntityVersion, tsScan{&h.CreatedAt}, &h.NamespaceID, &h.NamespaceVersion, &h.NamespaceKind,
		&sc.owner, &h.OwnerVersion, tsScan{&h.OwnerCreatedAt}, &h.Access, &h.ProjectAccess, &h.GroupAccess, &sc.shared}
}

func (sc *headScan) done(h *ProjectHead) { h.OwnerID, h.Shared = sc.owner.Int64, sc.shared == 1 }
