package web

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A job's log as HTML: ANSI SGR colours and attributes become classes
// (the page's CSP allows no inline style), GitLab's collapsible sections
// (section_start:<ts>:<name>[collapsed=true]\r\e[0K … section_end:…)
// become <details>, a carriage return starts its line over, every other
// control sequence is dropped and all text is escaped.
//
// A log is rendered a piece at a time (the page, then what the runner
// appends): logState carries the style and the open sections from one
// piece to the next, and each piece is a list of logChunks, each of
// balanced HTML, to append inside the section open at its Depth.

// maxLogSections bounds how deep sections nest; deeper starts are kept
// as plain lines.
const maxLogSections = 16

// maxSectionName bounds a section's name.
const maxSectionName = 100

// logStyle is the SGR state: colours are 0–15 (the terminal's 16), -1
// the default.
type logStyle struct {
	FG, BG int
	Flags  int
}

// The SGR attributes a style keeps.
const (
	attrBold = 1 << iota
	attrFaint
	attrItalic
	attrUnderline
	attrStrike
	attrInverse
	attrAll = attrBold | attrFaint | attrItalic | attrUnderline | attrStrike | attrInverse
)

var plainStyle = logStyle{FG: -1, BG: -1}

// class is the style's class attribute value ("" for plain text).
func (s logStyle) class() string {
	var b strings.Builder
	add := func(c string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c)
	}
	fg, bg := s.FG, s.BG
	if s.Flags&attrInverse != 0 {
		fg, bg = bg, fg
		if fg < 0 {
			fg = 16 // the background's colour
		}
		if bg < 0 {
			bg = 16 // the text's colour
		}
	}
	if fg >= 0 {
		add("term-fg" + strconv.Itoa(fg))
	}
	if bg >= 0 {
		add("term-bg" + strconv.Itoa(bg))
	}
	for _, f := range []struct {
		bit  int
		name string
	}{{attrBold, "term-bold"}, {attrFaint, "term-faint"}, {attrItalic, "term-italic"}, {attrUnderline, "term-underline"}, {attrStrike, "term-strike"}} {
		if s.Flags&f.bit != 0 {
			add(f.name)
		}
	}
	return b.String()
}

// logState is what rendering carries from one piece of a log to the
// next.
type logState struct {
	Style logStyle
	// Open are the names of the open sections, outermost first.
	Open []string
}

func newLogState() logState { return logState{Style: plainStyle} }

// encode writes the state as a short token for a URL: "fg.bg.flags" and
// the open sections' names, "~"-separated.
func (st logState) encode() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(st.Style.FG) + "." + strconv.Itoa(st.Style.BG) + "." + strconv.Itoa(st.Style.Flags))
	for _, n := range st.Open {
		b.WriteByte('~')
		b.WriteString(n)
	}
	return b.String()
}

// decodeLogState reads a token encode wrote; ok is false for anything
// else (the caller starts afresh).
func decodeLogState(s string) (logState, bool) {
	st := newLogState()
	if s == "" {
		return st, true
	}
	if len(s) > 4096 {
		return st, false
	}
	parts := strings.Split(s, "~")
	nums := strings.Split(parts[0], ".")
	if len(nums) != 3 || len(parts)-1 > maxLogSections {
		return st, false
	}
	var v [3]int
	for i, n := range nums {
		x, err := strconv.Atoi(n)
		if err != nil {
			return st, false
		}
		v[i] = x
	}
	if v[0] < -1 || v[0] > 15 || v[1] < -1 || v[1] > 15 || v[2] < 0 || v[2]&^attrAll != 0 {
		return st, false
	}
	st.Style = logStyle{FG: v[0], BG: v[1], Flags: v[2]}
	for _, n := range parts[1:] {
		if !validSectionName(n) {
			return newLogState(), false
		}
		st.Open = append(st.Open, n)
	}
	return st, true
}

func validSectionName(n string) bool {
	if n == "" || len(n) > maxSectionName {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// logChunk is balanced HTML to append inside the section open at Depth
// (0: the log itself).
type logChunk struct {
	Depth int    `json:"depth"`
	HTML  string `json:"html"`
}

// logRenderer renders one piece of a log.
type logRenderer struct {
	st      logState
	chunks  []logChunk
	b       strings.Builder
	scratch bytes.Buffer // spans' line
	start   int          // the depth the current chunk starts at
	local   int          // sections the current chunk opened and has not closed
}

// renderLog renders data from state st. Only whole lines are rendered
// unless final (the log is complete): used is how many bytes of data
// were, and the state after them is returned.
func renderLog(data []byte, st logState, final bool) (chunks []logChunk, used int, next logState) {
	r := &logRenderer{st: st, start: len(st.Open)}
	r.b.Grow(len(data) + len(data)/2) // the markup's share, about
	r.st.Open = append([]string(nil), st.Open...)
	for used < len(data) {
		i := bytes.IndexByte(data[used:], '\n')
		if i < 0 {
			if !final {
				break
			}
			i = len(data) - used
		}
		r.line(string(data[used : used+i]))
		used += i
		if used < len(data) {
			used++ // the newline
		}
	}
	r.flush()
	return r.chunks, used, r.st
}

// flush closes the current chunk's own sections and ends it.
func (r *logRenderer) flush() {
	for ; r.local > 0; r.local-- {
		r.b.WriteString("</div></details>")
	}
	if r.b.Len() > 0 {
		r.chunks = append(r.chunks, logChunk{Depth: r.start, HTML: r.b.String()})
	}
	r.b.Reset()
}

// line renders one line: the text around section markers, and the
// markers.
func (r *logRenderer) line(s string) {
	s = strings.TrimSuffix(s, "\r")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for {
		at, kind, name, opts, end := findSectionMarker(s)
		if at < 0 {
			break
		}
		before := s[:at]
		s = s[end:]
		if kind == "start" {
			if len(r.st.Open) >= maxLogSections {
				r.text(before + s)
				return
			}
			r.textIfVisible(before)
			r.open(name, strings.Contains(opts, "collapsed=true"), s)
			return
		}
		r.textIfVisible(before)
		r.close(name)
	}
	r.textIfVisible(s)
}

// textIfVisible renders text as a line unless it shows nothing (the
// erase sequences around markers).
func (r *logRenderer) textIfVisible(s string) {
	if s == "" {
		return
	}
	st := r.st.Style
	if !showsText(s, &st) {
		r.st.Style = st
		return
	}
	r.text(s)
}

// text renders s as a line of the log.
func (r *logRenderer) text(s string) {
	r.b.WriteString(`<div class="log-line">`)
	spans(&r.b, &r.scratch, s, &r.st.Style)
	r.b.WriteString("</div>")
}

// open starts a section whose header is the rest of its line.
func (r *logRenderer) open(name string, collapsed bool, header string) {
	r.st.Open = append(r.st.Open, name)
	r.local++
	r.b.WriteString(`<details class="log-section" data-section="` + html.EscapeString(name) + `"`)
	if !collapsed {
		r.b.WriteString(" open")
	}
	r.b.WriteString(`><summary class="log-line">`)
	spans(&r.b, &r.scratch, header, &r.st.Style)
	r.b.WriteString(`</summary><div class="section-body">`)
}

// close ends the innermost open section named name and those inside it;
// an end of no open section is dropped.
func (r *logRenderer) close(name string) {
	i := len(r.st.Open) - 1
	for i >= 0 && r.st.Open[i] != name {
		i--
	}
	if i < 0 {
		return
	}
	r.st.Open = r.st.Open[:i]
	depth := r.start + r.local // open sections now, before closing
	for depth > i && r.local > 0 {
		r.b.WriteString("</div></details>")
		r.local--
		depth--
	}
	if depth > i {
		// The section was open before this chunk: what follows goes
		// outside it, in a new chunk.
		r.flush()
		r.start = i
	}
}

// findSectionMarker finds the first "section_start:<ts>:<name>[opts]" or
// "section_end:<ts>:<name>" and the "\r\e[0K" that ends it (as GitLab's
// renderer reads them): at is where it begins (-1: none) and end where it ends.
func findSectionMarker(s string) (at int, kind, name, opts string, end int) {
	from := 0
	for {
		i := strings.Index(s[from:], "section_")
		if i < 0 {
			return -1, "", "", "", 0
		}
		i += from
		from = i + len("section_")
		rest := s[from:]
		switch {
		case strings.HasPrefix(rest, "start:"):
			kind, rest = "start", rest[len("start:"):]
		case strings.HasPrefix(rest, "end:"):
			kind, rest = "end", rest[len("end:"):]
		default:
			continue
		}
		j := 0
		for j < len(rest) && j < 20 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || j >= len(rest) || rest[j] != ':' {
			continue
		}
		rest = rest[j+1:]
		k := 0
		for k < len(rest) && k <= maxSectionName && validSectionName(rest[k:k+1]) {
			k++
		}
		if k == 0 || k > maxSectionName {
			continue
		}
		name = rest[:k]
		rest = rest[k:]
		opts = ""
		if kind == "start" && strings.HasPrefix(rest, "[") {
			if c := strings.IndexByte(rest, ']'); c > 0 && c < 200 {
				opts, rest = rest[1:c], rest[c+1:]
			}
		}
		if !strings.HasPrefix(rest, "\r\x1b[0K") {
			continue
		}
		rest = rest[len("\r\x1b[0K"):]
		return i, kind, name, opts, len(s) - len(rest)
	}
}

// spans writes s's text as escaped spans of its styles, applying SGR
// sequences to st, dropping other control sequences and starting over at
// each carriage return. line is scratch space, kept between calls.
func spans(b *strings.Builder, line *bytes.Buffer, s string, st *logStyle) {
	// The line's HTML since its last carriage return goes to line and to
	// b at the end: a carriage return starts it over without copying b.
	line.Reset()
	cls, open := st.class(), false // open: a span of cls is open in line
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\r':
			// Start the line over: what it showed is overwritten.
			line.Reset()
			open = false
			i++
			continue
		case c == 0x1b:
			n, sgr, params := escapeSequence(s[i:])
			if sgr {
				if next := applySGR(*st, params); next != *st {
					if open {
						line.WriteString("</span>")
						open = false
					}
					*st = next
					cls = next.class()
				}
			}
			i += n
			continue
		case c < 0x20 && c != '\t', c == 0x7f:
			// Other control characters show nothing.
			i++
			continue
		}
		if !open && cls != "" {
			line.WriteString(`<span class="`)
			line.WriteString(cls)
			line.WriteString(`">`)
			open = true
		}
		switch c {
		case '&':
			line.WriteString("&amp;")
		case '\'':
			line.WriteString("&#39;")
		case '<':
			line.WriteString("&lt;")
		case '>':
			line.WriteString("&gt;")
		case '"':
			line.WriteString("&#34;")
		default:
			line.WriteByte(c)
		}
		i++
	}
	if open {
		line.WriteString("</span>")
	}
	b.Write(line.Bytes())
}

// showsText reports whether s, written as a line, shows any text (the
// erase sequences around section markers show none), applying its SGR
// sequences to st as spans would.
func showsText(s string, st *logStyle) bool {
	shows := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\r':
			shows = false
		case c == 0x1b:
			n, sgr, params := escapeSequence(s[i:])
			if sgr {
				*st = applySGR(*st, params)
			}
			i += n
			continue
		case c < 0x20 && c != '\t', c == 0x7f:
		default:
			shows = true
		}
		i++
	}
	return shows
}

// escapeSequence reads the escape sequence at the start of s: its length
// and, for an SGR one (ESC [ … m), its parameters.
func escapeSequence(s string) (n int, sgr bool, params string) {
	if len(s) < 2 {
		return len(s), false, ""
	}
	switch s[1] {
	case '[':
		for j := 2; j < len(s) && j < 64; j++ {
			c := s[j]
			if c >= 0x40 && c <= 0x7e {
				return j + 1, c == 'm', s[2:j]
			}
			if c < 0x20 || c > 0x3f {
				// Not a control sequence's byte: drop the escape and
				// what was read.
				return j, false, ""
			}
		}
		return min(len(s), 64), false, ""
	case ']':
		// An operating system command, to BEL or ST.
		for j := 2; j < len(s) && j < 512; j++ {
			if s[j] == 0x07 {
				return j + 1, false, ""
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2, false, ""
			}
		}
		return 2, false, ""
	}
	// Another escape: drop the ESC alone (what follows may be a
	// character's first byte).
	return 1, false, ""
}

// applySGR applies an SGR sequence's parameters to a style.
func applySGR(st logStyle, params string) logStyle {
	if params == "" {
		return plainStyle
	}
	// An empty parameter is 0 (reset).
	ps := strings.Split(strings.ReplaceAll(params, ":", ";"), ";")
	num := func(i int) int {
		if i >= len(ps) || len(ps[i]) > 4 {
			return -1
		}
		if ps[i] == "" {
			return 0
		}
		n, err := strconv.Atoi(ps[i])
		if err != nil {
			return -1
		}
		return n
	}
	for i := 0; i < len(ps) && i < 32; i++ {
		switch p := num(i); {
		case p == 0:
			st = plainStyle
		case p == 1:
			st.Flags |= attrBold
		case p == 2:
			st.Flags |= attrFaint
		case p == 3:
			st.Flags |= attrItalic
		case p == 4:
			st.Flags |= attrUnderline
		case p == 7:
			st.Flags |= attrInverse
		case p == 9:
			st.Flags |= attrStrike
		case p == 22:
			st.Flags &^= attrBold | attrFaint
		case p == 23:
			st.Flags &^= attrItalic
		case p == 24:
			st.Flags &^= attrUnderline
		case p == 27:
			st.Flags &^= attrInverse
		case p == 29:
			st.Flags &^= attrStrike
		case p >= 30 && p <= 37:
			st.FG = p - 30
		case p == 39:
			st.FG = -1
		case p >= 40 && p <= 47:
			st.BG = p - 40
		case p == 49:
			st.BG = -1
		case p >= 90 && p <= 97:
			st.FG = p - 90 + 8
		case p >= 100 && p <= 107:
			st.BG = p - 100 + 8
		case p == 38 || p == 48:
			c, used := extendedColor(num, i+1)
			i += used
			if c >= -1 {
				if p == 38 {
					st.FG = c
				} else {
					st.BG = c
				}
			}
		}
	}
	return st
}

// extendedColor reads a 256-colour (5;n) or true colour (2;r;g;b)
// parameter, mapped to the nearest of the 16 colours; used is how many
// parameters it took, and the colour is -2 for a malformed one.
func extendedColor(num func(int) int, i int) (color, used int) {
	switch num(i) {
	case 5:
		n := num(i + 1)
		if n < 0 || n > 255 {
			return -2, 2
		}
		return color256(n), 2
	case 2:
		r, g, b := num(i+1), num(i+2), num(i+3)
		if r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255 {
			return -2, 4
		}
		return nearest16(r, g, b), 4
	}
	return -2, 1
}

// palette16 is the 16 colours as xterm draws them.
var palette16 = [16][3]int{
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
}

// color256 maps a colour of the 256-colour palette to the 16.
func color256(n int) int {
	switch {
	case n < 16:
		return n
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return nearest16(level(n/36), level(n/6%6), level(n%6))
	}
	g := 8 + 10*(n-232)
	return nearest16(g, g, g)
}

// nearest16 is the colour of the 16 nearest to r, g, b.
func nearest16(r, g, b int) int {
	best, dist := 0, 1<<30
	for i, c := range palette16 {
		dr, dg, db := r-c[0], g-c[1], b-c[2]
		if d := dr*dr + dg*dg + db*db; d < dist {
			best, dist = i, d
		}
	}
	return best
}
