package model

// Page selects one page of a list: by offset (Number, PerPage) or, when
// Keyset is set, by continuing after Cursor.
type Page struct {
	Number  int // 1-based
	PerPage int
	Keyset  bool
	Cursor  string // opaque; "" for the first keyset page
}

// Offset is the number of records before the page.
func (p Page) Offset() int { return (p.Number - 1) * p.PerPage }

// CountLimit is the number of records above which totals are not reported.
const CountLimit = 10000

// PageInfo describes the page a list call returned.
type PageInfo struct {
	// Total is the number of records, valid when TotalKnown.
	Total      int
	TotalKnown bool
	// HasMore reports a further page.
	HasMore bool
	// NextCursor continues a keyset list; "" at the end.
	NextCursor string
}

// PageOf cuts one offset page out of a list computed whole (git refs,
// aggregates), with its totals.
func PageOf[T any](all []T, pg Page) ([]T, PageInfo) {
	start := min(pg.Offset(), len(all))
	end := min(start+pg.PerPage, len(all))
	return all[start:end], PageInfo{Total: len(all), TotalKnown: true, HasMore: end < len(all)}
}
