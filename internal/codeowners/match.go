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
	kind  tokenKind
	lit   string // tokLit
	class *charClass
}

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
// path's characters.
type matcher struct {
	toks  []token
	all   bool // matches every path ("/")
	exact bool // a path the tokens match is matched
	under bool // a path below a directory the tokens match is matched
}

func compile(pattern string) *matcher {
	if pattern == "" || len(pattern) > maxPatternBytes {
		return &matcher{}
	}
	if strings.Trim(pattern, "/") == "" {
		return &matcher{all: true}
	}
	anchored := pattern[0] == '/'
	p := strings.TrimLeft(pattern, "/")
	dirOnly := false
	for strings.HasSuffix(p, "/") && !escapedAt(p, len(p)-1) {
		p, dirOnly = p[:len(p)-1], true
	}
	m := &matcher{}
	if !anchored {
		m.toks = append(m.toks, token{kind: tokDirs})
	}
	literal := true
	for i := 0; i < len(p); {
		segStart := i == 0 || p[i-1] == '/' && !escapedAt(p, i-1)
		switch c := p[i]; {
		case c == '*' && segStart && strings.HasPrefix(p[i:], "**") && (i+2 == len(p) || p[i+2] == '/'):
			literal = false
			if i+2 == len(p) {
				m.toks = append(m.toks, token{kind: tokRest})
				i += 2
			} else {
				m.toks = append(m.toks, token{kind: tokDirs})
				i += 3
			}
		case c == '*':
			literal = false
			m.toks = append(m.toks, token{kind: tokStar})
			for i < len(p) && p[i] == '*' {
				i++
			}
		case c == '?':
			literal = false
			m.toks = append(m.toks, token{kind: tokAny})
			i++
		case c == '[':
			if cl, n := parseClass(p[i:]); n > 0 {
				literal = false
				m.toks = append(m.toks, token{kind: tokClass, class: cl})
				i += n
			} else {
				m.toks = append(m.toks, token{kind: tokLit, lit: "["})
				i++
			}
		case c == '\\' && i+1 < len(p):
			_, n := utf8.DecodeRuneInString(p[i+1:])
			m.toks = append(m.toks, token{kind: tokLit, lit: p[i+1 : i+1+n]})
			i += 1 + n
		default:
			_, n := utf8.DecodeRuneInString(p[i:])
			m.toks = append(m.toks, token{kind: tokLit, lit: p[i : i+n]})
			i += n
		}
	}
	m.exact = !dirOnly
	m.under = dirOnly || literal
	return m
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

// match runs the token NFA over path. States 0..T are "at token i"
// (T: all matched); T+1+i is "inside a directory name" of tokDirs i.
func (m *matcher) match(path string) bool {
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
	seen := make([]int, 2*t+2) // generation a state was last added in
	gen := 1
	var cur, next []int
	accept := false
	add := func(set []int, s int) []int {
		for seen[s] != gen {
			seen[s] = gen
			set = append(set, s)
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
		gen++
		accept = false
		next = next[:0]
		for _, s := range cur {
			switch {
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
					if raw == tok.lit {
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
