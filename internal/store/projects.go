package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"quarry/internal/model"
)

const projectColumns = `p.id, p.namespace_id, p.creator_id, p.name, p.path, p.description, p.visibility, p.default_branch,
	p.archived, p.repository_storage, p.disk_path, p.empty_repo, p.has_readme, p.import_status, p.import_error,
	p.forked_from_id, p.star_count, p.forks_count, p.avatar, p.issues_access_level, p.merge_requests_access_level,
	p.settings, p.repository_size, p.wiki_size, p.commit_count, p.marked_for_deletion_on, p.pending_delete, p.last_activity_at,
	p.created_at, p.updated_at, p.version, p.entity_version, ` + namespaceColumns + `, p.runners_token, p.repository_read_only,
	p.open_issues_count, p.open_confidential_issues_count`

// projectFrom joins each project with its namespace.
const projectFrom = "projects p JOIN namespaces n ON n.id = p.namespace_id"

// projectDest scans a project; its registration token is sealed
// (secrets.go), and comes after the settings document it belongs to.
func (tx *Tx) projectDest(p *model.Project) []any {
	return append(append([]any{&p.ID, &p.NamespaceID, nullInt64{&p.CreatorID}, &p.Name, &p.Path, &p.Description, &p.Visibility,
		nullString{&p.DefaultBranch}, &p.Archived, &p.RepositoryStorage, &p.DiskPath, &p.EmptyRepo, &p.HasReadme,
		&p.ImportStatus, nullString{&p.ImportError}, nullInt64Ptr{&p.ForkedFromID}, &p.StarCount, &p.ForksCount,
		nullString{&p.Avatar}, &p.IssuesAccessLevel, &p.MergeRequestsAccessLevel, jsonDoc{&p.Settings},
		&p.RepositorySize, &p.WikiSize, &p.CommitCount, nullString{&p.MarkedForDeletionOn}, &p.PendingDelete,
		tsScan{&p.LastActivityAt}, tsScan{&p.CreatedAt}, tsScan{&p.UpdatedAt}, &p.Version, &p.EntityVersion}, namespaceDest(&p.Namespace)...),
		sealedText{tx, &p.Settings.RunnersToken, sealProjectToken}, &p.RepositoryReadOnly, &p.OpenIssuesCount,
		&p.OpenConfidentialIssuesCount)
}

func (tx *Tx) scanProject(r *sql.Rows) (model.Project, error) {
	var p model.Project
	err := r.Scan(tx.projectDest(&p)...)
	return p, err
}

// Unique indexes on projects.
const (
	UniqueProjectPath = "projects_namespace_path_key"
	UniqueProjectName = "projects_namespace_name_key"
)

const projectWritable = `namespace_id, creator_id, name, path, description, visibility, default_branch, archived,
	repository_storage, disk_path, empty_repo, has_readme, import_status, import_error, forked_from_id, avatar,
	issues_access_level, merge_requests_access_level, settings, repository_size, commit_count, marked_for_deletion_on,
	pending_delete, last_activity_at, created_at, updated_at, runners_token, runners_token_digest`

func (tx *Tx) projectValues(p *model.Project) ([]any, error) {
	token, digest, err := tx.sealToken(p.Settings.RunnersToken, sealProjectToken)
	return []any{p.NamespaceID, zeroNull(p.CreatorID), p.Name, p.Path, p.Description, string(p.Visibility), emptyNull(p.DefaultBranch),
		p.Archived, p.RepositoryStorage, p.DiskPath, p.EmptyRepo, p.HasReadme, p.ImportStatus, emptyNull(p.ImportError),
		p.ForkedFromID, emptyNull(p.Avatar), p.IssuesAccessLevel, p.MergeRequestsAccessLevel, toJSON(p.Settings),
		p.RepositorySize, p.CommitCount, emptyNull(p.MarkedForDeletionOn), p.PendingDelete, micros(p.LastActivityAt),
		micros(p.CreatedAt), micros(p.UpdatedAt), token, digest}, err
}

// projectEditable are the columns UpdateProject writes: everything but
// the repository's facts (emptiness, README, size, commit count, last
// activity), which SetRepositoryState alone keeps, so an edit made from a
// project read before a push never writes old facts back, and a refresh
// never makes an edit conflict. Nor is the registration token written:
// SetProjectRunnersToken replaces it. Nor is the storage: a storage move
// alone switches it (SwitchContainerStorage), so an edit made from a
// project read before the switch never puts it back.
const projectEditable = `namespace_id, creator_id, name, path, description, visibility, default_branch, archived,
	disk_path, import_status, import_error, forked_from_id, avatar,
	issues_access_level, merge_requests_access_level, settings, marked_for_deletion_on,
	pending_delete, created_at, updated_at`

func projectEditableValues(p *model.Project) []any {
	return []any{p.NamespaceID, zeroNull(p.CreatorID), p.Name, p.Path, p.Description, string(p.Visibility), emptyNull(p.DefaultBranch),
		p.Archived, p.DiskPath, p.ImportStatus, emptyNull(p.ImportError),
		p.ForkedFromID, emptyNull(p.Avatar), p.IssuesAccessLevel, p.MergeRequestsAccessLevel, toJSON(p.Settings),
		emptyNull(p.MarkedForDeletionOn), p.PendingDelete, micros(p.CreatedAt), micros(p.UpdatedAt)}
}

var (
	projectInsert = "INSERT INTO projects (" + projectWritable + ") VALUES (" + placeholders(28) + ")"
	projectUpdate = "UPDATE projects SET " + assignments(projectEditable) + ", version = version + 1 WHERE id = ? AND version = ?"
)

// CreateProject inserts p, sets p.ID, and gives everyone who reaches its
// namespace the same access to it.
func (tx *Tx) CreateProject(ctx context.Context, p *model.Project) error {
	values, err := tx.projectValues(p)
	if err != nil {
		return err
	}
	id, err := tx.insert(ctx, projectInsert, values...)
	if err != nil {
		return err
	}
	p.ID, p.Version = id, 1
	if p.ForkedFromID != nil {
		if _, err := tx.exec(ctx, "UPDATE projects SET forks_count = forks_count + 1 WHERE id = ?", *p.ForkedFromID); err != nil {
			return err
		}
	}
	_, err = tx.exec(ctx, `INSERT INTO project_authorizations (user_id, project_id, access_level, expires_at)
		SELECT user_id, ?, access_level, expires_at FROM namespace_authorizations WHERE namespace_id = ? AND access_level > 0`, id, p.NamespaceID)
	return err
}

// UpdateProject writes p if nobody changed it since it was read.
func (tx *Tx) UpdateProject(ctx context.Context, p *model.Project) error {
	n, err := tx.execN(ctx, projectUpdate, append(projectEditableValues(p), p.ID, p.Version)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("409 Conflict: Resource lock")
	}
	p.Version++
	return nil
}

// SetProjectFork records or clears (nil) the project a project was forked
// from, keeping forks_count true.
func (tx *Tx) SetProjectFork(ctx context.Context, id int64, old, next *int64) error {
	if old != nil {
		if _, err := tx.exec(ctx, "UPDATE projects SET forks_count = forks_count - 1 WHERE id = ? AND forks_count > 0", *old); err != nil {
			return err
		}
	}
	if next != nil {
		if _, err := tx.exec(ctx, "UPDATE projects SET forks_count = forks_count + 1 WHERE id = ?", *next); err != nil {
			return err
		}
	}
	_, err := tx.exec(ctx, "UPDATE projects SET forked_from_id = ?, version = version + 1 WHERE id = ?", next, id)
	return err
}

// SetImportStatus moves a project's import (fork) state.
func (tx *Tx) SetImportStatus(ctx context.Context, id int64, status, importError string) error {
	_, err := tx.exec(ctx, "UPDATE projects SET import_status = ?, import_error = ?, version = version + 1 WHERE id = ?", status, emptyNull(importError), id)
	return err
}

// SetRepositoryState records what the repository holds after a change.
func (tx *Tx) SetRepositoryState(ctx context.Context, id int64, empty, hasReadme bool, defaultBranch string, size, commits int64, activity time.Time) error {
	// Only a new default branch (an edited column) counts as a change of
	// version; the facts are SetRepositoryState's alone.
	_, err := tx.exec(ctx, `UPDATE projects SET empty_repo = ?, has_readme = ?, repository_size = ?, commit_count = ?, last_activity_at = ?,
		version = version + CASE WHEN COALESCE(default_branch, '') = ? THEN 0 ELSE 1 END, default_branch = ? WHERE id = ?`,
		empty, hasReadme, size, commits, micros(activity), defaultBranch, emptyNull(defaultBranch), id)
	return err
}

// FillRepository records that a project's repository holds commits now:
// true for the one writer that found it empty (a compare-and-set, so of
// two writers recording the first commit at once only one protects the
// default branch), false when it was not.
func (tx *Tx) FillRepository(ctx context.Context, id int64) (bool, error) {
	n, err := tx.execN(ctx, "UPDATE projects SET empty_repo = FALSE WHERE id = ? AND empty_repo = TRUE", id)
	return n == 1, err
}

// DeleteProject removes a project row and what belongs to it alone.
func (tx *Tx) DeleteProject(ctx context.Context, p *model.Project) error {
	if p.ForkedFromID != nil {
		if _, err := tx.exec(ctx, "UPDATE projects SET forks_count = forks_count - 1 WHERE id = ? AND forks_count > 0", *p.ForkedFromID); err != nil {
			return err
		}
	}
	for _, q := range []string{
		"UPDATE topics SET total_projects_count = total_projects_count - 1 WHERE id IN (SELECT topic_id FROM project_topics WHERE project_id = ?)",
		"DELETE FROM members WHERE source_type = 'Project' AND source_id = ?",
		"DELETE FROM custom_attributes WHERE source_type = 'Project' AND source_id = ?",
		"UPDATE projects SET forked_from_id = NULL WHERE forked_from_id = ?",
		"DELETE FROM projects WHERE id = ?",
	} {
		if _, err := tx.exec(ctx, q, p.ID); err != nil {
			return err
		}
	}
	return tx.deleteContainerMoves(ctx, model.ContainerProject, "= ?", p.ID)
}

// ProjectByID returns one project with its namespace.
func (tx *Tx) ProjectByID(ctx context.Context, id int64) (model.Project, error) {
	var p model.Project
	err := tx.row(ctx, tx.projectDest(&p), "SELECT "+projectColumns+" FROM "+projectFrom+" WHERE p.id = ?", id)
	return p, err
}

// ProjectByFullPath finds a project by "namespace/path", ignoring case.
func (tx *Tx) ProjectByFullPath(ctx context.Context, fullPath string) (model.Project, error) {
	i := strings.LastIndex(fullPath, "/")
	if i <= 0 {
		return model.Project{}, model.ErrNotFound
	}
	var p model.Project
	err := tx.row(ctx, tx.projectDest(&p), "SELECT "+projectColumns+" FROM "+projectFrom+" WHERE lower(n.full_path) = ? AND lower(p.path) = ?",
		strings.ToLower(fullPath[:i]), strings.ToLower(fullPath[i+1:]))
	return p, err
}

// ProjectByRef finds a project by id ("12") or full path ("group/project"),
// as the API's :id names projects.
func (tx *Tx) ProjectByRef(ctx context.Context, ref string) (model.Project, error) {
	return byRef(ctx, ref, tx.ProjectByID, tx.ProjectByFullPath)
}

// ProjectsByIDs loads several projects.
func (tx *Tx) ProjectsByIDs(ctx context.Context, ids []int64) (map[int64]model.Project, error) {
	out := map[int64]model.Project{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+projectColumns+" FROM "+projectFrom+" WHERE p.id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			p, err := tx.scanProject(r)
			out[p.ID] = p
			return err
		})
	return out, err
}

// ProjectPathTaken reports whether a project or subgroup in namespace uses
// path, or another project uses name.
func (tx *Tx) ProjectPathTaken(ctx context.Context, namespaceID int64, path, name string, exceptProject int64) (pathTaken, nameTaken bool, err error) {
	var np, nn, ng int
	err = tx.row(ctx, []any{&np, &nn, &ng}, `SELECT
		(SELECT COUNT(*) FROM projects WHERE namespace_id = ? AND lower(path) = ? AND id <> ?),
		(SELECT COUNT(*) FROM projects WHERE namespace_id = ? AND lower(name) = ? AND id <> ?),
		(SELECT COUNT(*) FROM namespaces WHERE parent_id = ? AND lower(path) = ?)`,
		namespaceID, strings.ToLower(path), exceptProject, namespaceID, strings.ToLower(name), exceptProject, namespaceID, strings.ToLower(path))
	return np+ng > 0, nn > 0, err
}

// ProjectsInTree counts the projects inside a namespace tree.
func (tx *Tx) ProjectsInTree(ctx context.Context, traversal string) ([]model.Project, error) {
	var out []model.Project
	err := tx.each(ctx, "SELECT "+projectColumns+" FROM "+projectFrom+` WHERE n.traversal LIKE ? ESCAPE '\'`,
		[]any{escapeLike(traversal) + "%"}, func(r *sql.Rows) error {
			p, err := tx.scanProject(r)
			out = append(out, p)
			return err
		})
	return out, err
}

// ProjectFilter selects projects for a project list.
type ProjectFilter struct {
	Viewer Viewer
	// Exactly one scope may be set: a namespace tree, one namespace (with
	// its shared projects), only shared projects, a user's personal
	// projects, or a project's forks.
	NamespaceID     int64
	IncludeSubtree  string // traversal of the namespace, to include subgroups
	WithShared      bool   // with NamespaceID: projects shared with the group
	SharedWithGroup int64
	ForkedFromID    int64
	UserNamespaceID int64

	Archived                 *bool
	Visibility               string
	Search                   string
	SearchNamespaces         bool
	Owned                    bool
	Membership               bool
	MinAccessLevel           int
	Starred                  bool
	StarredBy                int64
	Topics                   []string
	TopicID                  int64
	IDAfter, IDBefore        int64
	LastActivityAfter        *time.Time
	LastActivityBefore       *time.Time
	WithIssuesEnabled        bool
	WithMergeRequestsEnabled bool
	Language                 string
	RepositoryStorage        string
	CustomAttributes         map[string]string
	OrderBy                  string
	Desc                     bool
}

var projectOrder = map[string]string{"id": "p.id", "name": "p.name", "path": "p.path", "created_at": "p.created_at",
	"updated_at": "p.updated_at", "last_activity_at": "p.last_activity_at", "similarity": "p.name",
	"repository_size": "p.repository_size", "storage_size": "(p.repository_size + p.wiki_size)", "packages_size": "p.id", "wiki_size": "p.wiki_size",
	"star_count": "p.star_count"}

// visibleProjectCond limits projects p to those the viewer may see.
func (w *where) visibleProjectCond(v Viewer) {
	switch {
	case v.Admin:
	case v.UserID == 0:
		w.add("p.visibility = 'public'")
	default:
		vis := "p.visibility = 'public'"
		if !v.External {
			vis = "p.visibility IN ('public', 'internal')"
		}
		w.add("("+vis+" OR p.id IN (SELECT a.project_id FROM project_authorizations a WHERE a.user_id = ? AND a.access_level > 0 AND (a.expires_at IS NULL OR a.expires_at > ?)))", v.UserID, v.Today)
	}
}

func (w *where) projectAccessCond(v Viewer, min int) {
	if min < 1 {
		min = 1
	}
	w.add("p.id IN (SELECT a.project_id FROM project_authorizations a WHERE a.user_id = ? AND a.access_level >= ? AND (a.expires_at IS NULL OR a.expires_at > ?))", v.UserID, min, v.Today)
}

// ListProjects returns one page of projects.
func (tx *Tx) ListProjects(ctx context.Context, f ProjectFilter, page model.Page) ([]model.Project, model.PageInfo, error) {
	w, ord := tx.projectList(f)
	col := ord.column
	spec := listSpec[model.Project]{columns: projectColumns, from: projectFrom, idCol: "p.id", where: w,
		order: ord, scan: tx.scanProject, keyNotNull: true,
		keyOf: func(p model.Project) (any, int64) {
			switch col {
			case "p.name":
				return p.Name, p.ID
			case "p.path":
				return p.Path, p.ID
			case "p.created_at":
				return micros(p.CreatedAt), p.ID
			case "p.updated_at":
				return micros(p.UpdatedAt), p.ID
			case "p.last_activity_at":
				return micros(p.LastActivityAt), p.ID
			case "p.repository_size":
				return p.RepositorySize, p.ID
			case "p.wiki_size":
				return p.WikiSize, p.ID
			case "(p.repository_size + p.wiki_size)":
				return p.RepositorySize + p.WikiSize, p.ID
			case "p.star_count":
				return int64(p.StarCount), p.ID
			}
			return nil, p.ID
		}}
	// Every project has its namespace: the count and the start of an
	// offset page join it only when a condition reads it.
	if !w.reads("n.") {
		spec.countFrom = "projects p"
	}
	spec.countRow = w.countRow("p.pending_delete = FALSE", "live_projects")
	return list(ctx, tx, spec, page)
}

// ListProjectHeads is ListProjects by the projects' heads (ProjectHead,
// with userID's levels as of today): the same conditions and order, in
// one statement with the count of an offset page, no wide row read. The
// caller takes the rows from its copies at the heads' versions and reads
// the misses (ProjectsByIDs).
func (tx *Tx) ListProjectHeads(ctx context.Context, f ProjectFilter, page model.Page, userID int64, today string) ([]ProjectHead, model.PageInfo, error) {
	w, ord := tx.projectList(f)
	type headPage struct {
		hs   []ProjectHead
		info model.PageInfo
	}
	// A page of heads is remembered (pages.go); each reader gets its own
	// slice.
	p, err := rememberedPage(ctx, tx, pageKey("project heads", w, ord, page, userID, today), func(ctx context.Context) (headPage, error) {
		hs, info, err := tx.listProjectHeads(ctx, w, ord, page, userID, today)
		return headPage{hs, info}, err
	}, func(p headPage) int { return len(p.hs) * 200 })
	return slices.Clone(p.hs), p.info, err
}

// listProjectHeads is ListProjectHeads read from the database.
func (tx *Tx) listProjectHeads(ctx context.Context, w where, ord order, page model.Page, userID int64, today string) ([]ProjectHead, model.PageInfo, error) {
	type keyed struct {
		h   ProjectHead
		key any
	}
	spec := listSpec[keyed]{columns: ord.column + ", " + projectHeadColumns, from: projectHeadFrom, idCol: "p.id", where: w,
		order: ord, keyNotNull: true, countFrom: projectFrom,
		columnArgs: []any{userID, today, userID, today, userID, today},
		keyOf:      func(k keyed) (any, int64) { return k.key, k.h.ID },
		scanCounted: func(r *sql.Rows, n *int) (keyed, error) {
			var k keyed
			var sc headScan
			dest := append([]any{&k.key}, sc.dest(&k.h)...)
			if n != nil {
				dest = append(dest, n)
			}
			err := r.Scan(dest...)
			sc.done(&k.h)
			if b, ok := k.key.([]byte); ok {
				k.key = string(b)
			}
			return k, err
		}}
	if !w.reads("n.") {
		spec.countFrom = "projects p"
	}
	spec.countRow = w.countRow("p.pending_delete = FALSE", "live_projects")
	ks, info, err := list(ctx, tx, spec, page)
	hs := make([]ProjectHead, len(ks))
	for i := range ks {
		hs[i] = ks[i].h
	}
	return hs, info, err
}

// projectList is the conditions and order of a project list.
func (tx *Tx) projectList(f ProjectFilter) (where, order) {
	var w where
	w.add("p.pending_delete = FALSE")
	w.visibleProjectCond(f.Viewer)
	switch {
	case f.IncludeSubtree != "" && f.WithShared:
		w.add(`(n.traversal LIKE ? ESCAPE '\' OR p.id IN (SELECT l.project_id FROM project_group_links l WHERE l.group_id = ?))`, escapeLike(f.IncludeSubtree)+"%", f.NamespaceID)
	case f.IncludeSubtree != "":
		w.add(`n.traversal LIKE ? ESCAPE '\'`, escapeLike(f.IncludeSubtree)+"%")
	case f.NamespaceID != 0 && f.WithShared:
		w.add("(p.namespace_id = ? OR p.id IN (SELECT l.project_id FROM project_group_links l WHERE l.group_id = ?))", f.NamespaceID, f.NamespaceID)
	case f.NamespaceID != 0:
		w.add("p.namespace_id = ?", f.NamespaceID)
	}
	if f.SharedWithGroup != 0 {
		w.add("p.id IN (SELECT l.project_id FROM project_group_links l WHERE l.group_id = ?)", f.SharedWithGroup)
	}
	if f.ForkedFromID != 0 {
		w.add("p.forked_from_id = ?", f.ForkedFromID)
	}
	if f.UserNamespaceID != 0 {
		w.add("p.namespace_id = ?", f.UserNamespaceID)
	}
	if f.Archived != nil {
		w.add("p.archived = ?", *f.Archived)
	}
	if f.Visibility != "" {
		w.add("p.visibility = ?", f.Visibility)
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		cond := "(" + tx.ilike("p.name") + " OR " + tx.ilike("p.path") + " OR " + tx.ilike("p.description")
		args := []any{pat, pat, pat}
		if f.SearchNamespaces {
			cond += " OR " + tx.ilike("n.full_path") + " OR " + tx.ilike("n.full_name")
			args = append(args, pat, pat)
		}
		w.add(cond+")", args...)
	}
	switch {
	case f.Owned:
		w.projectAccessCond(f.Viewer, int(model.Owner))
	case f.MinAccessLevel > 0:
		w.projectAccessCond(f.Viewer, f.MinAccessLevel)
	case f.Membership:
		w.projectAccessCond(f.Viewer, 1)
	}
	// Set conditions (IN a subquery) are computed once, not per row.
	if f.StarredBy != 0 {
		w.add("p.id IN (SELECT s.project_id FROM stars s WHERE s.user_id = ?)", f.StarredBy)
	}
	if f.Starred {
		w.add("p.id IN (SELECT s.project_id FROM stars s WHERE s.user_id = ?)", f.Viewer.UserID)
	}
	for _, t := range f.Topics {
		w.add("p.id IN (SELECT pt.project_id FROM project_topics pt JOIN topics t ON t.id = pt.topic_id WHERE lower(t.name) = ?)", strings.ToLower(t))
	}
	if f.TopicID != 0 {
		w.add("p.id IN (SELECT pt.project_id FROM project_topics pt WHERE pt.topic_id = ?)", f.TopicID)
	}
	if f.IDAfter != 0 {
		w.add("p.id > ?", f.IDAfter)
	}
	if f.IDBefore != 0 {
		w.add("p.id < ?", f.IDBefore)
	}
	if f.LastActivityAfter != nil {
		w.add("p.last_activity_at > ?", micros(*f.LastActivityAfter))
	}
	if f.LastActivityBefore != nil {
		w.add("p.last_activity_at < ?", micros(*f.LastActivityBefore))
	}
	if f.WithIssuesEnabled {
		w.add("p.issues_access_level <> 'disabled'")
	}
	if f.WithMergeRequestsEnabled {
		w.add("p.merge_requests_access_level <> 'disabled'")
	}
	if f.Language != "" {
		w.add("p.id IN (SELECT l.project_id FROM project_languages l WHERE lower(l.name) = ?)", strings.ToLower(f.Language))
	}
	if f.RepositoryStorage != "" {
		w.add("p.repository_storage = ?", f.RepositoryStorage)
	}
	w.customAttrsCond(AttrsProject, "p.id", f.CustomAttributes)
	col := projectOrder[f.OrderBy]
	if col == "" {
		col = "p.created_at"
	}
	ord := order{column: col, desc: f.Desc}
	if f.OrderBy == "similarity" && f.Search != "" {
		ord.rank, ord.rankArgs = similarity(f.Search, "p.name", "p.path")
		ord.desc = false
	}
	return w, ord
}

// TopicsOf loads the topic names of several projects, sorted by name.
func (tx *Tx) TopicsOf(ctx context.Context, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT pt.project_id, t.name FROM project_topics pt JOIN topics t ON t.id = pt.topic_id WHERE pt.project_id IN ("+
		placeholders(len(ids))+") ORDER BY t.name", int64Args(ids), func(r *sql.Rows) error {
		var id int64
		var name string
		err := r.Scan(&id, &name)
		out[id] = append(out[id], name)
		return err
	})
	return out, err
}

// GroupLinksOf loads the groups several projects are shared with.
func (tx *Tx) GroupLinksOf(ctx context.Context, ids []int64) (map[int64][]model.GroupLink, error) {
	out := map[int64][]model.GroupLink{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT l.project_id, l.group_id, l.group_access, l.expires_at, "+namespaceColumns+
		" FROM project_group_links l JOIN namespaces n ON n.id = l.group_id WHERE l.project_id IN ("+placeholders(len(ids))+") ORDER BY l.id",
		int64Args(ids), func(r *sql.Rows) error {
			var l model.GroupLink
			err := r.Scan(append([]any{&l.ProjectID, &l.GroupID, &l.GroupAccess, nullString{&l.ExpiresAt}}, namespaceDest(&l.Group)...)...)
			out[l.ProjectID] = append(out[l.ProjectID], l)
			return err
		})
	return out, err
}

// StarredBy reports which of the projects a user starred.
func (tx *Tx) StarredBy(ctx context.Context, userID int64, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if userID == 0 || len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT project_id FROM stars WHERE user_id = ? AND project_id IN ("+placeholders(len(ids))+")",
		append([]any{userID}, int64Args(ids)...), func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out[id] = true
			return err
		})
	return out, err
}

// CountNamespaceProjects counts the projects in a namespace (a user's
// personal projects, for their projects_limit).
func (tx *Tx) CountNamespaceProjects(ctx context.Context, namespaceID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM projects WHERE namespace_id = ?", namespaceID)
	return n, err
}
