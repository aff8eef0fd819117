package store

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"time"

	"quarry/internal/model"
)

const topicColumns = "t.id, t.name, t.title, t.description, t.avatar, t.total_projects_count, t.created_at"

func topicDest(t *model.Topic) []any {
	return []any{&t.ID, &t.Name, &t.Title, nullString{&t.Description}, nullString{&t.Avatar}, &t.TotalProjectsCount, tsScan{&t.CreatedAt}}
}

func scanTopic(r *sql.Rows) (model.Topic, error) {
	var t model.Topic
	err := r.Scan(topicDest(&t)...)
	return t, err
}

// UniqueTopicName is the case-insensitive unique index on topic names.
const UniqueTopicName = "topics_name_key"

// CreateTopic inserts a topic and sets t.ID.
func (tx *Tx) CreateTopic(ctx context.Context, t *model.Topic) error {
	now := tx.Now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	id, err := tx.insert(ctx, "INSERT INTO topics (name, title, description, avatar, total_projects_count, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)",
		t.Name, t.Title, emptyNull(t.Description), emptyNull(t.Avatar), micros(t.CreatedAt), micros(now))
	t.ID = id
	return err
}

// UpdateTopic writes a topic's name, title, description and avatar.
func (tx *Tx) UpdateTopic(ctx context.Context, t *model.Topic) error {
	_, err := tx.exec(ctx, "UPDATE topics SET name = ?, title = ?, description = ?, avatar = ?, updated_at = ? WHERE id = ?",
		t.Name, t.Title, emptyNull(t.Description), emptyNull(t.Avatar), micros(tx.Now()), t.ID)
	return err
}

// DeleteTopic removes a topic (projects lose it).
func (tx *Tx) DeleteTopic(ctx context.Context, id int64) error {
	if _, err := tx.exec(ctx, "DELETE FROM project_topics WHERE topic_id = ?", id); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "DELETE FROM topics WHERE id = ?", id)
	return err
}

// MergeTopics moves every project of source to target and deletes source.
func (tx *Tx) MergeTopics(ctx context.Context, source, target int64) error {
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO project_topics (project_id, topic_id) SELECT project_id, ? FROM project_topics
			WHERE topic_id = ? AND project_id NOT IN (SELECT project_id FROM project_topics WHERE topic_id = ?)`, []any{target, source, target}},
		{"DELETE FROM project_topics WHERE topic_id = ?", []any{source}},
		{"DELETE FROM topics WHERE id = ?", []any{source}},
		{"UPDATE topics SET total_projects_count = (SELECT COUNT(*) FROM project_topics WHERE topic_id = ?) WHERE id = ?", []any{target, target}},
	} {
		if _, err := tx.exec(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	return nil
}

// TopicByID returns one topic.
func (tx *Tx) TopicByID(ctx context.Context, id int64) (model.Topic, error) {
	var t model.Topic
	err := tx.row(ctx, topicDest(&t), "SELECT "+topicColumns+" FROM topics t WHERE t.id = ?", id)
	return t, err
}

// TopicByName finds a topic by name, ignoring case.
func (tx *Tx) TopicByName(ctx context.Context, name string) (model.Topic, error) {
	var t model.Topic
	err := tx.row(ctx, topicDest(&t), "SELECT "+topicColumns+" FROM topics t WHERE lower(t.name) = ?", strings.ToLower(name))
	return t, err
}

// ListTopics returns topics, most used first.
func (tx *Tx) ListTopics(ctx context.Context, search string, withoutProjects bool, page model.Page) ([]model.Topic, model.PageInfo, error) {
	var w where
	if search != "" {
		pat := likePattern(search)
		w.add("("+tx.ilike("t.name")+" OR "+tx.ilike("t.title")+")", pat, pat)
	}
	if withoutProjects {
		w.add("t.total_projects_count = 0")
	}
	spec := listSpec[model.Topic]{columns: topicColumns, from: "topics t", idCol: "t.id", where: w,
		order: order{column: "t.total_projects_count", desc: true}, scan: scanTopic,
		keyOf: func(t model.Topic) (any, int64) { return int64(t.TotalProjectsCount), t.ID }}
	return list(ctx, tx, spec, page)
}

// SetProjectTopics replaces a project's topics with names (creating topics
// that do not exist yet) and keeps every count true. Counts move by the
// difference, each an increment under the topic's row lock, so writers
// changing one topic's projects at once never lose each other's change.
func (tx *Tx) SetProjectTopics(ctx context.Context, projectID int64, names []string) error {
	old := map[int64]bool{}
	err := tx.each(ctx, "SELECT topic_id FROM project_topics WHERE project_id = ?", []any{projectID}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		old[id] = true
		return err
	})
	if err != nil {
		return err
	}
	// Topics are found or made in one order, whoever writes, so two
	// writers making the same new topics never wait for each other in a
	// circle.
	names = slices.Clone(names)
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	var added []int64
	kept := map[int64]bool{}
	for _, name := range names {
		t, err := tx.topicFor(ctx, name)
		if err != nil {
			return err
		}
		if kept[t.ID] {
			continue // two names of one topic
		}
		kept[t.ID] = true
		if !old[t.ID] {
			added = append(added, t.ID)
		}
	}
	var removed []int64
	for id := range old {
		if !kept[id] {
			removed = append(removed, id)
		}
	}
	for _, change := range []struct {
		ids  []int64
		link string
		by   string
	}{
		{removed, "DELETE FROM project_topics WHERE project_id = ? AND topic_id = ?", "- 1"},
		{added, "INSERT INTO project_topics (project_id, topic_id) VALUES (?, ?)", "+ 1"},
	} {
		for _, id := range change.ids {
			if _, err := tx.exec(ctx, change.link, projectID, id); err != nil {
				return err
			}
		}
		if len(change.ids) > 0 {
			if _, err := tx.exec(ctx, "UPDATE topics SET total_projects_count = total_projects_count "+change.by+" WHERE id IN ("+
				placeholders(len(change.ids))+")", int64Args(change.ids)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// topicFor finds the topic of a name in any case, making it (title = name)
// when there is none. Two writers making one topic at once both get it:
// the insert yields to the other's row rather than failing.
func (tx *Tx) topicFor(ctx context.Context, name string) (model.Topic, error) {
	t, err := tx.TopicByName(ctx, name)
	if err != model.ErrNotFound {
		return t, err
	}
	now := micros(tx.Now())
	if _, err := tx.exec(ctx, "INSERT INTO topics (name, title, total_projects_count, created_at, updated_at) VALUES (?, ?, 0, ?, ?) ON CONFLICT DO NOTHING",
		name, name, now, now); err != nil {
		return t, err
	}
	return tx.TopicByName(ctx, name)
}

// Star records a star; false when the user had starred the project already.
func (tx *Tx) Star(ctx context.Context, userID, projectID int64, at time.Time) (bool, error) {
	var n int
	if err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM stars WHERE user_id = ? AND project_id = ?", userID, projectID); err != nil || n > 0 {
		return false, err
	}
	if _, err := tx.exec(ctx, "INSERT INTO stars (user_id, project_id, created_at) VALUES (?, ?, ?)", userID, projectID, micros(at)); err != nil {
		return false, err
	}
	_, err := tx.exec(ctx, "UPDATE projects SET star_count = star_count + 1 WHERE id = ?", projectID)
	return true, err
}

// Unstar removes a star; false when there was none.
func (tx *Tx) Unstar(ctx context.Context, userID, projectID int64) (bool, error) {
	n, err := tx.execN(ctx, "DELETE FROM stars WHERE user_id = ? AND project_id = ?", userID, projectID)
	if err != nil || n == 0 {
		return false, err
	}
	_, err = tx.exec(ctx, "UPDATE projects SET star_count = star_count - 1 WHERE id = ? AND star_count > 0", projectID)
	return true, err
}

// ListStarrers returns the users who starred a project, newest first.
func (tx *Tx) ListStarrers(ctx context.Context, projectID int64, search string, hidePrivateExcept int64, page model.Page) ([]model.Starrer, model.PageInfo, error) {
	var w where
	w.add("s.project_id = ?", projectID)
	if search != "" {
		pat := likePattern(search)
		w.add("("+tx.ilike("u.name")+" OR "+tx.ilike("u.username")+")", pat, pat)
	}
	if hidePrivateExcept >= 0 {
		w.add("(u.private_profile = FALSE OR u.id = ?)", hidePrivateExcept)
	}
	spec := listSpec[model.Starrer]{columns: userColumns + ", s.created_at", from: "stars s JOIN users u ON u.id = s.user_id", idCol: "u.id",
		where: w, order: order{column: "s.created_at", desc: true},
		scan: func(r *sql.Rows) (model.Starrer, error) {
			var st model.Starrer
			err := r.Scan(append(userDest(&st.User), tsScan{&st.StarredAt})...)
			return st, err
		},
		keyOf: func(s model.Starrer) (any, int64) { return micros(s.StarredAt), s.User.ID }}
	return list(ctx, tx, spec, page)
}

// UniqueGroupLink allows one share per project and group.
const UniqueGroupLink = "project_group_links_key"

// ShareProject shares a project with a group.
func (tx *Tx) ShareProject(ctx context.Context, l model.GroupLink) error {
	_, err := tx.exec(ctx, "INSERT INTO project_group_links (project_id, group_id, group_access, expires_at, created_at) VALUES (?, ?, ?, ?, ?)",
		l.ProjectID, l.GroupID, int(l.GroupAccess), emptyNull(l.ExpiresAt), micros(tx.Now()))
	return err
}

// UnshareProject removes a share; model.ErrNotFound when there was none.
func (tx *Tx) UnshareProject(ctx context.Context, projectID, groupID int64) error {
	n, err := tx.execN(ctx, "DELETE FROM project_group_links WHERE project_id = ? AND group_id = ?", projectID, groupID)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// ProjectLanguages returns a project's languages and their shares
// (percent, two decimals: PostgreSQL's REAL column gives back 9.7 as
// 9.699999809265137, rounded here to what was stored).
func (tx *Tx) ProjectLanguages(ctx context.Context, projectID int64) (map[string]float64, error) {
	out := map[string]float64{}
	err := tx.each(ctx, "SELECT name, share FROM project_languages WHERE project_id = ?", []any{projectID}, func(r *sql.Rows) error {
		var n string
		var v float64
		err := r.Scan(&n, &v)
		out[n] = math.Round(v*100) / 100
		return err
	})
	return out, err
}

// SetProjectLanguages replaces a project's language shares.
func (tx *Tx) SetProjectLanguages(ctx context.Context, projectID int64, langs map[string]float64) error {
	if _, err := tx.exec(ctx, "DELETE FROM project_languages WHERE project_id = ?", projectID); err != nil {
		return err
	}
	for n, v := range langs {
		// Two refreshes of one project may overlap; the later one's
		// figures stand, neither fails.
		if _, err := tx.exec(ctx, `INSERT INTO project_languages (project_id, name, share) VALUES (?, ?, ?)
			ON CONFLICT (project_id, name) DO UPDATE SET share = excluded.share`, projectID, n, v); err != nil {
			return err
		}
	}
	return nil
}
