package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
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

// GroupStatistics sums, for each of the groups ids, the repository and
// wiki sizes of the projects in its tree and the wiki sizes of the group
// and its subgroups: one query for a page of groups. (Traversals are
// digits and slashes: no LIKE wildcard in them.)
func (tx *Tx) GroupStatistics(ctx context.Context, ids []int64) (map[int64]model.ProjectStatistics, error) {
	out := make(map[int64]model.ProjectStatistics, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := `SELECT g.id,
	(SELECT COALESCE(SUM(p.repository_size), 0) FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE g.traversal || '%'),
	(SELECT COALESCE(SUM(p.wiki_size), 0) FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE g.traversal || '%'),
	(SELECT COALESCE(SUM(n.wiki_size), 0) FROM namespaces n WHERE n.traversal LIKE g.traversal || '%')
	FROM namespaces g WHERE g.id IN (` + placeholders(len(ids)) + `)`
	err := tx.each(ctx, q, args, func(r *sql.Rows) error {
		var id, repo, wiki, groupWiki int64
		if err := r.Scan(&id, &repo, &wiki, &groupWiki); err != nil {
			return err
		}
		st := model.ProjectStatistics{RepositorySize: repo, WikiSize: wiki + groupWiki}
		st.StorageSize = st.RepositorySize + st.WikiSize
		out[id] = st
		return nil
	})
	return out, err
}
