package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// Custom attribute owners.
const (
	AttrsUser    = "User"
	AttrsProject = "Project"
	AttrsGroup   = "Group"
)

// CustomAttributes returns the custom attributes of several resources of
// one type, by id.
func (tx *Tx) CustomAttributes(ctx context.Context, sourceType string, ids []int64) (map[int64][]model.CustomAttribute, error) {
	out := map[int64][]model.CustomAttribute{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{sourceType}
	for _, id := range ids {
		args = append(args, id)
	}
	err := tx.each(ctx, "SELECT source_id, key, value FROM custom_attributes WHERE source_type = ? AND source_id IN ("+placeholders(len(ids))+") ORDER BY key", args,
		func(r *sql.Rows) error {
			var id int64
			var a model.CustomAttribute
			if err := r.Scan(&id, &a.Key, &a.Value); err != nil {
				return err
			}
			out[id] = append(out[id], a)
			return nil
		})
	return out, err
}

// SetCustomAttribute creates or replaces one custom attribute.
func (tx *Tx) SetCustomAttribute(ctx context.Context, sourceType string, id int64, a model.CustomAttribute) error {
	if _, err := tx.exec(ctx, "DELETE FROM custom_attributes WHERE source_type = ? AND source_id = ? AND key = ?", sourceType, id, a.Key); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "INSERT INTO custom_attributes (source_type, source_id, key, value) VALUES (?, ?, ?, ?)", sourceType, id, a.Key, a.Value)
	return err
}

// DeleteCustomAttribute removes one custom attribute; model.ErrNotFound
// when it did not exist.
func (tx *Tx) DeleteCustomAttribute(ctx context.Context, sourceType string, id int64, key string) error {
	n, err := tx.execN(ctx, "DELETE FROM custom_attributes WHERE source_type = ? AND source_id = ? AND key = ?", sourceType, id, key)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// customAttrsCond adds "has all these custom attributes" to a list query.
func (w *where) customAttrsCond(sourceType, idCol string, attrs map[string]string) {
	for k, v := range attrs {
		w.add("EXISTS (SELECT 1 FROM custom_attributes a WHERE a.source_type = ? AND a.source_id = "+idCol+" AND a.key = ? AND a.value = ?)", sourceType, k, v)
	}
}
