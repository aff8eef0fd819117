package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"quarry/internal/model"
)

const namespaceColumns = `n.id, n.name, n.path, n.kind, n.owner_id, n.parent_id, n.full_path, n.full_name, n.traversal,
	n.visibility, n.avatar, n.created_at, n.updated_at, n.entity_version`

func namespaceDest(n *model.Namespace) []any {
	return []any{&n.ID, &n.Name, &n.Path, &n.Kind, nullInt64{&n.OwnerID}, nullInt64{&n.ParentID}, &n.FullPath, &n.FullName,
		&n.Traversal, &n.Visibility, nullString{&n.Avatar}, tsScan{&n.CreatedAt}, tsScan{&n.UpdatedAt}, &n.EntityVersion}
}

const groupColumns = namespaceColumns + `, n.description, n.settings, n.runners_token, n.marked_for_deletion_on, n.version,
	n.repository_storage, n.repository_read_only`

// jsonDoc scans a JSON text column into a struct.
type jsonDoc struct{ v any }

func (j jsonDoc) Scan(src any) error {
	var b []byte
	switch x := src.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	case nil:
		return nil
	default:
		return fmt.Errorf("json column holds %T", src)
	}
	if ps, ok := j.v.(*model.ProjectSettings); ok {
		return decodeProjectSettings(b, ps)
	}
	return json.Unmarshal(b, j.v)
}

// projectSettings remembers decoded settings documents by their text:
// every read of a project decodes the same few documents again, and the
// decoding is most of the cost of reading a row. It starts afresh past
// maxCachedSettings entries.
var projectSettings struct {
	m sync.Map // string → model.ProjectSettings
	n atomic.Int64
}

const maxCachedSettings = 10000

func decodeProjectSettings(b []byte, dst *model.ProjectSettings) error {
	if v, ok := projectSettings.m.Load(string(b)); ok {
		*dst = v.(model.ProjectSettings)
		dst.ProgrammingLanguages = maps.Clone(dst.ProgrammingLanguages)
		return nil
	}
	var ps model.ProjectSettings
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	if projectSettings.n.Add(1) > maxCachedSettings {
		projectSettings.m.Clear()
		projectSettings.n.Store(1)
	}
	projectSettings.m.Store(string(b), ps)
	*dst = ps
	dst.ProgrammingLanguages = maps.Clone(ps.ProgrammingLanguages)
	return nil
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %T: %v", v, err))
	}
	return string(b)
}

// groupDest scans a group; its registration token is sealed
// (secrets.go).
func (tx *Tx) groupDest(g *model.Group) []any {
	return append(namespaceDest(&g.Namespace), &g.Description, jsonDoc{&g.Settings}, sealedText{tx, &g.RunnersToken, sealGroupToken},
		nullString{&g.MarkedForDeletionOn}, &g.Version, &g.RepositoryStorage, &g.RepositoryReadOnly)
}

func (tx *Tx) scanGroup(r *sql.Rows) (model.Group, error) {
	var g model.Group
	err := r.Scan(tx.groupDest(&g)...)
	return g, err
}

// Unique indexes on namespaces.
const (
	UniqueChildPath = "namespaces_child_path_key"
)

// CreateGroup inserts g under its parent (g.ParentID, 0 for top level),
// computing its full path, full name and traversal, and sets g.ID.
func (tx *Tx) CreateGroup(ctx context.Context, g *model.Group) error {
	g.Kind = model.NamespaceGroup
	g.FullPath, g.FullName, g.Traversal = g.Path, g.Name, ""
	if g.ParentID != 0 {
		parent, err := tx.NamespaceByID(ctx, g.ParentID)
		if err != nil {
			return err
		}
		g.FullPath = parent.FullPath + "/" + g.Path
		g.FullName = parent.FullName + " / " + g.Name
		g.Traversal = parent.Traversal
	}
	token, digest, err := tx.sealToken(g.RunnersToken, sealGroupToken)
	if err != nil {
		return err
	}
	if g.RepositoryStorage == "" {
		g.RepositoryStorage = "default"
	}
	id, err := tx.insert(ctx, `INSERT INTO namespaces (name, path, kind, parent_id, full_path, full_name, traversal, visibility,
		avatar, description, settings, runners_token, runners_token_digest, created_at, updated_at, repository_storage)
		VALUES (?, ?, 'group', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.Name, g.Path, zeroNull(g.ParentID), g.FullPath, g.FullName, "pending", string(g.Visibility), emptyNull(g.Avatar),
		g.Description, toJSON(g.Settings), token, digest, micros(g.CreatedAt), micros(g.UpdatedAt), g.RepositoryStorage)
	if err != nil {
		return err
	}
	g.ID, g.Version = id, 1
	g.Traversal += fmt.Sprintf("%d/", id)
	_, err = tx.exec(ctx, "UPDATE namespaces SET traversal = ? WHERE id = ?", g.Traversal, id)
	return err
}

// UpdateGroup writes g's own columns if nobody changed it since it was read
// (not the registration token: SetGroupRunnersToken replaces it).
// A changed name, path or parent is carried to every descendant's full
// path, full name and traversal.
func (tx *Tx) UpdateGroup(ctx context.Context, g *model.Group) error {
	old, err := tx.GroupByID(ctx, g.ID)
	if err != nil {
		return err
	}
	g.FullPath, g.FullName, g.Traversal = g.Path, g.Name, fmt.Sprintf("%d/", g.ID)
	if g.ParentID != 0 {
		parent, err := tx.NamespaceByID(ctx, g.ParentID)
		if err != nil {
			return err
		}
		g.FullPath = parent.FullPath + "/" + g.Path
		g.FullName = parent.FullName + " / " + g.Name
		g.Traversal = parent.Traversal + g.Traversal
	}
	n, err := tx.execN(ctx, `UPDATE namespaces SET name = ?, path = ?, parent_id = ?, full_path = ?, full_name = ?, traversal = ?,
		visibility = ?, avatar = ?, description = ?, settings = ?, marked_for_deletion_on = ?, updated_at = ?,
		version = version + 1 WHERE id = ? AND version = ?`,
		g.Name, g.Path, zeroNull(g.ParentID), g.FullPath, g.FullName, g.Traversal, string(g.Visibility), emptyNull(g.Avatar),
		g.Description, toJSON(g.Settings), emptyNull(g.MarkedForDeletionOn), micros(g.UpdatedAt), g.ID, g.Version)
	if err != nil {
		return err
	}
	if n == 0 {
		return model.Conflict("409 Conflict: Resource lock")
	}
	g.Version++
	if old.FullPath == g.FullPath && old.FullName == g.FullName && old.Traversal == g.Traversal {
		return nil
	}
	_, err = tx.exec(ctx, `UPDATE namespaces SET
		full_path = ? || substr(full_path, ?), full_name = ? || substr(full_name, ?), traversal = ? || substr(traversal, ?)
		WHERE traversal LIKE ? ESCAPE '\' AND id <> ?`,
		g.FullPath, utf8.RuneCountInString(old.FullPath)+1, g.FullName, utf8.RuneCountInString(old.FullName)+1,
		g.Traversal, len(old.Traversal)+1,
		escapeLike(old.Traversal)+"%", g.ID)
	return err
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DeleteNamespaceTree removes a group, its descendants and their
// memberships (projects must be gone first).
func (tx *Tx) DeleteNamespaceTree(ctx context.Context, traversal string) error {
	like := escapeLike(traversal) + "%"
	if err := tx.deleteContainerMoves(ctx, model.ContainerGroup, `IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\')`, like); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM members WHERE source_type = 'Namespace' AND source_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\')`,
		`DELETE FROM custom_attributes WHERE source_type = 'Group' AND source_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\')`,
		`DELETE FROM namespaces WHERE traversal LIKE ? ESCAPE '\'`,
	} {
		if _, err := tx.exec(ctx, q, like); err != nil {
			return err
		}
	}
	return nil
}

// NamespaceByID returns a user or group namespace.
func (tx *Tx) NamespaceByID(ctx context.Context, id int64) (model.Namespace, error) {
	var n model.Namespace
	err := tx.row(ctx, namespaceDest(&n), "SELECT "+namespaceColumns+" FROM namespaces n WHERE n.id = ?", id)
	return n, err
}

// NamespaceByFullPath finds a namespace by full path, ignoring case.
func (tx *Tx) NamespaceByFullPath(ctx context.Context, fullPath string) (model.Namespace, error) {
	var n model.Namespace
	err := tx.row(ctx, namespaceDest(&n), "SELECT "+namespaceColumns+" FROM namespaces n WHERE lower(n.full_path) = ?", strings.ToLower(fullPath))
	return n, err
}

// NamespaceByRef finds a namespace by id or full path.
func (tx *Tx) NamespaceByRef(ctx context.Context, ref string) (model.Namespace, error) {
	return byRef(ctx, ref, tx.NamespaceByID, tx.NamespaceByFullPath)
}

// NamespacesByIDs loads several namespaces.
func (tx *Tx) NamespacesByIDs(ctx context.Context, ids []int64) (map[int64]model.Namespace, error) {
	out := map[int64]model.Namespace{}
	if len(ids) == 0 {
		return out, nil
	}
	err := tx.each(ctx, "SELECT "+namespaceColumns+" FROM namespaces n WHERE n.id IN ("+placeholders(len(ids))+")", int64Args(ids),
		func(r *sql.Rows) error {
			var n model.Namespace
			err := r.Scan(namespaceDest(&n)...)
			out[n.ID] = n
			return err
		})
	return out, err
}

func int64Args(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// GroupByID returns one group or model.ErrNotFound.
func (tx *Tx) GroupByID(ctx context.Context, id int64) (model.Group, error) {
	var g model.Group
	err := tx.row(ctx, tx.groupDest(&g), "SELECT "+groupColumns+" FROM namespaces n WHERE n.id = ? AND n.kind = 'group'", id)
	return g, err
}

// GroupByFullPath finds a group by full path, ignoring case.
func (tx *Tx) GroupByFullPath(ctx context.Context, fullPath string) (model.Group, error) {
	var g model.Group
	err := tx.row(ctx, tx.groupDest(&g), "SELECT "+groupColumns+" FROM namespaces n WHERE lower(n.full_path) = ? AND n.kind = 'group'", strings.ToLower(fullPath))
	return g, err
}

// GroupByRef finds a group by id ("12") or full path ("parent/child"), as
// the API's :id names groups.
func (tx *Tx) GroupByRef(ctx context.Context, ref string) (model.Group, error) {
	return byRef(ctx, ref, tx.GroupByID, tx.GroupByFullPath)
}

// SiblingPathTaken reports whether a namespace or project under parent
// (0: top level) other than exceptNamespace uses path.
func (tx *Tx) SiblingPathTaken(ctx context.Context, parent int64, path string, exceptNamespace int64) (bool, error) {
	var n int
	var err error
	if parent == 0 {
		err = tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM namespaces WHERE parent_id IS NULL AND lower(path) = ? AND id <> ?", strings.ToLower(path), exceptNamespace)
	} else {
		err = tx.row(ctx, []any{&n}, `SELECT (SELECT COUNT(*) FROM namespaces WHERE parent_id = ? AND lower(path) = ? AND id <> ?)
			+ (SELECT COUNT(*) FROM projects WHERE namespace_id = ? AND lower(path) = ?)`, parent, strings.ToLower(path), exceptNamespace, parent, strings.ToLower(path))
	}
	return n > 0, err
}

// SiblingNameTaken reports whether another group under parent has name.
func (tx *Tx) SiblingNameTaken(ctx context.Context, parent int64, name string, exceptNamespace int64) (bool, error) {
	var n int
	var err error
	if parent == 0 {
		err = tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM namespaces WHERE parent_id IS NULL AND kind = 'group' AND lower(name) = ? AND id <> ?", strings.ToLower(name), exceptNamespace)
	} else {
		err = tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM namespaces WHERE parent_id = ? AND lower(name) = ? AND id <> ?", parent, strings.ToLower(name), exceptNamespace)
	}
	return n > 0, err
}

// MaxVisibilityInTree returns the most visible subgroup or project below
// a group (for the rule that a group may not be less visible than its
// contents).
func (tx *Tx) MaxVisibilityInTree(ctx context.Context, traversal string, groupID int64) (model.Visibility, error) {
	like := escapeLike(traversal) + "%"
	best := model.Private
	err := tx.each(ctx, `SELECT visibility FROM namespaces WHERE traversal LIKE ? ESCAPE '\' AND id <> ?
		UNION SELECT p.visibility FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE n.traversal LIKE ? ESCAPE '\'`,
		[]any{like, groupID, like}, func(r *sql.Rows) error {
			var v model.Visibility
			if err := r.Scan(&v); err != nil {
				return err
			}
			if model.VisibilityRank(v) > model.VisibilityRank(best) {
				best = v
			}
			return nil
		})
	return best, err
}

// GroupFilter selects groups for a group list.
type GroupFilter struct {
	Viewer   Viewer
	ParentID *int64 // direct children of this group
	// DescendantsOf lists every group below a traversal prefix.
	DescendantsOf    string
	AllAvailable     bool // include groups visible but not joined
	SkipGroups       []int64
	Search           string
	SearchPathsOnly  bool
	Owned            bool
	MinAccessLevel   int
	TopLevelOnly     bool
	CustomAttributes map[string]string
	OrderBy          string // name, path, id, similarity
	Desc             bool
}

// Viewer is who a list is for: visibility and membership conditions.
type Viewer struct {
	UserID   int64
	Admin    bool
	External bool
	Today    string // YYYY-MM-DD, for membership expiry
}

// visibleGroupCond limits namespaces n to those the viewer may see.
func (w *where) visibleGroupCond(v Viewer) {
	switch {
	case v.Admin:
	case v.UserID == 0:
		w.add("n.visibility = 'public'")
	default:
		vis := "n.visibility = 'public'"
		if !v.External {
			vis = "n.visibility IN ('public', 'internal')"
		}
		w.add("("+vis+" OR n.id IN (SELECT a.namespace_id FROM namespace_authorizations a WHERE a.user_id = ? AND (a.expires_at IS NULL OR a.expires_at > ?)))", v.UserID, v.Today)
	}
}

// memberCond limits to namespaces where the viewer's access is at least min
// (0: any membership).
func (w *where) namespaceAccessCond(v Viewer, minLevel int) {
	if minLevel < 1 {
		minLevel = 1
	}
	w.add("n.id IN (SELECT a.namespace_id FROM namespace_authorizations a WHERE a.user_id = ? AND a.access_level >= ? AND (a.expires_at IS NULL OR a.expires_at > ?))",
		v.UserID, minLevel, v.Today)
}

// ListGroups returns one page of groups.
func (tx *Tx) ListGroups(ctx context.Context, f GroupFilter, page model.Page) ([]model.Group, model.PageInfo, error) {
	var w where
	w.add("n.kind = 'group'")
	w.visibleGroupCond(f.Viewer)
	if f.ParentID != nil {
		w.add("n.parent_id = ?", *f.ParentID)
	}
	if f.DescendantsOf != "" {
		w.add(`n.traversal LIKE ? ESCAPE '\'`, escapeLike(f.DescendantsOf)+"_%")
	}
	if f.TopLevelOnly {
		w.add("n.parent_id IS NULL")
	}
	if len(f.SkipGroups) > 0 {
		w.add("n.id NOT IN ("+placeholders(len(f.SkipGroups))+")", int64Args(f.SkipGroups)...)
	}
	if f.Search != "" {
		pat := likePattern(f.Search)
		if f.SearchPathsOnly {
			w.add("("+tx.ilike("n.name")+" OR "+tx.ilike("n.path")+")", pat, pat)
		} else {
			w.add("("+tx.ilike("n.name")+" OR "+tx.ilike("n.full_path")+")", pat, pat)
		}
	}
	switch {
	case f.Owned:
		w.namespaceAccessCond(f.Viewer, int(model.Owner))
	case f.MinAccessLevel > 0:
		w.namespaceAccessCond(f.Viewer, f.MinAccessLevel)
	case !f.AllAvailable && f.Viewer.UserID != 0 && f.ParentID == nil && f.DescendantsOf == "":
		w.namespaceAccessCond(f.Viewer, 1)
	}
	w.customAttrsCond(AttrsGroup, "n.id", f.CustomAttributes)
	col := map[string]string{"name": "n.name", "path": "n.path", "id": "n.id"}[f.OrderBy]
	if f.OrderBy == "similarity" {
		col = "n.name"
	}
	if col == "" {
		col = "n.name"
	}
	ord := order{column: col, desc: f.Desc}
	if f.OrderBy == "similarity" && f.Search != "" {
		ord.rank, ord.rankArgs = similarity(f.Search, "n.name", "n.path")
		ord.desc = false
	}
	spec := listSpec[model.Group]{columns: groupColumns, from: "namespaces n", idCol: "n.id", where: w,
		order: ord, scan: tx.scanGroup, keyNotNull: true,
		keyOf: func(g model.Group) (any, int64) {
			switch col {
			case "n.path":
				return g.Path, g.ID
			case "n.id":
				return nil, g.ID
			}
			return g.Name, g.ID
		}}
	return list(ctx, tx, spec, page)
}

// NamespaceFilter selects namespaces for GET /namespaces.
type NamespaceFilter struct {
	Viewer         Viewer
	Search         string
	FullPathSearch bool
	OwnedOnly      bool
	TopLevelOnly   bool
}

// ListNamespaces returns the namespaces a user belongs to (all of them
// for an administrator).
func (tx *Tx) ListNamespaces(ctx context.Context, f NamespaceFilter, page model.Page) ([]model.Namespace, model.PageInfo, error) {
	var w where
	if !f.Viewer.Admin || f.OwnedOnly {
		min := 1
		if f.OwnedOnly {
			min = int(model.Owner)
		}
		w.namespaceAccessCond(f.Viewer, min)
	}
	if f.TopLevelOnly {
		w.add("n.parent_id IS NULL")
	}
	if f.Search != "" {
		if f.FullPathSearch {
			w.add(tx.ilike("n.full_path"), likePattern(f.Search))
		} else {
			pat := likePattern(f.Search)
			w.add("("+tx.ilike("n.name")+" OR "+tx.ilike("n.path")+")", pat, pat)
		}
	}
	spec := listSpec[model.Namespace]{columns: namespaceColumns, from: "namespaces n", idCol: "n.id", where: w,
		order: order{}, scan: func(r *sql.Rows) (model.Namespace, error) {
			var n model.Namespace
			err := r.Scan(namespaceDest(&n)...)
			return n, err
		}, keyOf: func(n model.Namespace) (any, int64) { return nil, n.ID }}
	return list(ctx, tx, spec, page)
}

// NamespaceAccess is the viewer's highest unexpired access to a namespace
// (0: can see it through its contents, -1: none).
func (tx *Tx) NamespaceAccess(ctx context.Context, userID, namespaceID int64, today string) (model.AccessLevel, error) {
	var lvl sql.NullInt64
	err := tx.row(ctx, []any{&lvl}, `SELECT MAX(access_level) FROM namespace_authorizations
		WHERE user_id = ? AND namespace_id = ? AND (expires_at IS NULL OR expires_at > ?)`, userID, namespaceID, today)
	if err != nil || !lvl.Valid {
		return -1, err
	}
	return model.AccessLevel(lvl.Int64), nil
}

// DirectMemberLevel is a user's own membership level in a source (0: none).
func (tx *Tx) DirectMemberLevel(ctx context.Context, sourceType string, sourceID, userID int64, today string) (model.AccessLevel, error) {
	var lvl sql.NullInt64
	err := tx.row(ctx, []any{&lvl}, `SELECT MAX(access_level) FROM members WHERE source_type = ? AND source_id = ? AND user_id = ?
		AND pending = FALSE AND (expires_at IS NULL OR expires_at > ?)`, sourceType, sourceID, userID, today)
	return model.AccessLevel(lvl.Int64), err
}
