package codeowners

import (
	"strings"
	"unicode/utf8"
)

// Match reports whether a CODEOWNERS pattern (as written in an entry)
// matches a file path (repository-relative; a leading / is ignored). The
// rules are GitLab's — Ruby's File.fnmatch with FNM_PATHNAME and
// FNM_DOTMATCH on the pattern made absolute — with two additions noted
// below:
//
//   - A pattern starting with / is anchored at the repository root;
//     any other pattern matches at any depth ("README.md" matches
//     README.md and a/b/README.md; "docs/*.md" matches docs/x.md and
//     a/docs/x.md).
//   - A pattern ending with / names a directory: it matches every path
//     under a directory it matches (not a file of that name). "/" alone
//     matches every path.
//   - A pattern without wildcards matches the path it names and, when
//     that is a directory, every path under it ("docs" is "docs" and
//     "docs/"). This is an addition: GitLab matches such a pattern only
//     against the path itself.
//   - * matches any run of characters but /; ? one character but /;
//     [abc], [a-z], [!a-z] and [^a-z] one character of (or not of) a
//     class, never /. Dots are not special: * matches .gitignore.
//   - ** as a whole path segment crosses directories: "**/" matches zero
//     or more directories, a trailing "/**" everything below (an
//     addition: fnmatch treats a trailing ** as *). Elsewhere ** is *.
//   - A backslash makes the next character literal (\#, \ , \*); an
//     unclosed [ is a literal [.
//
// Matching is case-sensitive. A pattern longer than 4096 bytes (which
// Parse never keeps) matches nothing. It costs O(len(pattern) ×
// len(path)) time at worst (many * and ** in the pattern), about
// O(len(path)) for a usual one, and O(len(pattern)) memory, whatever the
// inputs: no backtracking.
func Match(pattern, path string) bool {
	return compile(pattern).match(path)
}

type tokenKind uint8

const (
	tokLit   tokenKind = iota // one character, byte for byte
	tokAny                    // ?
	tokClass                  // [...]
	tokStar                   // *: a run of non-/ characters
	tokDirs                   // **/: zero or more whole directories
	tokRest                   // trailing **: anything
)

type token struct {
	kind tokenKind
	n    uint8   // tokLit: the character's bytes in lit
	lit  [4]byte // tokLit: one character (UTF-8, or one byte that is none)
	// class of a tokClass. A token is 16 bytes: a pattern costs 16 bytes
	// a character, and an Index of 10,000 patterns a few MiB.
	class *charClass
}

// litToken is the tokLit of one character (or byte).
func litToken(c string) token {
	t := token{kind: tokLit}
	t.n = uint8(copy(t.lit[:], c))
	return t
}

// char is a tokLit's character.
func (t *token) char() []byte { return t.lit[:t.n] }

type charClass struct {
	negate bool
	ranges [][2]rune // inclusive
}

func (c *charClass) has(r rune) bool {
	for _, rg := range c.ranges {
		if rg[0] <= r && r <= rg[1] {
			return !c.negate
		}
	}
	return c.negate
}

// matcher is a compiled pattern: a token list run as an NFA over the
// path's characters, with what an Index needs to skip running it.
type matcher struct {
	toks  []token
	all   bool // matches every path ("/")
	exact bool // a path the tokens match is matched
	under bool // a path below a directory the tokens match is matched
	// literal: the pattern has no wildcard; lit is the path (or
	// directory) it names, escapes removed, and anchored says whether it
	// is named from the root or at any depth.
	literal  bool
	anchored bool
	lit      string
	// What any path the pattern matches holds (the path without its
	// leading /): prefix at its start (the anchored pattern's leading
	// characters), suffix at its end (the trailing characters of a
	// pattern matching paths, not what is below them), and runs, the
	// runs of plain characters between wildcards, in this order without
	// overlapping.
	prefix, suffix string
	runs           []string
}

func compile(pattern string) *matcher {
	sh := shapeOf(pattern)
	switch {
	case sh.none:
		return &matcher{}
	case sh.all:
		return &matcher{all: true}
	}
	m := &matcher{toks: make([]token, 0, len(sh.body)+1), anchored: sh.anchored, literal: true}
	if !sh.anchored {
		m.toks = append(m.toks, token{kind: tokDirs})
	}
	lex(sh.body, func(tok token) bool {
		m.toks = append(m.toks, tok)
		if tok.kind != tokLit {
			m.literal = false
		}
		return true
	})
	m.exact = !sh.dirOnly
	m.under = sh.dirOnly || m.literal
	m.summarize()
	return m
}

// literalOf tells whether a pattern has no wildcard and, if so, the path
// it names (escapes removed), whether from the root, and whether only as
// a directory — as compile would, without building the tokens.
func literalOf(pattern string) (lit string, anchored, dirOnly, ok bool) {
	sh := shapeOf(pattern)
	if sh.none || sh.all {
		return "", false, false, false
	}
	if !strings.ContainsAny(sh.body, `*?[\`) {
		return sh.body, sh.anchored, sh.dirOnly, true // no escape, no wildcard
	}
	var b strings.Builder
	b.Grow(len(sh.body))
	ok = true
	lex(sh.body, func(tok token) bool {
		// A byte that is no character, escaped or before an escape,
		// might make one with the next once the backslash is gone: the
		// NFA compares characters, so leave such a pattern to it.
		if r, n := utf8.DecodeRune(tok.char()); tok.kind != tokLit || r == utf8.RuneError && n == 1 {
			ok = false
			return false
		}
		b.Write(tok.char())
		return true
	})
	if !ok {
		return "", false, false, false
	}
	return b.String(), sh.anchored, sh.dirOnly, true
}

// shape is a pattern's form around its body: none (it matches nothing:
// empty or too long), all ("/"), anchored (a leading /), dirOnly (a
// trailing unescaped /), and body, the pattern without those slashes.
type shape struct {
	none, all, anchored, dirOnly bool
	body                         string
}

func shapeOf(pattern string) shape {
	if pattern == "" || len(pattern) > maxPatternBytes {
		return shape{none: true}
	}
	if strings.Trim(pattern, "/") == "" {
		return shape{all: true}
	}
	sh := shape{anchored: pattern[0] == '/', body: strings.TrimLeft(pattern, "/")}
	for strings.HasSuffix(sh.body, "/") && !escapedAt(sh.body, len(sh.body)-1) {
		sh.body, sh.dirOnly = sh.body[:len(sh.body)-1], true
	}
	return sh
}

// lex calls emit with each token of a pattern's body, in order, until
// emit returns false.
func lex(p string, emit func(token) bool) {
	for i := 0; i < len(p); {
		var tok token
		segStart := i == 0 || p[i-1] == '/' && !escapedAt(p, i-1)
		switch c := p[i]; {
		case c == '*' && segStart && strings.HasPrefix(p[i:], "**") && (i+2 == len(p) || p[i+2] == '/'):
			if i+2 == len(p) {
				tok = token{kind: tokRest}
				i += 2
			} else {
				tok = token{kind: tokDirs}
				i += 3
			}
		case c == '*':
			tok = token{kind: tokStar}
			for i < len(p) && p[i] == '*' {
				i++
			}
		case c == '?':
			tok = token{kind: tokAny}
			i++
		case c == '[':
			if cl, n := parseClass(p[i:]); n > 0 {
				tok = token{kind: tokClass, class: cl}
				i += n
			} else {
				tok = litToken("[")
				i++
			}
		case c == '\\' && i+1 < len(p):
			_, n := utf8.DecodeRuneInString(p[i+1:])
			tok = litToken(p[i+1 : i+1+n])
			i += 1 + n
		default:
			_, n := utf8.DecodeRuneInString(p[i:])
			tok = litToken(p[i : i+n])
			i += n
		}
		if !emit(tok) {
			return
		}
	}
}

// summarize fills lit, prefix, suffix and runs from the tokens: a run of
// consecutive literal tokens matches consecutive characters of a path.
func (m *matcher) summarize() {
	var runs []string // the runs between the other tokens, in order
	var run strings.Builder
	for _, tok := range m.toks {
		if tok.kind == tokLit {
			run.Write(tok.char())
			continue
		}
		runs = append(runs, run.String())
		run.Reset()
	}
	last := run.String()
	runs = append(runs, last)
	if m.literal {
		m.lit = last
	}
	if n := len(m.toks); n > 0 {
		if m.toks[0].kind == tokLit {
			m.prefix = runs[0]
		}
		if !m.under && m.toks[n-1].kind == tokLit {
			m.suffix = last
		}
	}
	for _, r := range runs {
		if r != "" {
			m.runs = append(m.runs, r)
		}
	}
}

// mayMatch is a quick test of path (without its leading /): false means
// the pattern does not match it. The runs of plain characters are looked
// for in order, each at the first place after the one before: if they
// fit in any way, they fit so.
func (m *matcher) mayMatch(path string) bool {
	switch {
	case m.all:
		return true
	case !m.exact && !m.under || !strings.HasPrefix(path, m.prefix) || !strings.HasSuffix(path, m.suffix):
		return false
	}
	for _, r := range m.runs {
		i := strings.Index(path, r)
		if i < 0 {
			return false
		}
		path = path[i+len(r):]
	}
	return true
}

// escapedAt reports whether the byte at i is escaped by a backslash (an
// odd run of backslashes before it).
func escapedAt(s string, i int) bool {
	n := 0
	for i--; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// parseClass reads a [...] class at the start of s; n is the bytes it
// takes, 0 when the class is not closed.
func parseClass(s string) (*charClass, int) {
	cl := &charClass{}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		cl.negate = true
		i++
	}
	first := true
	for i < len(s) {
		if s[i] == ']' && !first {
			return cl, i + 1
		}
		first = false
		lo, n := classChar(s[i:])
		if n == 0 {
			return nil, 0
		}
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			h, n := classChar(s[i+1:])
			if n == 0 {
				return nil, 0
			}
			hi = h
			i += 1 + n
		}
		cl.ranges = append(cl.ranges, [2]rune{lo, hi})
	}
	return nil, 0
}

// classChar reads one (possibly escaped) character of a class.
func classChar(s string) (rune, int) {
	if s[0] == '\\' {
		if len(s) < 2 {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, 1 + n
	}
	r, n := utf8.DecodeRuneInString(s)
	return r, n
}

// match runs the token NFA over path.
func (m *matcher) match(path string) bool {
	var sc scratch
	return m.matchIn(path, &sc)
}

// scratch is the working memory of matchIn, reused from one call to the
// next (by one goroutine) so that matching allocates nothing once it has
// grown to the largest pattern.
type scratch struct {
	seen      []uint32 // the generation a state was last added in
	gen       uint32
	cur, next []int32
}

// matchIn runs the token NFA over path. States 0..T are "at token i"
// (T: all matched); T+1+i is "inside a directory name" of tokDirs i.
func (m *matcher) matchIn(path string, sc *scratch) bool {
	path = strings.TrimLeft(path, "/")
	switch {
	case path == "":
		return false
	case m.all:
		return true
	case !m.exact && !m.under:
		return false
	}
	t := len(m.toks)
	if n := 2*t + 2; len(sc.seen) < n {
		sc.seen = make([]uint32, n)
		sc.gen = 0
	}
	if sc.gen > 1<<31 {
		clear(sc.seen)
		sc.gen = 0
	}
	seen := sc.seen
	sc.gen++
	cur, next := sc.cur[:0], sc.next[:0]
	defer func() { sc.cur, sc.next = cur[:0], next[:0] }()
	accept := false
	add := func(set []int32, s int) []int32 {
		for seen[s] != sc.gen {
			seen[s] = sc.gen
			set = append(set, int32(s))
			if s == t {
				accept = true
			}
			if s >= t {
				break
			}
			switch m.toks[s].kind {
			case tokStar, tokDirs, tokRest:
				s++ // may match nothing
				continue
			}
			break
		}
		return set
	}
	cur = add(cur, 0)
	for j := 0; j < len(path); {
		r, n := utf8.DecodeRuneInString(path[j:])
		raw := path[j : j+n]
		j += n
		if r == '/' && m.under && accept {
			return true
		}
		sc.gen++
		accept = false
		next = next[:0]
		for _, s32 := range cur {
			switch s := int(s32); {
			case s == t:
			case s > t: // inside a directory name of tokDirs s-t-1
				if r == '/' {
					next = add(next, s-t-1)
				} else {
					next = add(next, s)
				}
			default:
				switch tok := m.toks[s]; tok.kind {
				case tokLit:
					if string(tok.char()) == raw {
						next = add(next, s+1)
					}
				case tokAny:
					if r != '/' {
						next = add(next, s+1)
					}
				case tokClass:
					if r != '/' && tok.class.has(r) {
						next = add(next, s+1)
					}
				case tokStar:
					if r != '/' {
						next = add(next, s)
					}
				case tokRest:
					next = add(next, s)
				case tokDirs:
					if r != '/' {
						next = add(next, t+1+s)
					}
				}
			}
		}
		cur, next = next, cur
		if len(cur) == 0 {
			return false
		}
	}
	return m.exact && accept
}
