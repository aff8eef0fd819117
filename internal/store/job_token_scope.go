package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"quarry/internal/model"
)

// The CI job token scope of a project (the "source" of its allowlists):
// whether it limits inbound job token access, and the projects and
// groups whose jobs it admits.

// JobTokenProjectLink admits the jobs of TargetProjectID to
// SourceProjectID.
type JobTokenProjectLink struct {
	ID              int64
	SourceProjectID int64
	TargetProjectID int64
	AddedByID       int64
	CreatedAt       time.Time
}

// JobTokenGroupLink admits the jobs of every project under TargetGroupID
// (at any depth) to SourceProjectID.
type JobTokenGroupLink struct {
	ID              int64
	SourceProjectID int64
	TargetGroupID   int64
	AddedByID       int64
	CreatedAt       time.Time
	// Group is the target group (loaded by JobTokenGroups).
	Group model.Namespace
}

// Unique indexes of the allowlists.
const (
	UniqueJobTokenProjectLink = "ci_job_token_project_links_key"
	UniqueJobTokenGroupLink   = "ci_job_token_group_links_key"
)

// IsJobTokenProjectLinked reports whether err is a second link of the
// same two projects.
func IsJobTokenProjectLinked(err error) bool {
	return IsUnique(err, UniqueJobTokenProjectLink) ||
		IsUnique(err, "ci_job_token_project_links.source_project_id, ci_job_token_project_links.target_project_id")
}

// IsJobTokenGroupLinked reports whether err is a second link of the same
// project and group.
func IsJobTokenGroupLinked(err error) bool {
	return IsUnique(err, UniqueJobTokenGroupLink) ||
		IsUnique(err, "ci_job_token_group_links.source_project_id, ci_job_token_group_links.target_group_id")
}

// JobTokenInboundEnabled reports whether a project limits the job tokens
// of other projects to its allowlists (true unless set off).
func (tx *Tx) JobTokenInboundEnabled(ctx context.Context, projectID int64) (bool, error) {
	enabled := true
	err := tx.row(ctx, []any{&enabled}, "SELECT inbound_enabled FROM ci_job_token_scopes WHERE project_id = ?", projectID)
	if errors.Is(err, model.ErrNotFound) {
		return true, nil
	}
	return enabled, err
}

// SetJobTokenInbound turns a project's inbound limit on or off.
func (tx *Tx) SetJobTokenInbound(ctx context.Context, projectID int64, enabled bool) error {
	_, err := tx.exec(ctx, `INSERT INTO ci_job_token_scopes (project_id, inbound_enabled, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (project_id) DO UPDATE SET inbound_enabled = excluded.inbound_enabled, updated_at = excluded.updated_at`,
		projectID, enabled, micros(tx.Now()))
	return err
}

// JobTokenAllowed reports whether the jobs of sourceProjectID may use
// their token on targetProjectID: the same project, a target without the
// inbound limit, a source on the target's allowlist, or a source anywhere
// under a group on the target's groups allowlist. One query, on the
// scope's key and the allowlists' (source, target) indexes.
func (tx *Tx) JobTokenAllowed(ctx context.Context, sourceProjectID, targetProjectID int64) (bool, error) {
	if sourceProjectID == targetProjectID {
		return true, nil
	}
	var ok bool
	err := tx.row(ctx, []any{&ok}, `SELECT COALESCE((SELECT s.inbound_enabled FROM ci_job_token_scopes s WHERE s.project_id = ?), TRUE) = FALSE
		OR EXISTS (SELECT 1 FROM ci_job_token_project_links l WHERE l.source_project_id = ? AND l.target_project_id = ?)
		OR EXISTS (SELECT 1 FROM ci_job_token_group_links l JOIN namespaces g ON g.id = l.target_group_id
			JOIN projects p ON p.id = ? JOIN namespaces pn ON pn.id = p.namespace_id
			WHERE l.source_project_id = ? AND pn.traversal LIKE g.traversal || '%')`,
		targetProjectID, targetProjectID, sourceProjectID, sourceProjectID, targetProjectID)
	return ok, err
}

// CreateJobTokenProjectLink adds a project to another's allowlist and sets
// the link's id and time.
func (tx *Tx) CreateJobTokenProjectLink(ctx context.Context, l *JobTokenProjectLink) error {
	now := micros(tx.Now())
	id, err := tx.insert(ctx, `INSERT INTO ci_job_token_project_links (source_project_id, target_project_id, added_by_id, created_at)
		VALUES (?, ?, ?, ?)`, l.SourceProjectID, l.TargetProjectID, zeroNull(l.AddedByID), now)
	if err != nil {
		return err
	}
	l.ID, l.CreatedAt = id, fromMicros(now)
	return nil
}

// JobTokenProjectLinked reports whether target is on source's allowlist.
func (tx *Tx) JobTokenProjectLinked(ctx context.Context, sourceProjectID, targetProjectID int64) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_job_token_project_links WHERE source_project_id = ? AND target_project_id = ?",
		sourceProjectID, targetProjectID)
	return n > 0, err
}

// JobTokenProjectLinks counts the projects on a project's allowlist.
func (tx *Tx) JobTokenProjectLinks(ctx context.Context, sourceProjectID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_job_token_project_links WHERE source_project_id = ?", sourceProjectID)
	return n, err
}

// DeleteJobTokenProjectLink takes a project off another's allowlist;
// model.ErrNotFound when it was not on it.
func (tx *Tx) DeleteJobTokenProjectLink(ctx context.Context, sourceProjectID, targetProjectID int64) error {
	n, err := tx.execN(ctx, "DELETE FROM ci_job_token_project_links WHERE source_project_id = ? AND target_project_id = ?",
		sourceProjectID, targetProjectID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// allowlistRow is a project of an allowlist with its place: -1 for the
// project itself, the link's id for the others.
type allowlistRow struct {
	pos int64
	model.Project
}

// JobTokenProjects lists a project's inbound allowlist as GitLab shows it:
// the project itself first, then the projects added, in the order they
// were added. Projects being deleted are left out.
func (tx *Tx) JobTokenProjects(ctx context.Context, sourceProjectID int64, page model.Page) ([]model.Project, model.PageInfo, error) {
	// The subquery's arguments come first in the text, so they lead the
	// list's arguments; the conditions after it take none.
	w := where{args: []any{sourceProjectID, sourceProjectID}}
	w.add("p.pending_delete = FALSE")
	rows, info, err := list(ctx, tx, listSpec[allowlistRow]{
		columns: "x.pos, " + projectColumns,
		from: `(SELECT CAST(-1 AS BIGINT) AS pos, CAST(? AS BIGINT) AS pid
			UNION ALL SELECT id AS pos, target_project_id AS pid FROM ci_job_token_project_links WHERE source_project_id = ?) x
			JOIN projects p ON p.id = x.pid JOIN namespaces n ON n.id = p.namespace_id`,
		idCol: "x.pos", where: w,
		scan: func(r *sql.Rows) (allowlistRow, error) {
			var a allowlistRow
			return a, r.Scan(append([]any{&a.pos}, tx.projectDest(&a.Project)...)...)
		},
		keyOf: func(a allowlistRow) (any, int64) { return a.pos, a.pos },
	}, page)
	if err != nil {
		return nil, info, err
	}
	out := make([]model.Project, len(rows))
	for i, r := range rows {
		out[i] = r.Project
	}
	return out, info, nil
}

// CreateJobTokenGroupLink adds a group to a project's groups allowlist and
// sets the link's id and time.
func (tx *Tx) CreateJobTokenGroupLink(ctx context.Context, l *JobTokenGroupLink) error {
	now := micros(tx.Now())
	id, err := tx.insert(ctx, `INSERT INTO ci_job_token_group_links (source_project_id, target_group_id, added_by_id, created_at)
		VALUES (?, ?, ?, ?)`, l.SourceProjectID, l.TargetGroupID, zeroNull(l.AddedByID), now)
	if err != nil {
		return err
	}
	l.ID, l.CreatedAt = id, fromMicros(now)
	return nil
}

// JobTokenGroupLinked reports whether a group is on a project's groups
// allowlist.
func (tx *Tx) JobTokenGroupLinked(ctx context.Context, sourceProjectID, targetGroupID int64) (bool, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_job_token_group_links WHERE source_project_id = ? AND target_group_id = ?",
		sourceProjectID, targetGroupID)
	return n > 0, err
}

// JobTokenGroupLinks counts the groups on a project's groups allowlist.
func (tx *Tx) JobTokenGroupLinks(ctx context.Context, sourceProjectID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM ci_job_token_group_links WHERE source_project_id = ?", sourceProjectID)
	return n, err
}

// DeleteJobTokenGroupLink takes a group off a project's groups allowlist;
// model.ErrNotFound when it was not on it.
func (tx *Tx) DeleteJobTokenGroupLink(ctx context.Context, sourceProjectID, targetGroupID int64) error {
	n, err := tx.execN(ctx, "DELETE FROM ci_job_token_group_links WHERE source_project_id = ? AND target_group_id = ?",
		sourceProjectID, targetGroupID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// JobTokenGroups lists a project's groups allowlist in the order the
// groups were added, with the groups.
func (tx *Tx) JobTokenGroups(ctx context.Context, sourceProjectID int64, page model.Page) ([]JobTokenGroupLink, model.PageInfo, error) {
	var w where
	w.add("l.source_project_id = ?", sourceProjectID)
	return list(ctx, tx, listSpec[JobTokenGroupLink]{
		columns: "l.id, l.source_project_id, l.target_group_id, l.added_by_id, l.created_at, " + namespaceColumns,
		from:    "ci_job_token_group_links l JOIN namespaces n ON n.id = l.target_group_id",
		idCol:   "l.id", where: w,
		scan: func(r *sql.Rows) (JobTokenGroupLink, error) {
			var l JobTokenGroupLink
			return l, r.Scan(append([]any{&l.ID, &l.SourceProjectID, &l.TargetGroupID, nullInt64{&l.AddedByID}, tsScan{&l.CreatedAt}},
				namespaceDest(&l.Group)...)...)
		},
		keyOf: func(l JobTokenGroupLink) (any, int64) { return l.ID, l.ID },
	}, page)
}
