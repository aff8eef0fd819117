package store

import (
	"context"
	"database/sql"
)

// SetProjectWikiSize records the size of a project's wiki repository.
func (tx *Tx) SetProjectWikiSize(ctx context.Context, projectID, size int64) error {
	_, err := tx.exec(ctx, "UPDATE projects SET wiki_size = ? WHERE id = ?", size, projectID)
	return err
}

// SetGroupWikiSize records the size of a group's wiki repository.
func (tx *Tx) SetGroupWikiSize(ctx context.Context, groupID, size int64) error {
	_, err := tx.exec(ctx, "UPDATE namespaces SET wiki_size = ? WHERE id = ? AND kind = 'group'", size, groupID)
	return err
}

// GroupWikiSizeInTree sums the wiki sizes of a group and its subgroups
// (not of their projects).
func (tx *Tx) GroupWikiSizeInTree(ctx context.Context, traversal string) (int64, error) {
	var n int64
	err := tx.row(ctx, []any{&n}, `SELECT COALESCE(SUM(wiki_size), 0) FROM namespaces WHERE traversal LIKE ? ESCAPE '\'`,
		escapeLike(traversal)+"%")
	return n, err
}

// GroupIDsInTree lists the ids of a group and its subgroups.
func (tx *Tx) GroupIDsInTree(ctx context.Context, traversal string) ([]int64, error) {
	var out []int64
	err := tx.each(ctx, `SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\' AND kind = 'group' ORDER BY id`,
		[]any{escapeLike(traversal) + "%"}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}
