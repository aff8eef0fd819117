package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"quarry/internal/model"
)

const labelColumns = "l.id, l.title, l.color, l.description, l.project_id, l.group_id, l.created_at, l.updated_at"

func labelDest(l *model.Label) []any {
	return []any{&l.ID, &l.Title, &l.Color, &l.Description, nullInt64{&l.ProjectID}, nullInt64{&l.GroupID},
		tsScan{&l.CreatedAt}, tsScan{&l.UpdatedAt}}
}

func scanLabel(r *sql.Rows) (model.Label, error) {
	var l model.Label
	return l, r.Scan(labelDest(&l)...)
}

// CreateLabel stores a label and sets its id and times; a title its
// project or group already has is a *UniqueError (model.ErrConflict).
func (tx *Tx) CreateLabel(ctx context.Context, l *model.Label) error {
	now := tx.Now()
	id, err := tx.insert(ctx, `INSERT INTO labels (title, color, description, project_id, group_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, l.Title, l.Color, l.Description, zeroNull(l.ProjectID), zeroNull(l.GroupID), micros(now), micros(now))
	if err != nil {
		return err
	}
	l.ID, l.CreatedAt, l.UpdatedAt = id, fromMicros(micros(now)), fromMicros(micros(now))
	return nil
}

// UpdateLabel writes the attributes of a label that are not nil — the
// others stay as the row has them, so concurrent edits of different
// attributes both land — and reads the row back into l.
// model.ErrNotFound when the label is gone.
func (tx *Tx) UpdateLabel(ctx context.Context, l *model.Label, title, color, description *string) error {
	n, err := tx.execN(ctx, "UPDATE labels SET title = COALESCE(?, title), color = COALESCE(?, color), description = COALESCE(?, description), updated_at = ? WHERE id = ?",
		title, color, description, micros(tx.Now()), l.ID)
	if err == nil && n == 0 {
		return model.ErrNotFound
	}
	if err != nil {
		return err
	}
	return tx.row(ctx, labelDest(l), "SELECT "+labelColumns+" FROM labels l WHERE l.id = ?", l.ID)
}

// DeleteLabel removes a label with its priorities, subscriptions and
// board lists; model.ErrNotFound when there was none.
func (tx *Tx) DeleteLabel(ctx context.Context, id int64) error {
	if err := tx.deleteLabelLists(ctx, id); err != nil {
		return err
	}
	n, err := tx.execN(ctx, "DELETE FROM labels WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// LabelOwners are where labels are looked for: a project's own labels
// and those of groups (by id).
type LabelOwners struct {
	ProjectID int64
	GroupIDs  []int64
	// DescendantsOf, a group's traversal ("1/5/"), adds the labels of the
	// groups strictly under it; DescendantVisibilities, when not empty,
	// keeps only those of the listed visibilities.
	DescendantsOf          string
	DescendantVisibilities []model.Visibility
	// ProjectsOf, a group's id, adds the labels of the projects right in
	// it; with ProjectsUnder (its traversal) those of every project in its
	// tree instead. ProjectVisibilities, when not empty, keeps only the
	// projects of the listed visibilities. Projects being deleted are
	// left out.
	ProjectsOf          int64
	ProjectsUnder       string
	ProjectVisibilities []model.Visibility
}

func (o LabelOwners) where(w *where) {
	var or []string
	var args []any
	if o.ProjectID != 0 {
		or = append(or, "l.project_id = ?")
		args = append(args, o.ProjectID)
	}
	if len(o.GroupIDs) > 0 {
		or = append(or, "l.group_id IN ("+placeholders(len(o.GroupIDs))+")")
		for _, id := range o.GroupIDs {
			args = append(args, id)
		}
	}
	if o.DescendantsOf != "" {
		q := `l.group_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\' AND traversal <> ?`
		args = append(args, escapeLike(o.DescendantsOf)+"%", o.DescendantsOf)
		if len(o.DescendantVisibilities) > 0 {
			q += " AND visibility IN (" + placeholders(len(o.DescendantVisibilities)) + ")"
			for _, v := range o.DescendantVisibilities {
				args = append(args, string(v))
			}
		}
		or = append(or, q+")")
	}
	if o.ProjectsOf != 0 || o.ProjectsUnder != "" {
		q := "l.project_id IN (SELECT p.id FROM projects p WHERE p.pending_delete = FALSE"
		if o.ProjectsUnder != "" {
			q += ` AND p.namespace_id IN (SELECT id FROM namespaces WHERE traversal LIKE ? ESCAPE '\')`
			args = append(args, escapeLike(o.ProjectsUnder)+"%")
		} else {
			q += " AND p.namespace_id = ?"
			args = append(args, o.ProjectsOf)
		}
		if len(o.ProjectVisibilities) > 0 {
			q += " AND p.visibility IN (" + placeholders(len(o.ProjectVisibilities)) + ")"
			for _, v := range o.ProjectVisibilities {
				args = append(args, string(v))
			}
		}
		or = append(or, q+")")
	}
	if len(or) == 0 {
		or = append(or, "1 = 0")
	}
	w.add("("+strings.Join(or, " OR ")+")", args...)
}

// FindLabel finds, among the owners' labels, the one of an id or else
// of a title (GitLab's find_by_id || find_by_title); id 0 looks by title
// only. model.ErrNotFound when there is none. When several owners have
// the title, the project's label wins, then the nearest group (the last
// of GroupIDs).
func (tx *Tx) FindLabel(ctx context.Context, o LabelOwners, id int64, title string) (model.Label, error) {
	if id > 0 {
		var w where
		o.where(&w)
		w.add("l.id = ?", id)
		var l model.Label
		err := tx.row(ctx, labelDest(&l), "SELECT "+labelColumns+" FROM labels l"+w.sql(), w.args...)
		if err == nil || !errors.Is(err, model.ErrNotFound) {
			return l, err
		}
	}
	var w where
	o.where(&w)
	w.add("l.title = ?", title)
	var found []model.Label
	err := tx.each(ctx, "SELECT "+labelColumns+" FROM labels l"+w.sql()+" ORDER BY l.id LIMIT 100", w.args, func(r *sql.Rows) error {
		l, err := scanLabel(r)
		found = append(found, l)
		return err
	})
	if err != nil {
		return model.Label{}, err
	}
	if len(found) == 0 {
		return model.Label{}, model.ErrNotFound
	}
	best, rank := found[0], -1
	for _, l := range found {
		r := 0
		if l.ProjectID != 0 {
			r = len(o.GroupIDs) + 1
		}
		for i, g := range o.GroupIDs {
			if l.GroupID == g {
				r = i + 1
			}
		}
		if r > rank {
			best, rank = l, r
		}
	}
	return best, nil
}

// Labels lists the owners' labels by title (then id); search, when not
// empty, keeps those whose title or description holds it (any case).
func (tx *Tx) Labels(ctx context.Context, o LabelOwners, search string, page model.Page) ([]model.Label, model.PageInfo, error) {
	var w where
	o.where(&w)
	if search != "" {
		p := likePattern(search)
		w.add("("+tx.ilike("l.title")+" OR "+tx.ilike("l.description")+")", p, p)
	}
	return list(ctx, tx, listSpec[model.Label]{
		columns: labelColumns, from: "labels l", idCol: "l.id", where: w, order: order{column: "l.title"},
		scan:  scanLabel,
		keyOf: func(l model.Label) (any, int64) { return l.Title, l.ID },
	}, page)
}

// GroupLabels lists a group's labels with ids after afterID, by id, at
// most limit of them: what a group export carries, a page at a time.
func (tx *Tx) GroupLabels(ctx context.Context, groupID, afterID int64, limit int) ([]model.Label, error) {
	var out []model.Label
	err := tx.each(ctx, "SELECT "+labelColumns+" FROM labels l WHERE l.group_id = ? AND l.id > ? ORDER BY l.id LIMIT ?",
		[]any{groupID, afterID, limit},
		func(r *sql.Rows) error {
			l, err := scanLabel(r)
			out = append(out, l)
			return err
		})
	return out, err
}

// LabelPriorities returns a project's priorities of the given labels, by
// label id (labels without one are absent).
func (tx *Tx) LabelPriorities(ctx context.Context, projectID int64, labelIDs []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if projectID == 0 || len(labelIDs) == 0 {
		return out, nil
	}
	args := []any{projectID}
	for _, id := range labelIDs {
		args = append(args, id)
	}
	err := tx.each(ctx, "SELECT label_id, priority FROM label_priorities WHERE project_id = ? AND label_id IN ("+placeholders(len(labelIDs))+")",
		args, func(r *sql.Rows) error {
			var id int64
			var p int
			err := r.Scan(&id, &p)
			out[id] = p
			return err
		})
	return out, err
}

// SetLabelPriority sets (nil: removes) a project's priority of a label.
func (tx *Tx) SetLabelPriority(ctx context.Context, projectID, labelID int64, priority *int) error {
	if priority == nil {
		_, err := tx.exec(ctx, "DELETE FROM label_priorities WHERE project_id = ? AND label_id = ?", projectID, labelID)
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO label_priorities (project_id, label_id, priority) VALUES (?, ?, ?)
		ON CONFLICT (project_id, label_id) DO UPDATE SET priority = excluded.priority`, projectID, labelID, *priority)
	return err
}

// LabelSubscriptions returns which of the labels a user subscribed to.
func (tx *Tx) LabelSubscriptions(ctx context.Context, userID int64, labelIDs []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if userID == 0 || len(labelIDs) == 0 {
		return out, nil
	}
	args := []any{userID}
	for _, id := range labelIDs {
		args = append(args, id)
	}
	err := tx.each(ctx, "SELECT label_id FROM label_subscriptions WHERE user_id = ? AND label_id IN ("+placeholders(len(labelIDs))+")",
		args, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out[id] = true
			return err
		})
	return out, err
}

// SetLabelSubscription subscribes (on) or unsubscribes a user to a label
// and reports whether that changed anything.
func (tx *Tx) SetLabelSubscription(ctx context.Context, labelID, userID int64, on bool) (bool, error) {
	if on {
		n, err := tx.execN(ctx, "INSERT INTO label_subscriptions (label_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING", labelID, userID)
		return n > 0, err
	}
	n, err := tx.execN(ctx, "DELETE FROM label_subscriptions WHERE label_id = ? AND user_id = ?", labelID, userID)
	return n > 0, err
}

// MergeLabelsInto moves the priorities, subscriptions and board lists of
// labels onto label into (keeping into's own where both have one) and removes them:
// the last step of promoting project labels to a group label.
func (tx *Tx) MergeLabelsInto(ctx context.Context, into int64, labelIDs []int64) error {
	for _, id := range labelIDs {
		for _, q := range []string{
			`INSERT INTO label_priorities (project_id, label_id, priority) SELECT project_id, ?, priority FROM label_priorities
				WHERE label_id = ? ON CONFLICT DO NOTHING`,
			`INSERT INTO label_subscriptions (label_id, user_id) SELECT ?, user_id FROM label_subscriptions
				WHERE label_id = ? ON CONFLICT DO NOTHING`,
		} {
			if _, err := tx.exec(ctx, q, into, id); err != nil {
				return err
			}
		}
		if err := tx.moveLabelLists(ctx, id, into); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM labels WHERE id = ?", id); err != nil {
			return err
		}
	}
	return nil
}

// ProjectLabelsTitled lists the labels of a title of the projects right
// in a namespace (not in its subgroups), at most 1000.
func (tx *Tx) ProjectLabelsTitled(ctx context.Context, namespaceID int64, title string) ([]model.Label, error) {
	var out []model.Label
	err := tx.each(ctx, "SELECT "+labelColumns+` FROM labels l JOIN projects p ON p.id = l.project_id
		WHERE p.namespace_id = ? AND l.title = ? ORDER BY l.id LIMIT 1000`, []any{namespaceID, title},
		func(r *sql.Rows) error {
			l, err := scanLabel(r)
			out = append(out, l)
			return err
		})
	return out, err
}

// OpenMergeRequestsLabelled counts the open merge requests carrying a
// label title, of one project (projectID) or of the projects in a
// namespace tree (traversal), up to model.CountLimit.
func (tx *Tx) OpenMergeRequestsLabelled(ctx context.Context, projectID int64, traversal, title string) (int, error) {
	b, _ := json.Marshal(title)
	var w where
	w.add("m.state = ?", model.MRStateOpened)
	w.add(`m.labels LIKE ? ESCAPE '\'`, likePattern(string(b)))
	if projectID != 0 {
		w.add("m.target_project_id = ?", projectID)
	} else {
		w.add(`m.target_project_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id
			WHERE n.traversal LIKE ? ESCAPE '\')`, escapeLike(traversal)+"%")
	}
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM (SELECT 1 FROM merge_requests m"+w.sql()+" LIMIT ?) AS counted",
		append(w.args, model.CountLimit)...)
	return n, err
}
