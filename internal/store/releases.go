package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

const releaseColumns = "r.id, r.project_id, r.tag, r.name, r.description, r.sha, r.author_id, r.released_at, r.created_at, r.updated_at, r.version"

func scanRelease(rows *sql.Rows) (model.Release, error) {
	var r model.Release
	var author sql.NullInt64
	err := rows.Scan(&r.ID, &r.ProjectID, &r.Tag, &r.Name, &r.Description, &r.SHA, &author,
		tsScan{&r.ReleasedAt}, tsScan{&r.CreatedAt}, tsScan{&r.UpdatedAt}, &r.Version)
	r.AuthorID = author.Int64
	return r, err
}

// UniqueReleaseTag is the index allowing one release per tag of a project.
const UniqueReleaseTag = "releases_project_tag_key"

// CreateRelease inserts r and sets its id, times (ReleasedAt defaults to
// now) and version.
func (tx *Tx) CreateRelease(ctx context.Context, r *model.Release) error {
	now := tx.Now()
	r.CreatedAt, r.UpdatedAt, r.Version = now, now, 1
	if r.ReleasedAt.IsZero() {
		r.ReleasedAt = now
	}
	var err error
	r.ID, err = tx.insert(ctx, `INSERT INTO releases (project_id, tag, name, description, sha, author_id, released_at, created_at, updated_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
		r.ProjectID, r.Tag, r.Name, r.Description, r.SHA, zeroNull(r.AuthorID), micros(r.ReleasedAt), micros(now), micros(now))
	return err
}

// UpdateRelease writes r's name, description and release time if the row
// still has the version read; false when another writer came first.
func (tx *Tx) UpdateRelease(ctx context.Context, r *model.Release) (bool, error) {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE releases SET name = ?, description = ?, released_at = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ?`, r.Name, r.Description, micros(r.ReleasedAt), micros(now), r.ID, r.Version)
	if err != nil || n == 0 {
		return false, err
	}
	r.UpdatedAt = now
	r.Version++
	return true, nil
}

// DeleteRelease removes a release with its links and milestone links;
// model.ErrNotFound when it is gone.
func (tx *Tx) DeleteRelease(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM releases WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// ReleaseByTag returns the release of a project's tag, or
// model.ErrNotFound.
func (tx *Tx) ReleaseByTag(ctx context.Context, projectID int64, tag string) (model.Release, error) {
	var out []model.Release
	err := tx.each(ctx, "SELECT "+releaseColumns+" FROM releases r WHERE r.project_id = ? AND r.tag = ?",
		[]any{projectID, tag}, func(rows *sql.Rows) error {
			r, err := scanRelease(rows)
			out = append(out, r)
			return err
		})
	if err == nil && len(out) == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return model.Release{}, err
	}
	return out[0], nil
}

// ReleaseFilter picks releases: of the projects ProjectIDs, ordered by
// OrderBy ("released_at" or "created_at"), descending unless Asc.
type ReleaseFilter struct {
	ProjectIDs []int64
	OrderBy    string
	Asc        bool
}

// ListReleases returns one page of releases.
func (tx *Tx) ListReleases(ctx context.Context, f ReleaseFilter, page model.Page) ([]model.Release, model.PageInfo, error) {
	var w where
	if len(f.ProjectIDs) == 0 {
		w.add("1 = 0")
	} else {
		w.add("r.project_id IN ("+placeholders(len(f.ProjectIDs))+")", int64Args(f.ProjectIDs)...)
	}
	col := "r.released_at"
	key := func(r model.Release) (any, int64) { return micros(r.ReleasedAt), r.ID }
	if f.OrderBy == "created_at" {
		col = "r.created_at"
		key = func(r model.Release) (any, int64) { return micros(r.CreatedAt), r.ID }
	}
	return list(ctx, tx, listSpec[model.Release]{
		columns: releaseColumns, from: "releases r", idCol: "r.id", where: w,
		order: order{column: col, desc: !f.Asc}, scan: scanRelease, keyOf: key,
	}, page)
}

const releaseLinkColumns = "l.id, l.release_id, l.name, l.url, l.filepath, l.link_type, l.created_at, l.updated_at"

func scanReleaseLink(rows *sql.Rows) (model.ReleaseLink, error) {
	var l model.ReleaseLink
	var fp sql.NullString
	err := rows.Scan(&l.ID, &l.ReleaseID, &l.Name, &l.URL, &fp, &l.LinkType, tsScan{&l.CreatedAt}, tsScan{&l.UpdatedAt})
	l.Filepath = fp.String
	return l, err
}

// CreateReleaseLink inserts l and sets its id and times.
func (tx *Tx) CreateReleaseLink(ctx context.Context, l *model.ReleaseLink) error {
	now := tx.Now()
	l.CreatedAt, l.UpdatedAt = now, now
	var err error
	l.ID, err = tx.insert(ctx, `INSERT INTO release_links (release_id, name, url, filepath, link_type, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, l.ReleaseID, l.Name, l.URL, emptyNull(l.Filepath), l.LinkType, micros(now), micros(now))
	return err
}

// UpdateReleaseLink writes l's fields.
func (tx *Tx) UpdateReleaseLink(ctx context.Context, l *model.ReleaseLink) error {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE release_links SET name = ?, url = ?, filepath = ?, link_type = ?, updated_at = ? WHERE id = ?`,
		l.Name, l.URL, emptyNull(l.Filepath), l.LinkType, micros(now), l.ID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	l.UpdatedAt = now
	return err
}

// DeleteReleaseLink removes a link; model.ErrNotFound when it is gone.
func (tx *Tx) DeleteReleaseLink(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM release_links WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// ReleaseLinks returns the links of the releases ids, newest first
// (GitLab's Link.sorted), grouped by release. A release has few links.
func (tx *Tx) ReleaseLinks(ctx context.Context, ids []int64) (map[int64][]model.ReleaseLink, error) {
	out := map[int64][]model.ReleaseLink{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+releaseLinkColumns+" FROM release_links l WHERE l.release_id IN ("+placeholders(len(ids))+
		") ORDER BY l.created_at DESC, l.id DESC", int64Args(ids), func(rows *sql.Rows) error {
		l, err := scanReleaseLink(rows)
		out[l.ReleaseID] = append(out[l.ReleaseID], l)
		return err
	})
	return out, err
}

// ReleaseMilestones returns the milestones linked to the releases ids,
// by release, ordered by id.
func (tx *Tx) ReleaseMilestones(ctx context.Context, ids []int64) (map[int64][]model.Milestone, error) {
	out := map[int64][]model.Milestone{}
	if len(ids) == 0 {
		return out, nil
	}
	type pair struct{ release, milestone int64 }
	var pairs []pair
	err := tx.each(ctx, "SELECT release_id, milestone_id FROM release_milestones WHERE release_id IN ("+placeholders(len(ids))+
		") ORDER BY milestone_id", int64Args(ids), func(rows *sql.Rows) error {
		var p pair
		err := rows.Scan(&p.release, &p.milestone)
		pairs = append(pairs, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		m, err := tx.MilestoneByID(ctx, p.milestone)
		if err != nil {
			return nil, err
		}
		out[p.release] = append(out[p.release], m)
	}
	return out, nil
}

// SetReleaseMilestones replaces the milestones linked to a release.
func (tx *Tx) SetReleaseMilestones(ctx context.Context, releaseID int64, milestoneIDs []int64) error {
	if _, err := tx.execN(ctx, "DELETE FROM release_milestones WHERE release_id = ?", releaseID); err != nil {
		return err
	}
	for _, id := range milestoneIDs {
		if _, err := tx.execN(ctx, "INSERT INTO release_milestones (release_id, milestone_id) VALUES (?, ?)", releaseID, id); err != nil {
			return err
		}
	}
	return nil
}

// MilestoneIDsByTitle returns the ids of the milestones of a project or
// of the groups groupIDs (its group and ancestors) titled one of titles,
// by title.
func (tx *Tx) MilestoneIDsByTitle(ctx context.Context, projectID int64, groupIDs []int64, titles []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(titles) == 0 {
		return out, nil
	}
	q := "SELECT title, id FROM milestones WHERE title IN (" + placeholders(len(titles)) + ") AND (project_id = ?"
	args := make([]any, 0, len(titles)+1+len(groupIDs))
	for _, t := range titles {
		args = append(args, t)
	}
	args = append(args, projectID)
	if len(groupIDs) > 0 {
		q += " OR group_id IN (" + placeholders(len(groupIDs)) + ")"
		args = append(args, int64Args(groupIDs)...)
	}
	err := tx.each(ctx, q+") ORDER BY id", args, func(rows *sql.Rows) error {
		var title string
		var id int64
		err := rows.Scan(&title, &id)
		if _, ok := out[title]; !ok {
			out[title] = id
		}
		return err
	})
	return out, err
}
