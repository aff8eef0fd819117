package ciconfig

import (
	"strings"
	"unicode/utf8"
)

// maxBraceExpansions bounds the patterns one glob's {a,b} braces expand
// to; a glob beyond it matches nothing rather than costing exponential
// time.
const maxBraceExpansions = 256

// maxGlobLen bounds a glob (a path is at most PATH_MAX, 4096 bytes).
const maxGlobLen = 4096

// MatchGlob is Ruby's File.fnmatch?(glob, path, FNM_PATHNAME |
// FNM_DOTMATCH | FNM_EXTGLOB), as GitLab matches changes: paths: *, ?
// and [classes] stay within one path segment, **/ spans any number of
// directories, {a,b} are alternatives, a backslash escapes, and dots
// are not special.
func MatchGlob(glob, path string) bool {
	if len(glob) > maxGlobLen {
		return false
	}
	pats, ok := expandBraces(glob, nil)
	if !ok {
		return false
	}
	segs := strings.Split(path, "/")
	for _, p := range pats {
		if matchSegments(strings.Split(p, "/"), segs) {
			return true
		}
	}
	return false
}

// expandBraces expands the first brace group of s (then the rest,
// recursively); ok is false when there would be too many patterns.
func expandBraces(s string, acc []string) ([]string, bool) {
	open, close := -1, -1
	depth := 0
	var commas []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 1 {
				close = i
			}
			if depth > 0 {
				depth--
			}
		}
		if close >= 0 {
			break
		}
	}
	if open < 0 || close < 0 {
		if len(acc) >= maxBraceExpansions {
			return nil, false
		}
		return append(acc, s), true
	}
	prefix, suffix := s[:open], s[close+1:]
	start := open + 1
	for _, end := range append(commas, close) {
		var ok bool
		if acc, ok = expandBraces(prefix+s[start:end]+suffix, acc); !ok {
			return nil, false
		}
		start = end + 1
	}
	return acc, true
}

// matchSegments matches pattern segments against path segments; **
// followed by more segments spans zero or more of them. Results are
// memoized per position, so many ** cost polynomial time, not more.
func matchSegments(pats, segs []string) bool {
	memo := map[[2]int]bool{}
	var match func(p, s int) bool
	match = func(p, s int) bool {
		if p == len(pats) {
			return s == len(segs)
		}
		key := [2]int{p, s}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case pats[p] == "**" && p+1 < len(pats):
			for i := s; i <= len(segs) && !ok; i++ {
				ok = match(p+1, i)
			}
		case s < len(segs):
			ok = matchSegment(pats[p], segs[s]) && match(p+1, s+1)
		}
		memo[key] = ok
		return ok
	}
	return match(0, 0)
}

// matchSegment matches one path segment, * backtracking to the last
// star only (linear in practice, quadratic at worst).
func matchSegment(p, s string) bool {
	star, starS := -1, 0
	pi, si := 0, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				star, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si += runeLen(s[si:])
				continue
			case '[':
				if n, ok, valid := matchClass(p[pi:], s[si:]); valid {
					if ok {
						pi += n
						si += runeLen(s[si:])
						continue
					}
					break
				}
				fallthrough
			default:
				c := pi
				if p[c] == '\\' && c+1 < len(p) {
					c++
				}
				if p[c] == s[si] {
					pi, si = c+1, si+1
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		starS += runeLen(s[starS:])
		pi, si = star+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchClass matches a [...] class at the start of p against the first
// character of s; n is the class's length, valid false when p has no
// closing bracket (then [ is an ordinary character).
func matchClass(p, s string) (n int, ok, valid bool) {
	r, _ := utf8.DecodeRuneInString(s)
	i := 1
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	matched := false
	for first := true; i < len(p); first = false {
		if p[i] == ']' && !first {
			return i + 1, matched != negate, true
		}
		lo, w := classChar(p[i:])
		i += w
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, w = classChar(p[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return 0, false, false
}

func classChar(p string) (rune, int) {
	if p[0] == '\\' && len(p) > 1 {
		r, w := utf8.DecodeRuneInString(p[1:])
		return r, 1 + w
	}
	return utf8.DecodeRuneInString(p)
}

func runeLen(s string) int {
	_, w := utf8.DecodeRuneInString(s)
	return w
}
