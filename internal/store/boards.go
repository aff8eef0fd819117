package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

const boardColumns = "b.id, b.project_id, b.group_id, b.name, b.hide_backlog_list, b.hide_closed_list, b.created_at, b.updated_at"

func scanBoard(r *sql.Rows) (model.Board, error) {
	var b model.Board
	return b, r.Scan(boardDest(&b)...)
}

func boardDest(b *model.Board) []any {
	return []any{&b.ID, nullInt64{&b.ProjectID}, nullInt64{&b.GroupID}, &b.Name, &b.HideBacklogList, &b.HideClosedList,
		tsScan{&b.CreatedAt}, tsScan{&b.UpdatedAt}}
}

// BoardOwner is a board's project or group (one of them).
type BoardOwner struct{ ProjectID, GroupID int64 }

func (o BoardOwner) where(w *where) {
	if o.ProjectID != 0 {
		w.add("b.project_id = ?", o.ProjectID)
	} else {
		w.add("b.group_id = ?", o.GroupID)
	}
}

// CreateBoard stores a board with its backlog and closed lists and sets
// its id and times.
func (tx *Tx) CreateBoard(ctx context.Context, b *model.Board) error {
	now := micros(tx.Now())
	id, err := tx.insert(ctx, `INSERT INTO boards (project_id, group_id, name, hide_backlog_list, hide_closed_list, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, zeroNull(b.ProjectID), zeroNull(b.GroupID), b.Name, b.HideBacklogList, b.HideClosedList, now, now)
	if err != nil {
		return err
	}
	for _, t := range []string{model.ListBacklog, model.ListClosed} {
		if _, err := tx.exec(ctx, "INSERT INTO board_lists (board_id, list_type, created_at, updated_at) VALUES (?, ?, ?, ?)",
			id, t, now, now); err != nil {
			return err
		}
	}
	b.ID, b.CreatedAt, b.UpdatedAt = id, fromMicros(now), fromMicros(now)
	return nil
}

// UpdateBoard writes the attributes that are not nil and reads the board
// back into b; model.ErrNotFound when it is gone.
func (tx *Tx) UpdateBoard(ctx context.Context, b *model.Board, name *string, hideBacklog, hideClosed *bool) error {
	n, err := tx.execN(ctx, `UPDATE boards SET name = COALESCE(?, name), hide_backlog_list = COALESCE(?, hide_backlog_list),
		hide_closed_list = COALESCE(?, hide_closed_list), updated_at = ? WHERE id = ?`, name, hideBacklog, hideClosed, micros(tx.Now()), b.ID)
	if err == nil && n == 0 {
		return model.ErrNotFound
	}
	if err != nil {
		return err
	}
	return tx.row(ctx, boardDest(b), "SELECT "+boardColumns+" FROM boards b WHERE b.id = ?", b.ID)
}

// DeleteBoard removes a board with its lists; model.ErrNotFound when
// there was none.
func (tx *Tx) DeleteBoard(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "DELETE FROM boards WHERE id = ?", id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// Board returns an owner's board with its label lists;
// model.ErrNotFound when the owner has no such board.
func (tx *Tx) Board(ctx context.Context, o BoardOwner, id int64) (model.Board, error) {
	var w where
	o.where(&w)
	w.add("b.id = ?", id)
	var b model.Board
	if err := tx.row(ctx, boardDest(&b), "SELECT "+boardColumns+" FROM boards b"+w.sql(), w.args...); err != nil {
		return b, err
	}
	err := tx.withLists(ctx, []*model.Board{&b})
	return b, err
}

// Boards lists an owner's boards by id, with their label lists.
func (tx *Tx) Boards(ctx context.Context, o BoardOwner, page model.Page) ([]model.Board, model.PageInfo, error) {
	var w where
	o.where(&w)
	out, info, err := list(ctx, tx, listSpec[model.Board]{
		columns: boardColumns, from: "boards b", idCol: "b.id", where: w,
		scan:  scanBoard,
		keyOf: func(b model.Board) (any, int64) { return b.ID, b.ID },
	}, page)
	if err != nil {
		return nil, info, err
	}
	ptrs := make([]*model.Board, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, info, tx.withLists(ctx, ptrs)
}

// GroupBoards lists a group's boards with ids after afterID, by id, with
// their label lists (and the lists' labels), at most limit boards: what
// a group export carries, a page at a time.
func (tx *Tx) GroupBoards(ctx context.Context, groupID, afterID int64, limit int) ([]model.Board, error) {
	var out []model.Board
	err := tx.each(ctx, "SELECT "+boardColumns+" FROM boards b WHERE b.group_id = ? AND b.id > ? ORDER BY b.id LIMIT ?",
		[]any{groupID, afterID, limit},
		func(r *sql.Rows) error {
			b, err := scanBoard(r)
			out = append(out, b)
			return err
		})
	if err != nil {
		return nil, err
	}
	ptrs := make([]*model.Board, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, tx.withLists(ctx, ptrs)
}

const boardListColumns = "bl.id, bl.board_id, bl.list_type, bl.position, " + labelColumns

// withLists fills the boards' label lists, by position.
func (tx *Tx) withLists(ctx context.Context, boards []*model.Board) error {
	if len(boards) == 0 {
		return nil
	}
	byID := map[int64]*model.Board{}
	args := make([]any, len(boards))
	for i, b := range boards {
		byID[b.ID], args[i] = b, b.ID
		b.Lists = []model.BoardList{}
	}
	return tx.each(ctx, "SELECT "+boardListColumns+` FROM board_lists bl JOIN labels l ON l.id = bl.label_id
		WHERE bl.list_type = 'label' AND bl.board_id IN (`+placeholders(len(boards))+") ORDER BY bl.board_id, bl.position, bl.id",
		args, func(r *sql.Rows) error {
			var bl model.BoardList
			if err := r.Scan(append([]any{&bl.ID, &bl.BoardID, &bl.ListType, &bl.Position}, labelDest(&bl.Label)...)...); err != nil {
				return err
			}
			if b := byID[bl.BoardID]; b != nil {
				b.Lists = append(b.Lists, bl)
			}
			return nil
		})
}

// LockBoard takes a board's row lock for the rest of the transaction
// (its list writers then run one after the other, each seeing the
// positions the previous one left); model.ErrNotFound when it is gone.
func (tx *Tx) LockBoard(ctx context.Context, id int64) error {
	n, err := tx.execN(ctx, "UPDATE boards SET updated_at = ? WHERE id = ?", micros(tx.Now()), id)
	if err == nil && n == 0 {
		err = model.ErrNotFound
	}
	return err
}

// CreateBoardList appends a label list after the board's last one and
// sets its id and position; a label the board already has a list of is
// a *UniqueError (model.ErrConflict). Run under LockBoard.
func (tx *Tx) CreateBoardList(ctx context.Context, l *model.BoardList) error {
	var next int
	if err := tx.row(ctx, []any{&next}, "SELECT COALESCE(MAX(position) + 1, 0) FROM board_lists WHERE board_id = ? AND list_type = 'label'",
		l.BoardID); err != nil {
		return err
	}
	now := micros(tx.Now())
	id, err := tx.insert(ctx, `INSERT INTO board_lists (board_id, list_type, label_id, position, created_at, updated_at)
		VALUES (?, 'label', ?, ?, ?, ?)`, l.BoardID, l.Label.ID, next, now, now)
	if err != nil {
		return err
	}
	l.ID, l.ListType, l.Position = id, model.ListLabel, next
	return nil
}

// CountBoardLabelLists counts a board's label lists (the movable ones).
func (tx *Tx) CountBoardLabelLists(ctx context.Context, boardID int64) (int, error) {
	var n int
	err := tx.row(ctx, []any{&n}, "SELECT COUNT(*) FROM board_lists WHERE board_id = ? AND list_type = 'label'", boardID)
	return n, err
}

// MoveBoardList moves a label list from position from to to, shifting
// the lists between by one. Run under LockBoard.
func (tx *Tx) MoveBoardList(ctx context.Context, boardID, listID int64, from, to int) error {
	q := "UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ? AND position <= ?"
	args := []any{boardID, from, to}
	if to < from {
		q = "UPDATE board_lists SET position = position + 1 WHERE board_id = ? AND list_type = 'label' AND position >= ? AND position < ?"
		args = []any{boardID, to, from}
	}
	if _, err := tx.exec(ctx, q, args...); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "UPDATE board_lists SET position = ?, updated_at = ? WHERE id = ?", to, micros(tx.Now()), listID)
	return err
}

// DeleteBoardList removes a label list and moves the lists after it one
// place up; model.ErrNotFound when it is gone.
func (tx *Tx) DeleteBoardList(ctx context.Context, boardID, listID int64) error {
	var pos int
	if err := tx.row(ctx, []any{&pos}, "SELECT position FROM board_lists WHERE id = ? AND board_id = ? AND list_type = 'label'",
		listID, boardID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "DELETE FROM board_lists WHERE id = ?", listID); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "UPDATE board_lists SET position = position - 1 WHERE board_id = ? AND list_type = 'label' AND position > ?",
		boardID, pos)
	return err
}

// deleteLabelLists removes the board lists of a label, closing the gaps
// they leave (the label's removal path; the foreign key would remove
// them too, but leave holes in the positions).
func (tx *Tx) deleteLabelLists(ctx context.Context, labelID int64) error {
	type at struct {
		board, list int64
	}
	var lists []at
	if err := tx.each(ctx, "SELECT board_id, id FROM board_lists WHERE label_id = ? ORDER BY id", []any{labelID}, func(r *sql.Rows) error {
		var x at
		err := r.Scan(&x.board, &x.list)
		lists = append(lists, x)
		return err
	}); err != nil {
		return err
	}
	for _, x := range lists {
		if err := tx.DeleteBoardList(ctx, x.board, x.list); err != nil {
			return err
		}
	}
	return nil
}

// moveLabelLists points the board lists of label from at label into,
// except on boards that already have a list of into (those are removed):
// what promoting a project label does to its lists.
func (tx *Tx) moveLabelLists(ctx context.Context, from, into int64) error {
	if _, err := tx.exec(ctx, `UPDATE board_lists SET label_id = ? WHERE label_id = ?
		AND board_id NOT IN (SELECT board_id FROM board_lists WHERE label_id = ?)`, into, from, into); err != nil {
		return err
	}
	return tx.deleteLabelLists(ctx, from)
}
