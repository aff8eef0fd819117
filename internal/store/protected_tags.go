package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// UniqueProtectedTag allows one rule per project and name.
const UniqueProtectedTag = "protected_tags_project_name_key"

func init() {
	sqliteColumnUniques["protected_tags.project_id, protected_tags.name"] = UniqueProtectedTag
}

// CreateProtectedTag stores a rule with its create grants.
func (tx *Tx) CreateProtectedTag(ctx context.Context, t *model.ProtectedTag) error {
	now := tx.Now()
	id, err := tx.insert(ctx, "INSERT INTO protected_tags (project_id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
		t.ProjectID, t.Name, micros(now), micros(now))
	if err != nil {
		return err
	}
	t.ID, t.CreatedAt = id, now
	for i := range t.Create {
		g := &t.Create[i]
		var lvl any
		if g.AccessLevel != nil {
			lvl = int(*g.AccessLevel)
		}
		if g.ID, err = tx.insert(ctx, "INSERT INTO protected_tag_create_access_levels (protected_tag_id, access_level, user_id, group_id) VALUES (?, ?, ?, ?)",
			t.ID, lvl, g.UserID, g.GroupID); err != nil {
			return err
		}
	}
	return nil
}

// DeleteProtectedTag removes a rule; false when it was gone already.
func (tx *Tx) DeleteProtectedTag(ctx context.Context, id int64) (bool, error) {
	res, err := tx.exec(ctx, "DELETE FROM protected_tags WHERE id = ?", id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ProtectedTags returns a project's rules (with grants), by name.
func (tx *Tx) ProtectedTags(ctx context.Context, projectID int64) ([]model.ProtectedTag, error) {
	var out []model.ProtectedTag
	idx := map[int64]int{}
	err := tx.each(ctx, "SELECT id, project_id, name, created_at FROM protected_tags WHERE project_id = ? ORDER BY name, id",
		[]any{projectID}, func(r *sql.Rows) error {
			var t model.ProtectedTag
			err := r.Scan(&t.ID, &t.ProjectID, &t.Name, tsScan{&t.CreatedAt})
			idx[t.ID] = len(out)
			out = append(out, t)
			return err
		})
	if err != nil || len(out) == 0 {
		return out, err
	}
	err = tx.each(ctx, `SELECT a.id, a.protected_tag_id, a.access_level, a.user_id, a.group_id FROM protected_tag_create_access_levels a
		JOIN protected_tags t ON t.id = a.protected_tag_id WHERE t.project_id = ? ORDER BY a.id`, []any{projectID}, func(r *sql.Rows) error {
		var a model.BranchAccess
		var tagID int64
		var lvl *int64
		if err := r.Scan(&a.ID, &tagID, nullInt64Ptr{&lvl}, nullInt64Ptr{&a.UserID}, nullInt64Ptr{&a.GroupID}); err != nil {
			return err
		}
		if lvl != nil {
			l := model.AccessLevel(*lvl)
			a.AccessLevel = &l
		}
		if i, ok := idx[tagID]; ok {
			out[i].Create = append(out[i].Create, a)
		}
		return nil
	})
	return out, err
}

// UserInGroup reports whether a user is a member of a group: directly,
// or (inherited) also through one of its ancestors; expired memberships
// count for nothing.
func (tx *Tx) UserInGroup(ctx context.Context, groupID, userID int64, inherited bool, today string) (bool, error) {
	q := `SELECT COUNT(*) FROM members WHERE source_type = 'Namespace' AND source_id = ? AND user_id = ?
		AND (expires_at IS NULL OR expires_at > ?) AND requested_at IS NULL AND pending = FALSE`
	if inherited {
		q = `SELECT COUNT(*) FROM namespace_authorizations WHERE namespace_id = ? AND user_id = ?
		AND (expires_at IS NULL OR expires_at > ?)`
	}
	var n int64
	err := tx.row(ctx, []any{&n}, q, groupID, userID, today)
	return n > 0, err
}
