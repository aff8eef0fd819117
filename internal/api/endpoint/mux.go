package endpoint

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Mux routes requests to rows on net/http's ServeMux and answers the rest
// as GitLab does: an unknown path 404 {"error":"404 Not Found"}, a known
// path asked with another method 405 {"error":"405 Not Allowed"} with
// Allow.
//
// ServeMux refuses two patterns when each is more specific than the other
// somewhere (POST /projects/user/{user_id} and POST /projects/{id}/star
// both match /projects/user/star). Such rows are declared together as a
// shape, e.g. "POST /projects/{}/{}": the mux holds the shape's one
// pattern and an explicit sub-table of the rows that fit it picks the row
// whose literal segments match — the one with the leftmost literal when
// several do. Rows keep their own paths, auth, scopes and handlers.
type Mux struct {
	mux    *http.ServeMux
	tables map[string]*table // by the shape's mux pattern
	// Fallback, when set, serves the paths outside /api/ that no pattern
	// serves with any method (the web pages); it answers unknown paths
	// itself.
	Fallback http.Handler
}

type table struct {
	prefix string // the shape's path before its segments, "/api/v4"
	rows   []tableRow
	mux    *Mux
}

type tableRow struct {
	segs []string // the row's path segments after the prefix
	h    http.Handler
	rt   Route
}

// NewMux registers rows, and the rows fitting each declared shape through
// that shape's sub-table. A shape no row fits is an error, as is a row
// ServeMux refuses.
func NewMux(site *Site, rows []Route, shapes []string) (m *Mux, err error) {
	m = &Mux{mux: http.NewServeMux(), tables: map[string]*table{}}
	type declared struct {
		method string
		segs   []string
		t      *table
	}
	var decl []declared
	for _, sh := range shapes {
		method, path, ok := strings.Cut(sh, " ")
		if !ok || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("shape %q: want \"METHOD /path\"", sh)
		}
		segs := strings.Split(path[1:], "/")
		pattern := method + " /api/v4"
		for i, s := range segs {
			if s == "{}" {
				pattern += "/{s" + strconv.Itoa(i) + "}"
			} else if s == "{...}" && i == len(segs)-1 {
				pattern += "/{rest...}"
			} else {
				pattern += "/" + s
			}
		}
		t := &table{prefix: "/api/v4", mux: m}
		m.tables[pattern] = t
		decl = append(decl, declared{method, segs, t})
	}
	defer func() {
		// ServeMux panics on conflicting patterns: report it as an error
		// naming the rows, so a new row fails the table test, not a server.
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("route table: %v", p)
		}
	}()
rows:
	for _, rt := range rows {
		h := site.Handler(rt)
		segs := strings.Split(rt.Path[1:], "/")
		for _, d := range decl {
			if d.method == rt.Method && fits(d.segs, segs) {
				d.t.rows = append(d.t.rows, tableRow{segs: segs, h: h, rt: rt})
				continue rows
			}
		}
		m.mux.Handle(rt.Pattern(), h)
	}
	for pattern, t := range m.tables {
		if len(t.rows) == 0 {
			return nil, fmt.Errorf("shape %s: no row fits it", pattern)
		}
		m.mux.Handle(pattern, t)
	}
	return m, nil
}

// fits reports whether a row's segments have the shape's: same length,
// the shape's literals in the same places. A shape ending in "{...}"
// takes rows of its length or longer (their last segment may be a rest
// wildcard, "{name...}").
func fits(shape, row []string) bool {
	rest := len(shape) > 0 && shape[len(shape)-1] == "{...}"
	if rest {
		if len(row) < len(shape) {
			return false
		}
		shape = shape[:len(shape)-1]
	} else if len(shape) != len(row) {
		return false
	}
	for i, s := range shape {
		if s != "{}" && s != row[i] {
			return false
		}
	}
	return true
}

// isRest reports whether a segment is a rest wildcard ("{name...}").
func isRest(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "...}") }

// Handle registers a handler outside the API's rows (service endpoints).
func (m *Mux) Handle(pattern string, h http.Handler) { m.mux.Handle(pattern, h) }

// ServeHTTP routes r, answering unknown paths and methods in GitLab's JSON.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := m.mux.Handler(r); pattern == "" {
		m.unmatched(w, r)
		return
	}
	m.mux.ServeHTTP(w, r)
}

// segments are the request's decoded path segments after prefix.
func segments(r *http.Request, prefix string) ([]string, bool) {
	p := strings.TrimPrefix(r.URL.EscapedPath(), prefix)
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		v, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		parts[i] = v
	}
	return parts, true
}

// match picks the row for a request: every literal equal, wildcards
// non-empty; among several, the one whose first differing literal comes
// first.
func (t *table) match(r *http.Request) (*tableRow, []string) {
	segs, ok := segments(r, t.prefix)
	if !ok {
		return nil, nil
	}
	var best *tableRow
	for i := range t.rows {
		row := &t.rows[i]
		if !matches(row.segs, segs) {
			continue
		}
		if best == nil || moreLiteral(row.segs, best.segs) {
			best = row
		}
	}
	return best, segs
}

func matches(tmpl, segs []string) bool {
	if n := len(tmpl); n > 0 && isRest(tmpl[n-1]) {
		if len(segs) < n {
			return false
		}
		segs = append(segs[:n-1:n-1], strings.Join(segs[n-1:], "/"))
	}
	if len(tmpl) != len(segs) {
		return false
	}
	for i, s := range tmpl {
		if strings.HasPrefix(s, "{") {
			if segs[i] == "" {
				return false
			}
		} else if s != segs[i] {
			return false
		}
	}
	return true
}

// moreLiteral reports whether a has a literal at the first position where
// a and b differ in kind.
func moreLiteral(a, b []string) bool {
	for i := range min(len(a), len(b)) {
		la, lb := !strings.HasPrefix(a[i], "{"), !strings.HasPrefix(b[i], "{")
		if la != lb {
			return la
		}
	}
	return false
}

// ServeHTTP serves a request the shape's pattern matched.
func (t *table) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	row, segs := t.match(r)
	if row == nil {
		// No row of this method: another method may serve the path.
		var allow []string
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			if method != r.Method && t.mux.allows(r, method) {
				allow = append(allow, method)
			}
		}
		if len(allow) == 0 {
			WriteJSON(w, http.StatusNotFound, NotFoundBody)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		WriteJSON(w, http.StatusMethodNotAllowed, NotAllowedBody)
		return
	}
	for i, s := range row.segs {
		switch {
		case isRest(s):
			r.SetPathValue(strings.TrimSuffix(strings.Trim(s, "{}"), "..."), strings.Join(segs[i:], "/"))
		case strings.HasPrefix(s, "{"):
			r.SetPathValue(strings.Trim(s, "{}"), segs[i])
		}
	}
	r.Pattern = row.rt.Pattern()
	row.h.ServeHTTP(w, r)
}

// unmatched answers a request no pattern takes: 405 with Allow when the
// path exists for other methods (counting a shape's method only when one
// of its rows fits the path), 404 otherwise; redirects (path cleaning)
// pass through.
func (m *Mux) unmatched(w http.ResponseWriter, r *http.Request) {
	probe := &probeWriter{header: http.Header{}}
	m.mux.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		var allow []string
		for _, method := range strings.Split(probe.header.Get("Allow"), ", ") {
			if m.allows(r, method) {
				allow = append(allow, method)
			}
		}
		if len(allow) == 0 {
			WriteJSON(w, http.StatusNotFound, NotFoundBody)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		WriteJSON(w, http.StatusMethodNotAllowed, NotAllowedBody)
	case http.StatusNotFound, 0:
		if m.Fallback != nil && !strings.HasPrefix(r.URL.Path, "/api/") {
			m.Fallback.ServeHTTP(w, r)
			return
		}
		WriteJSON(w, http.StatusNotFound, NotFoundBody)
	default:
		for k, v := range probe.header {
			w.Header()[k] = v
		}
		w.WriteHeader(probe.status)
	}
}

// allows reports whether a row serves r's path with method.
func (m *Mux) allows(r *http.Request, method string) bool {
	if method == "" {
		return false
	}
	r2 := r.Clone(r.Context())
	r2.Method = method
	_, pattern := m.mux.Handler(r2)
	if pattern == "" {
		return false
	}
	t, ok := m.tables[pattern]
	if !ok {
		return true
	}
	row, _ := t.match(r2)
	return row != nil
}

// probeWriter captures the mux's own answer to an unmatched request.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(status int)      { p.status = status }
