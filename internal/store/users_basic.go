package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// UserBasicsByIDs loads what a user's summary shows (id, username, name,
// state, avatar; with the row's version and creation time, which key a
// kept copy) of several users at once: the owners of a page of
// projects, without the rest of their rows.
func (tx *Tx) UserBasicsByIDs(ctx context.Context, ids []int64) (map[int64]model.User, error) {
	out := map[int64]model.User{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT id, username, name, state, avatar, entity_version, created_at FROM users WHERE id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			var u model.User
			err := r.Scan(&u.ID, &u.Username, &u.Name, &u.State, nullString{&u.Avatar}, &u.EntityVersion, tsScan{&u.CreatedAt})
			out[u.ID] = u
			return err
		})
	return out, err
}
