package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"quarry/internal/model"
)

// Where collects the conditions of a list query.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// countRow is name, the maintained count (row_counts) of the rows of
// exactly the one condition only (no condition: ""), when w is that, else "".
func (w *where) countRow(only, name string) string {
	if len(w.args) > 0 || len(w.conds) > 1 || (only == "") != (len(w.conds) == 0) || (only != "" && w.conds[0] != only) {
		return ""
	}
	return name
}

// reads reports whether a condition mentions prefix (a table alias and its
// dot: "n.").
func (w *where) reads(prefix string) bool {
	for _, c := range w.conds {
		if strings.Contains(c, prefix) {
			return true
		}
	}
	return false
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// order is a list ordering: a column (which may be the id) and the id as
// tie-breaker, both in the same direction, as GitLab orders lists.
type order struct {
	column string // SQL expression of the sort key; "" to sort by id alone
	desc   bool
	// rank, when set, orders before the column (best first): a relevance
	// expression with its arguments, for offset pages only.
	rank     string
	rankArgs []any
}

func (o order) sql(idCol string) string {
	dir := " ASC"
	if o.desc {
		dir = " DESC"
	}
	if o.rank != "" {
		return " ORDER BY " + o.rank + ", " + o.column + dir + ", " + idCol + dir
	}
	if o.column == "" || o.column == idCol {
		return " ORDER BY " + idCol + dir
	}
	return " ORDER BY " + o.column + dir + ", " + idCol + dir
}

// cursor is the decoded position of a keyset page: the sort key and the id
// of the last record returned.
type cursor struct {
	Key any   `json:"k,omitempty"`
	ID  int64 `json:"id"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, model.Param("cursor is invalid")
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&c); err != nil || c.ID == 0 {
		return c, model.Param("cursor is invalid")
	}
	switch k := c.Key.(type) {
	case json.Number:
		v, err := k.Int64()
		if err != nil {
			return c, model.Param("cursor is invalid")
		}
		c.Key = v
	case string, nil:
	default:
		// Sort keys are numbers and strings; anything else is no cursor
		// Quarry made.
		return c, model.Param("cursor is invalid")
	}
	return c, nil
}

// keysetCond adds the condition that continues after c in order o.
func (w *where) keysetCond(o order, idCol string, c cursor) {
	op := ">"
	if o.desc {
		op = "<"
	}
	if o.column == "" || o.column == idCol {
		w.add(idCol+" "+op+" ?", c.ID)
		return
	}
	// A row-value comparison is one range scan of the (column, id) index
	// on both engines.
	w.add(fmt.Sprintf("(%s, %s) %s (?, ?)", o.column, idCol, op), c.Key, c.ID)
}

// listSpec is everything a paged list query needs.
type listSpec[T any] struct {
	columns string // select list
	from    string // FROM clause incl. joins
	idCol   string
	where   where
	order   order
	scan    func(*sql.Rows) (T, error)
	// keyOf gives a record's sort key (for the ordering column) and id.
	keyOf func(T) (key any, id int64)
	// countFrom, when set, is the FROM clause of the count and of the
	// offset page's start: the table without the joins the conditions do
	// not need, so that both read an index only.
	countFrom string
	// keyNotNull says the ordering column is never NULL, so an offset page
	// may start from a key read behind the scenes (a NULL key would fall
	// out of the row-value comparison). Ordering by the id alone needs
	// no such promise.
	keyNotNull bool
	// columnArgs are the arguments of columns (subqueries in the select
	// list), before the conditions' own.
	columnArgs []any
	// scanCounted, when set, replaces scan: an offset page then reads its
	// count in the same statement (a last column, scanned into n), and
	// the page's limits are written into the statement, so that a list
	// whose conditions take no arguments is one statement planned once per
	// connection on PostgreSQL (a LIMIT parameter keeps it planned anew
	// for every execution). n is nil for a keyset page: no count column.
	scanCounted func(r *sql.Rows, n *int) (T, error)
	// countRow, when set, names the maintained count (row_counts, kept by
	// triggers) of exactly the rows where selects: read instead of
	// counting.
	countRow string
}

// count is the statement counting s's rows up to model.CountLimit+1, the
// limit written into it when literal, else its last argument.
func (s *listSpec[T]) count(literal bool) string {
	if s.countRow != "" {
		return "SELECT n FROM row_counts WHERE name = '" + s.countRow + "'"
	}
	limit := "?"
	if literal {
		limit = strconv.Itoa(model.CountLimit + 1)
	}
	return "SELECT COUNT(*) FROM (SELECT 1 FROM " + s.counted() + s.where.sql() + " LIMIT " + limit + ") AS counted"
}

// seekable reports whether an offset page of s can be read as a keyset
// page: resolve the row before it (an index-only query), then a range
// read of the page, never an OFFSET over full rows.
func (s *listSpec[T]) seekable() bool {
	if s.order.rank != "" {
		return false
	}
	return s.order.column == "" || s.order.column == s.idCol || s.keyNotNull
}

func (s *listSpec[T]) counted() string {
	if s.countFrom != "" {
		return s.countFrom
	}
	return s.from
}

// list runs a paged query: offset pages count up to model.CountLimit
// records; keyset pages continue from the cursor with an indexed range
// condition, never an OFFSET.
func list[T any](ctx context.Context, tx *Tx, s listSpec[T], page model.Page) ([]T, model.PageInfo, error) {
	var info model.PageInfo
	w := s.where
	if page.Keyset && page.Cursor != "" {
		c, err := decodeCursor(page.Cursor)
		if err != nil {
			return nil, info, err
		}
		w.keysetCond(s.order, s.idCol, c)
	}
	offset := 0
	if !page.Keyset {
		offset = page.Offset()
	}
	items := make([]T, 0, page.PerPage)
	past := false // an offset page past the last row
	if offset > 0 && s.seekable() {
		// The page continues after the last row of the page before it,
		// read from the index alone.
		c, ok, err := listStart(ctx, tx, &s, offset)
		if err != nil {
			return nil, info, err
		}
		if ok {
			w.keysetCond(s.order, s.idCol, c)
		}
		past = !ok
		offset = 0
	}
	counted, inlineCount := 0, s.scanCounted != nil && !page.Keyset
	if !past {
		cols, args := s.columns, append([]any{}, s.columnArgs...)
		limit := " LIMIT ?"
		if s.scanCounted != nil {
			limit = " LIMIT " + strconv.Itoa(page.PerPage+1)
		}
		if inlineCount {
			cols += ", (" + s.count(true) + ")"
			if s.countRow == "" {
				args = append(args, s.where.args...)
			}
		}
		q := "SELECT " + cols + " FROM " + s.from + w.sql() + s.order.sql(s.idCol) + limit
		args = append(append(args, w.args...), s.order.rankArgs...)
		if s.scanCounted == nil {
			args = append(args, page.PerPage+1)
		}
		if offset > 0 {
			q += " OFFSET ?"
			args = append(args, offset)
		}
		err := tx.each(ctx, q, args, func(r *sql.Rows) error {
			var v T
			var err error
			switch {
			case inlineCount:
				v, err = s.scanCounted(r, &counted)
			case s.scanCounted != nil:
				v, err = s.scanCounted(r, nil)
			default:
				v, err = s.scan(r)
			}
			if err == nil {
				items = append(items, v)
			}
			return err
		})
		if err != nil {
			return nil, info, err
		}
	}
	if len(items) > page.PerPage {
		items = items[:page.PerPage]
		info.HasMore = true
	}
	if page.Keyset {
		if info.HasMore {
			key, id := s.keyOf(items[len(items)-1])
			c := cursor{ID: id}
			if s.order.column != "" && s.order.column != s.idCol {
				c.Key = key
			}
			info.NextCursor = encodeCursor(c)
		}
		return items, info, nil
	}
	// A page that ends the list tells the total without counting.
	if !info.HasMore && (len(items) > 0 || page.Offset() == 0) {
		if n := page.Offset() + len(items); n <= model.CountLimit {
			info.Total, info.TotalKnown = n, true
		}
		return items, info, nil
	}
	// Count only as far as the limit, so a huge table costs no more than
	// CountLimit index entries.
	n := counted
	if !inlineCount || len(items) == 0 {
		var args []any
		if s.countRow == "" {
			args = append(append(args, s.where.args...), model.CountLimit+1)
		}
		if err := tx.row(ctx, []any{&n}, s.count(false), args...); err != nil {
			return nil, info, err
		}
	}
	if n <= model.CountLimit {
		info.Total, info.TotalKnown = n, true
	}
	return items, info, nil
}

// listStart reads the sort key and id of the row just before an offset
// page (at offset-1) from s's count table: ok false when the list is
// shorter than that.
func listStart[T any](ctx context.Context, tx *Tx, s *listSpec[T], offset int) (cursor, bool, error) {
	var c cursor
	cols := s.idCol
	byID := s.order.column == "" || s.order.column == s.idCol
	if !byID {
		cols = s.order.column + ", " + s.idCol
	}
	q := "SELECT " + cols + " FROM " + s.counted() + s.where.sql() + s.order.sql(s.idCol) + " LIMIT 1 OFFSET ?"
	args := append(append([]any{}, s.where.args...), offset-1)
	var cacheKey string
	var gen uint64
	now := tx.clock.now()
	if tx.starts != nil {
		cacheKey = startKey(q, args)
		if e, _, ok := tx.starts.Get(cacheKey, now); ok {
			return e.c, e.ok, nil
		}
		gen = tx.starts.Generation()
	}
	var key any
	dest := []any{&c.ID}
	if !byID {
		dest = []any{&key, &c.ID}
	}
	err := tx.row(ctx, dest, q, args...)
	if errors.Is(err, model.ErrNotFound) {
		tx.starts.Put(cacheKey, listStartEntry{}, gen, now)
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	if b, ok := key.([]byte); ok {
		key = string(b)
	}
	c.Key = key
	tx.starts.Put(cacheKey, listStartEntry{c: c, ok: true}, gen, now)
	return c, true, nil
}

// listStartEntry is where an offset page starts (listStart): the row
// before it, or none (ok false: the list is shorter).
type listStartEntry struct {
	c  cursor
	ok bool
}

// The starts of offset pages are remembered on SQLite, where this
// process is the database's one server, until it commits any write
// (OnCommit), and for startsFor at most (a write by another command on
// the same file): a deep page's start costs an index scan as long as its
// offset, and readers paging through a list ask for the same starts.
const (
	startsFor = time.Second
	maxStarts = 10000
)

// startKey names a start by its statement and arguments.
func startKey(q string, args []any) string {
	var b strings.Builder
	b.WriteString(q)
	for _, a := range args {
		b.WriteByte(0)
		switch v := a.(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		default:
			fmt.Fprintf(&b, "%T:%#v", v, v)
		}
	}
	return b.String()
}

// labelCond is the condition that a JSON array of label names in col
// holds the name labelArg gives: the name's JSON string found inside the
// array, matched exactly (case and all) on both engines, as GitLab
// matches label titles.
func (tx *Tx) labelCond(col string) string {
	if tx.dialect == Postgres {
		return "strpos(" + col + ", ?) > 0"
	}
	return "instr(" + col + ", ?) > 0"
}

// labelArg is labelCond's argument for the label name.
func labelArg(name string) string {
	b, _ := json.Marshal(name)
	return string(b)
}

// likePattern makes a substring pattern for ilike.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// ilike is a case-insensitive match of col against a likePattern: SQLite's
// LIKE already ignores case, PostgreSQL needs ILIKE.
func (tx *Tx) ilike(col string) string {
	if tx.dialect == Postgres {
		return col + ` ILIKE ? ESCAPE '\'`
	}
	return col + ` LIKE ? ESCAPE '\'`
}

// similarity ranks rows by how well cols match term: an exact match first,
// then a prefix, then the rest.
func similarity(term string, cols ...string) (string, []any) {
	t := strings.ToLower(term)
	prefix := escapeLike(t) + "%"
	var exact, pre []string
	var args []any
	for _, c := range cols {
		exact = append(exact, "lower("+c+") = ?")
		args = append(args, t)
	}
	for _, c := range cols {
		pre = append(pre, "lower("+c+") LIKE ? ESCAPE '\\'")
		args = append(args, prefix)
	}
	return "CASE WHEN " + strings.Join(exact, " OR ") + " THEN 0 WHEN " + strings.Join(pre, " OR ") + " THEN 1 ELSE 2 END", args
}
