package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

const badgeColumns = "b.id, b.project_id, b.group_id, b.name, b.link_url, b.image_url, b.created_at, b.updated_at, b.version"

func scanBadge(rows *sql.Rows) (model.Badge, error) {
	var b model.Badge
	var project, group sql.NullInt64
	var name sql.NullString
	err := rows.Scan(&b.ID, &project, &group, &name, &b.LinkURL, &b.ImageURL, tsScan{&b.CreatedAt}, tsScan{&b.UpdatedAt}, &b.Version)
	b.ProjectID, b.GroupID = project.Int64, group.Int64
	if name.Valid {
		n := name.String
		b.Name = &n
	}
	return b, err
}

// CreateBadge inserts b (its ProjectID or GroupID set) and sets its id,
// times and version.
func (tx *Tx) CreateBadge(ctx context.Context, b *model.Badge) error {
	now := tx.Now()
	b.CreatedAt, b.UpdatedAt, b.Version = now, now, 1
	var err error
	b.ID, err = tx.insert(ctx, `INSERT INTO badges (project_id, group_id, name, link_url, image_url, created_at, updated_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, 1)`,
		zeroNull(b.ProjectID), zeroNull(b.GroupID), b.Name, b.LinkURL, b.ImageURL, micros(now), micros(now))
	return err
}

// UpdateBadge writes b's name and URLs if the row still has the version
// read; false when another writer changed or removed it first.
func (tx *Tx) UpdateBadge(ctx context.Context, b *model.Badge) (bool, error) {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE badges SET name = ?, link_url = ?, image_url = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ?`, b.Name, b.LinkURL, b.ImageURL, micros(now), b.ID, b.Version)
	if err != nil || n == 0 {
		return false, err
	}
	b.UpdatedAt = now
	b.Version++
	return true, nil
}

// DeleteBadge removes a badge; model.ErrNotFound when it is gone.
func (tx *Tx) DeleteBadge(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM badges WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// BadgeFilter picks the badges of one list: a project's own (ProjectID)
// and those of groups (GroupIDs: a group's own, or a project's ancestor
// groups'), optionally of one exact name.
type BadgeFilter struct {
	ProjectID int64
	GroupIDs  []int64
	Name      *string
}

func (f BadgeFilter) where() where {
	var w where
	var owners []string
	var args []any
	if f.ProjectID != 0 {
		owners = append(owners, "b.project_id = ?")
		args = append(args, f.ProjectID)
	}
	if len(f.GroupIDs) > 0 {
		owners = append(owners, "b.group_id IN ("+placeholders(len(f.GroupIDs))+")")
		for _, id := range f.GroupIDs {
			args = append(args, id)
		}
	}
	switch len(owners) {
	case 0:
		w.add("1 = 0")
	case 1:
		w.add(owners[0], args...)
	default:
		w.add("("+owners[0]+" OR "+owners[1]+")", args...)
	}
	if f.Name != nil {
		w.add("b.name = ?", *f.Name)
	}
	return w
}

// ListBadges returns one page of badges, oldest first (GitLab orders
// badges by creation; ids follow it).
func (tx *Tx) ListBadges(ctx context.Context, f BadgeFilter, page model.Page) ([]model.Badge, model.PageInfo, error) {
	return list(ctx, tx, listSpec[model.Badge]{
		columns: badgeColumns, from: "badges b", idCol: "b.id", where: f.where(),
		scan:  scanBadge,
		keyOf: func(b model.Badge) (any, int64) { return b.ID, b.ID },
	}, page)
}

// BadgeIn returns the badge with id among those f picks, or
// model.ErrNotFound.
func (tx *Tx) BadgeIn(ctx context.Context, f BadgeFilter, id int64) (model.Badge, error) {
	w := f.where()
	w.add("b.id = ?", id)
	var out []model.Badge
	err := tx.each(ctx, "SELECT "+badgeColumns+" FROM badges b"+w.sql(), w.args, func(r *sql.Rows) error {
		b, err := scanBadge(r)
		out = append(out, b)
		return err
	})
	if err == nil && len(out) == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.Badge{}, err
	}
	return out[0], nil
}
