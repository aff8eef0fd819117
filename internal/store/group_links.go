package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"quarry/internal/model"
)

// GroupShare is a group shared with another group: the direct members of
// the invited group (SharedWithGroupID) reach the shared group, its
// subgroups and their projects at the lower of their own level and
// GroupAccess, until ExpiresAt (YYYY-MM-DD, "" for never; the share ends
// on that day, as a membership does).
type GroupShare struct {
	ID                int64
	SharedGroupID     int64
	SharedWithGroupID int64
	GroupAccess       model.AccessLevel
	ExpiresAt         string
	CreatedAt         time.Time
	// SharedWith is the invited group (loaded by GroupSharesOf).
	SharedWith model.Namespace
}

// UniqueGroupShare allows one share per shared and invited group.
const UniqueGroupShare = "group_group_links_key"

// sqliteGroupShareColumns is how SQLite names UniqueGroupShare in its
// error (an index on plain columns is reported by its columns).
const sqliteGroupShareColumns = "group_group_links.shared_group_id, group_group_links.shared_with_group_id"

// IsGroupShareTaken reports whether err is a second share of the same two
// groups.
func IsGroupShareTaken(err error) bool {
	return IsUnique(err, UniqueGroupShare) || IsUnique(err, sqliteGroupShareColumns)
}

// CreateGroupShare stores a share and sets l.ID; it does not refresh
// authorizations.
func (tx *Tx) CreateGroupShare(ctx context.Context, l *GroupShare) error {
	now := micros(tx.Now())
	id, err := tx.insert(ctx, `INSERT INTO group_group_links (shared_group_id, shared_with_group_id, group_access, expires_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, l.SharedGroupID, l.SharedWithGroupID, int(l.GroupAccess), emptyNull(l.ExpiresAt), now, now)
	if err != nil {
		return err
	}
	l.ID, l.CreatedAt = id, fromMicros(now)
	return nil
}

// DeleteGroupShare removes a share; model.ErrNotFound when there was none.
// It does not refresh authorizations.
func (tx *Tx) DeleteGroupShare(ctx context.Context, sharedGroupID, sharedWithGroupID int64) error {
	n, err := tx.execN(ctx, "DELETE FROM group_group_links WHERE shared_group_id = ? AND shared_with_group_id = ?", sharedGroupID, sharedWithGroupID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

const groupShareColumns = "l.id, l.shared_group_id, l.shared_with_group_id, l.group_access, l.expires_at, l.created_at, "

func groupShareDest(l *GroupShare) []any {
	return append([]any{&l.ID, &l.SharedGroupID, &l.SharedWithGroupID, &l.GroupAccess, nullString{&l.ExpiresAt}, tsScan{&l.CreatedAt}},
		namespaceDest(&l.SharedWith)...)
}

// GroupShare returns the share of a group with another; model.ErrNotFound
// when there is none.
func (tx *Tx) GroupShare(ctx context.Context, sharedGroupID, sharedWithGroupID int64) (GroupShare, error) {
	var l GroupShare
	err := tx.row(ctx, groupShareDest(&l), "SELECT "+groupShareColumns+namespaceColumns+` FROM group_group_links l
		JOIN namespaces n ON n.id = l.shared_with_group_id WHERE l.shared_group_id = ? AND l.shared_with_group_id = ?`, sharedGroupID, sharedWithGroupID)
	return l, err
}

// GroupSharesOf lists the groups a group is shared with (its own shares,
// not those of its ancestors), oldest first, with the invited groups.
func (tx *Tx) GroupSharesOf(ctx context.Context, sharedGroupID int64) ([]GroupShare, error) {
	out := []GroupShare{}
	err := tx.each(ctx, "SELECT "+groupShareColumns+namespaceColumns+` FROM group_group_links l
		JOIN namespaces n ON n.id = l.shared_with_group_id WHERE l.shared_group_id = ? ORDER BY l.id`, []any{sharedGroupID},
		func(r *sql.Rows) error {
			var l GroupShare
			err := r.Scan(groupShareDest(&l)...)
			out = append(out, l)
			return err
		})
	return out, err
}

// DirectMemberIDs lists the users with a direct membership of a group
// (pending ones included): those a share with that group reaches.
func (tx *Tx) DirectMemberIDs(ctx context.Context, groupID int64) ([]int64, error) {
	var out []int64
	err := tx.each(ctx, "SELECT user_id FROM members WHERE source_type = 'Namespace' AND source_id = ? ORDER BY user_id", []any{groupID},
		func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// MembershipsSharedInto returns the memberships that reach a group, or
// the group of a project, through group shares: the active direct
// memberships of every group that the group or one of its ancestors is
// shared with, each level capped at the share's and the expiry shortened
// to the share's, as GitLab's members/all shows them. Shares that ended
// by today are left out. A project in a personal namespace has none.
func (tx *Tx) MembershipsSharedInto(ctx context.Context, sourceType string, sourceID int64, f MemberFilter, today string) ([]model.Member, error) {
	var traversal string
	q := "SELECT traversal FROM namespaces WHERE id = ? AND kind = 'group'"
	if sourceType == model.SourceProject {
		q = "SELECT n.traversal FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ? AND n.kind = 'group'"
	}
	err := tx.row(ctx, []any{&traversal}, q, sourceID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cols := strings.Replace(memberColumns, "m.access_level,", "CASE WHEN m.access_level < l.group_access THEN m.access_level ELSE l.group_access END,", 1)
	cols = strings.Replace(cols, "m.expires_at,", `CASE WHEN m.expires_at IS NULL THEN l.expires_at WHEN l.expires_at IS NULL THEN m.expires_at
		WHEN m.expires_at < l.expires_at THEN m.expires_at ELSE l.expires_at END,`, 1)
	var w where
	w.add("? LIKE g.traversal || '%'", traversal)
	w.add("(l.expires_at IS NULL OR l.expires_at > ?)", today)
	w.add("m.pending = FALSE AND (m.expires_at IS NULL OR m.expires_at > ?)", today)
	f.apply(tx, &w)
	var out []model.Member
	err = tx.each(ctx, "SELECT "+cols+` FROM group_group_links l JOIN namespaces g ON g.id = l.shared_group_id
		JOIN members m ON m.source_type = 'Namespace' AND m.source_id = l.shared_with_group_id
		JOIN users u ON u.id = m.user_id`+w.sql()+" ORDER BY m.id", w.args, func(r *sql.Rows) error {
		m, err := scanMember(r)
		out = append(out, m)
		return err
	})
	return out, err
}
