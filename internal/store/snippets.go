package store

import (
	"context"
	"database/sql"
	"time"

	"quarry/internal/model"
)

const snippetColumns = `s.id, s.title, s.description, s.visibility, s.author_id, s.project_id, s.file_name, s.repository_storage,
	s.repository_read_only, s.user_agent, s.ip_address, s.akismet_submitted, s.created_at, s.updated_at, s.version`

// snippetRow scans a snippet and its nullable columns.
type snippetRow struct {
	s               model.Snippet
	desc, agent, ip sql.NullString
	project         sql.NullInt64
	akismet         bool
}

func (r *snippetRow) dest() []any {
	return []any{&r.s.ID, &r.s.Title, &r.desc, &r.s.Visibility, &r.s.AuthorID, &r.project, &r.s.FileName, &r.s.RepositoryStorage,
		&r.s.RepositoryReadOnly, &r.agent, &r.ip, &r.akismet, tsScan{&r.s.CreatedAt}, tsScan{&r.s.UpdatedAt}, &r.s.Version}
}

func (r *snippetRow) snippet() model.Snippet {
	s := r.s
	if r.desc.Valid {
		d := r.desc.String
		s.Description = &d
	}
	s.ProjectID = r.project.Int64
	if r.agent.Valid {
		s.Agent = &model.SnippetUserAgent{UserAgent: r.agent.String, IPAddress: r.ip.String, AkismetSubmitted: r.akismet}
	}
	return s
}

func scanSnippet(rows *sql.Rows) (model.Snippet, error) {
	var r snippetRow
	err := rows.Scan(r.dest()...)
	return r.snippet(), err
}

// CreateSnippet inserts s and sets its id, times and version.
func (tx *Tx) CreateSnippet(ctx context.Context, s *model.Snippet) error {
	now := tx.Now()
	s.CreatedAt, s.UpdatedAt, s.Version = now, now, 1
	var agent, ip any
	akismet := false
	if s.Agent != nil {
		agent, ip, akismet = s.Agent.UserAgent, s.Agent.IPAddress, s.Agent.AkismetSubmitted
	}
	var err error
	s.ID, err = tx.insert(ctx, `INSERT INTO snippets (title, description, visibility, author_id, project_id, file_name, repository_storage,
		repository_read_only, user_agent, ip_address, akismet_submitted, created_at, updated_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
		s.Title, s.Description, s.Visibility, s.AuthorID, zeroNull(s.ProjectID), s.FileName, s.RepositoryStorage,
		s.RepositoryReadOnly, agent, ip, akismet, micros(now), micros(now))
	return err
}

// UpdateSnippet writes s's title, description, visibility and file name
// if the row still has the version read; false when another writer
// changed it first.
func (tx *Tx) UpdateSnippet(ctx context.Context, s *model.Snippet) (bool, error) {
	now := tx.Now()
	n, err := tx.execN(ctx, `UPDATE snippets SET title = ?, description = ?, visibility = ?, file_name = ?, updated_at = ?,
		version = version + 1 WHERE id = ? AND version = ?`,
		s.Title, s.Description, s.Visibility, s.FileName, micros(now), s.ID, s.Version)
	if err != nil || n == 0 {
		return false, err
	}
	s.UpdatedAt = now
	s.Version++
	return true, nil
}

// SetSnippetFileName records the first file of a snippet's repository
// after a push.
func (tx *Tx) SetSnippetFileName(ctx context.Context, id int64, name string) error {
	_, err := tx.exec(ctx, "UPDATE snippets SET file_name = ?, updated_at = ?, version = version + 1 WHERE id = ?",
		name, micros(tx.Now()), id)
	return err
}

// DeleteSnippet removes a snippet's row.
func (tx *Tx) DeleteSnippet(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM snippets WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	if err != nil {
		return err
	}
	return tx.deleteContainerMoves(ctx, model.ContainerSnippet, "= ?", id)
}

// SnippetByID returns one snippet.
func (tx *Tx) SnippetByID(ctx context.Context, id int64) (model.Snippet, error) {
	var r snippetRow
	err := tx.row(ctx, r.dest(), "SELECT "+snippetColumns+" FROM snippets s WHERE s.id = ?", id)
	return r.snippet(), err
}

// SnippetsOf lists the snippets of a project (projectID) or by an author
// (authorID), oldest first, for their removal.
func (tx *Tx) SnippetsOf(ctx context.Context, projectID, authorID int64) ([]model.Snippet, error) {
	var out []model.Snippet
	err := tx.each(ctx, "SELECT "+snippetColumns+" FROM snippets s WHERE s.project_id = ? OR s.author_id = ? ORDER BY s.id",
		[]any{projectID, authorID}, func(rows *sql.Rows) error {
			s, err := scanSnippet(rows)
			out = append(out, s)
			return err
		})
	return out, err
}

// SnippetFilter selects the snippets of a list.
type SnippetFilter struct {
	// Viewer sees what GitLab's SnippetsFinder shows it: an administrator
	// every snippet; others the personal snippets they wrote or whose
	// visibility is open to them, and the snippets of projects they read
	// whose snippets feature is open to them — all of a project they are
	// a member of, of another those they wrote or whose visibility is
	// open to them.
	Viewer        Viewer
	AuthorID      int64
	ProjectID     int64
	PersonalOnly  bool
	Visibility    model.Visibility
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Storage       string
}

// snippetsFeature is the snippets access level of the project p, from its
// settings document.
func (tx *Tx) snippetsFeature() string {
	if tx.dialect == Postgres {
		return "COALESCE(p.settings::jsonb ->> 'snippets_access_level', 'enabled')"
	}
	return "COALESCE(json_extract(p.settings, '$.snippets_access_level'), 'enabled')"
}

// visibleSnippetCond limits snippets s (with their project p, if any) to
// those the viewer may see.
func (tx *Tx) visibleSnippetCond(w *where, v Viewer) {
	w.add("(s.project_id IS NULL OR p.pending_delete = FALSE)")
	if v.Admin {
		return
	}
	levels := "('public')"
	if v.UserID != 0 && !v.External {
		levels = "('public', 'internal')"
	}
	feature := tx.snippetsFeature()
	w.add(`((s.project_id IS NULL AND (s.visibility IN `+levels+` OR s.author_id = ?))
		OR (s.project_id IS NOT NULL AND `+feature+` <> 'disabled' AND s.project_id IN (SELECT a.project_id FROM project_authorizations a
			WHERE a.user_id = ? AND a.access_level >= 10 AND (a.expires_at IS NULL OR a.expires_at > ?)))
		OR (s.project_id IS NOT NULL AND p.visibility IN `+levels+` AND `+feature+` IN ('enabled', 'public')
			AND (s.visibility IN `+levels+` OR s.author_id = ?)))`, v.UserID, v.UserID, v.Today, v.UserID)
}

// ListSnippets returns one page of snippets, newest first.
func (tx *Tx) ListSnippets(ctx context.Context, f SnippetFilter, page model.Page) ([]model.Snippet, model.PageInfo, error) {
	var w where
	tx.visibleSnippetCond(&w, f.Viewer)
	if f.AuthorID != 0 {
		w.add("s.author_id = ?", f.AuthorID)
	}
	if f.ProjectID != 0 {
		w.add("s.project_id = ?", f.ProjectID)
	}
	if f.PersonalOnly {
		w.add("s.project_id IS NULL")
	}
	if f.Visibility != "" {
		w.add("s.visibility = ?", f.Visibility)
	}
	if f.CreatedAfter != nil {
		w.add("s.created_at > ?", micros(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		w.add("s.created_at < ?", micros(*f.CreatedBefore))
	}
	if f.Storage != "" {
		w.add("s.repository_storage = ?", f.Storage)
	}
	spec := listSpec[model.Snippet]{columns: snippetColumns, from: "snippets s LEFT JOIN projects p ON p.id = s.project_id",
		idCol: "s.id", where: w, order: order{column: "s.created_at", desc: true}, scan: scanSnippet,
		keyOf: func(s model.Snippet) (any, int64) { return micros(s.CreatedAt), s.ID }}
	return list(ctx, tx, spec, page)
}
