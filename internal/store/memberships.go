package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// Membership is one of a user's direct memberships with the name of its
// source (a project's or group's own name, not the full one).
type Membership struct {
	ID          int64
	SourceID    int64
	SourceType  string // model.SourceProject or model.SourceNamespace
	SourceName  string
	AccessLevel model.AccessLevel
}

// ListMemberships returns one page of a user's direct memberships of
// projects and groups (sourceType narrows to one kind when set), oldest
// first: pending ones included, access requests and memberships that ended
// by today left out, as are those whose source is gone.
func (tx *Tx) ListMemberships(ctx context.Context, userID int64, sourceType, today string, page model.Page) ([]Membership, model.PageInfo, error) {
	var w where
	w.add("m.user_id = ? AND m.requested_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)", userID, today)
	w.add("(n.id IS NOT NULL OR p.id IS NOT NULL)")
	if sourceType != "" {
		w.add("m.source_type = ?", sourceType)
	}
	spec := listSpec[Membership]{
		columns: "m.id, m.source_id, m.source_type, COALESCE(n.name, p.name), m.access_level",
		from: `members m LEFT JOIN namespaces n ON m.source_type = 'Namespace' AND n.id = m.source_id
			LEFT JOIN projects p ON m.source_type = 'Project' AND p.id = m.source_id`,
		idCol: "m.id", where: w, order: order{},
		scan: func(r *sql.Rows) (Membership, error) {
			var m Membership
			err := r.Scan(&m.ID, &m.SourceID, &m.SourceType, &m.SourceName, &m.AccessLevel)
			return m, err
		},
		keyOf: func(m Membership) (any, int64) { return nil, m.ID },
	}
	return list(ctx, tx, spec, page)
}
