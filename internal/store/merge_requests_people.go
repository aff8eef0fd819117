package store

import (
	"context"
	"database/sql"
	"slices"
	"sort"

	"quarry/internal/model"
)

// MergeRequestWithPeople is MergeRequest with what a user's summary shows
// (UserBasicsByIDs) of everyone the merge request names: author, merger,
// closer, assignees and reviewers, read with the assignees and reviewers
// (two statements in all).
func (tx *Tx) MergeRequestWithPeople(ctx context.Context, projectID, iid int64) (model.MergeRequest, map[int64]model.User, error) {
	var m model.MergeRequest
	if err := tx.row(ctx, mrDest(&m), "SELECT "+mrColumns+" FROM merge_requests WHERE target_project_id = ? AND iid = ?", projectID, iid); err != nil {
		return m, nil, err
	}
	users, err := tx.loadMRPeopleAndUsers(ctx, []*model.MergeRequest{&m})
	return m, users, err
}

// MergeRequestsWithPeople is MergeRequests with the people of the page
// (as MergeRequestWithPeople): one statement for them, whatever the page
// size.
func (tx *Tx) MergeRequestsWithPeople(ctx context.Context, f MergeRequestFilter, page model.Page) ([]model.MergeRequest, map[int64]model.User, model.PageInfo, error) {
	type mrPage struct {
		list  []model.MergeRequest
		users map[int64]model.User
		info  model.PageInfo
	}
	// A page is remembered (pages.go): each reader gets its own slice of
	// the merge requests; their labels, people and the users are shared,
	// read only.
	w, ord := tx.mrList(f)
	p, err := rememberedPage(ctx, tx, pageKey("merge requests", w, ord, page), func(ctx context.Context) (mrPage, error) {
		list, info, err := tx.mergeRequestsWhere(ctx, w, ord, page)
		if err != nil {
			return mrPage{info: info}, err
		}
		ptrs := make([]*model.MergeRequest, len(list))
		for i := range list {
			ptrs[i] = &list[i]
		}
		users, err := tx.loadMRPeopleAndUsers(ctx, ptrs)
		return mrPage{list, users, info}, err
	}, func(p mrPage) int {
		n := 0
		for i := range p.list {
			m := &p.list[i]
			n += 600 + len(m.Title) + len(m.Description) + len(m.MergeError) + 16*(len(m.Labels)+len(m.AssigneeIDs)+len(m.ReviewerIDs))
			for _, l := range m.Labels {
				n += len(l)
			}
		}
		return n + 200*len(p.users)
	})
	if err != nil {
		return nil, nil, p.info, err
	}
	return slices.Clone(p.list), p.users, p.info, nil
}

// loadMRPeopleAndUsers fills the assignees and reviewers of merge
// requests as loadMRPeople does and returns the summaries of every user
// they name, in one statement: the assignees and reviewers (ids only),
// then each user they name once (the authors, mergers and closers too).
func (tx *Tx) loadMRPeopleAndUsers(ctx context.Context, list []*model.MergeRequest) (map[int64]model.User, error) {
	users := map[int64]model.User{}
	if len(list) == 0 {
		return users, nil
	}
	byID := make(map[int64]*model.MergeRequest, len(list))
	ids := make([]int64, 0, len(list))
	var named []int64
	seen := map[int64]bool{0: true}
	for _, m := range list {
		byID[m.ID] = m
		ids = append(ids, m.ID)
		m.AssigneeIDs, m.ReviewerIDs = nil, nil
		for _, id := range [...]int64{m.AuthorID, m.MergedByID, m.ClosedByID} {
			if !seen[id] {
				seen[id] = true
				named = append(named, id)
			}
		}
	}
	const none = ", NULL, NULL, NULL, NULL FROM "
	in := placeholders(len(ids))
	mrs := int64Args(ids)
	people := "SELECT user_id FROM merge_request_assignees WHERE merge_request_id IN (" + in +
		") UNION SELECT user_id FROM merge_request_reviewers WHERE merge_request_id IN (" + in + ")"
	args := append(append(append(append([]any{}, mrs...), mrs...), mrs...), mrs...)
	if len(named) > 0 {
		people += " UNION SELECT id FROM users WHERE id IN (" + placeholders(len(named)) + ")"
		args = append(args, int64Args(named)...)
	}
	q := "SELECT 0, merge_request_id, position, user_id" + none + "merge_request_assignees WHERE merge_request_id IN (" + in +
		") UNION ALL SELECT 1, merge_request_id, position, user_id" + none + "merge_request_reviewers WHERE merge_request_id IN (" + in +
		") UNION ALL SELECT 2, 0, 0, id, username, name, state, avatar FROM users WHERE id IN (" + people + ")"
	// Ordered here rather than by the statement: a page's few rows, and
	// no sort of the union in the database.
	type placed struct{ kind, pos, uid int64 }
	var seats []placed
	var seatOf []*model.MergeRequest
	err := tx.each(ctx, q, args, func(r *sql.Rows) error {
		var kind, mid, pos, uid int64
		var u model.User
		if err := r.Scan(&kind, &mid, &pos, &uid, nullString{&u.Username}, nullString{&u.Name}, nullString{(*string)(&u.State)},
			nullString{&u.Avatar}); err != nil {
			return err
		}
		switch m := byID[mid]; {
		case kind == 2:
			u.ID = uid
			users[uid] = u
		case m != nil:
			seats = append(seats, placed{kind, pos, uid})
			seatOf = append(seatOf, m)
		}
		return nil
	})
	if err != nil {
		return users, err
	}
	order := make([]int, len(seats))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := seats[order[a]], seats[order[b]]
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		return x.pos < y.pos
	})
	for _, i := range order {
		m := seatOf[i]
		if seats[i].kind == 0 {
			m.AssigneeIDs = append(m.AssigneeIDs, seats[i].uid)
		} else {
			m.ReviewerIDs = append(m.ReviewerIDs, seats[i].uid)
		}
	}
	return users, nil
}
