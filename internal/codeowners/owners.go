package codeowners

import "strings"

// SectionOwners are the owners one section gives a set of paths.
type SectionOwners struct {
	Section           string
	Optional          bool
	ApprovalsRequired int
	// Owners as written, deduplicated case-insensitively, in first-seen
	// order (paths in the order given, each entry's owners in its order).
	Owners []string
	// Patterns of the entries that decided a path (each path's last
	// matching entry), deduplicated, in first-seen order; an entry with
	// no owners is listed when it decided a path.
	Patterns []string
}

// OwnersFor returns, section by section in file order, the owners of the
// given paths (repository-relative, as git names them; a leading / is
// ignored): for each path, the section's last entry matching it decides
// its owners. A section is left out when no path has owners in it — no
// entry matches, or the deciding entries clear ownership. It builds an
// Index of f each time: keep f.Index() to answer for several sets of
// paths.
func (f File) OwnersFor(paths []string) []SectionOwners {
	return f.Index().OwnersFor(paths)
}

// Index is a File prepared for OwnersFor, so that the work for a path
// does not grow with the number of entries. Entries without wildcards
// (the bulk of a large file: files and directories named one by one) are
// found by the path they name, looking up each directory and tail of the
// path. Entries with wildcards are kept by the directories their pattern
// names before its first wildcard (/spec/models/**/*_spec.rb under
// spec/models), or else by the extension it ends with (*.md), and only
// those under the path's directories, or with its extension, are tried,
// with the few left (* or docs/*) — from a section's last entry back,
// stopping at the entry already found, each first tested by the
// characters any path it matches holds, most tries costing a string
// comparison. An Index is read-only: it may serve concurrent calls.
type Index struct {
	sections []indexedSection
	// anchored and floating: entries without wildcards, by the path
	// they name from the root or at any depth.
	anchored, floating map[string][]ref
	// byDir and byExt: entries with wildcards by the directories their
	// pattern names from the root before its first wildcard, or else by
	// the extension (from a last dot) it ends with.
	byDir, byExt map[string][]ref
	// others: the sections having entries with wildcards in neither map.
	others []int32
	// The most segments and bytes a key of floating has, and the most
	// segments of a key of anchored or byDir: longer parts of a path are
	// not looked up.
	floatingSegs, floatingBytes, anchoredSegs, dirSegs int
}

type indexedSection struct {
	Section
	matchers []*matcher // of the entries with wildcards (nil for the others)
	others   []int32    // entries with wildcards in neither byDir nor byExt, in file order
}

// ref is an entry of a section.
type ref struct {
	section, entry int32
	// dirOnly: the pattern, without wildcards, ends with / and matches
	// only what is below the directory, not a file of that name.
	dirOnly bool
}

// Index prepares f for OwnersFor. f must not change afterwards.
func (f File) Index() *Index {
	ix := &Index{anchored: map[string][]ref{}, floating: map[string][]ref{}, byDir: map[string][]ref{}, byExt: map[string][]ref{}}
	for si, s := range f.Sections {
		is := indexedSection{Section: s, matchers: make([]*matcher, len(s.Entries))}
		for ei, e := range s.Entries {
			r := ref{section: int32(si), entry: int32(ei)}
			lit, anchored, dirOnly, ok := literalOf(e.Pattern)
			switch {
			case ok && anchored:
				r.dirOnly = dirOnly
				ix.anchored[lit] = append(ix.anchored[lit], r)
				ix.anchoredSegs = max(ix.anchoredSegs, strings.Count(lit, "/")+1)
				continue
			case ok:
				r.dirOnly = dirOnly
				ix.floating[lit] = append(ix.floating[lit], r)
				ix.floatingSegs = max(ix.floatingSegs, strings.Count(lit, "/")+1)
				ix.floatingBytes = max(ix.floatingBytes, len(lit))
				continue
			}
			m := compile(e.Pattern)
			is.matchers[ei] = m
			if dir, _, found := cutLast(m.prefix, '/'); found && m.anchored && dir != "" {
				ix.byDir[dir] = append(ix.byDir[dir], r)
				ix.dirSegs = max(ix.dirSegs, strings.Count(dir, "/")+1)
			} else if ext := extension(m.suffix); ext != "" {
				ix.byExt[ext] = append(ix.byExt[ext], r)
			} else {
				is.others = append(is.others, int32(ei))
			}
		}
		if len(is.others) > 0 {
			ix.others = append(ix.others, int32(si))
		}
		ix.sections = append(ix.sections, is)
	}
	return ix
}

// cutLast slices s around the last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// extension is the end of s from its last dot, "" when that holds a / or
// s has no dot: a path ending with s ends with it too.
func extension(s string) string {
	i := strings.LastIndexByte(s, '.')
	if i < 0 || strings.IndexByte(s[i:], '/') >= 0 {
		return ""
	}
	return s[i:]
}

// OwnersFor is File.OwnersFor. Its cost grows with the number of paths
// and, for each, with its depth and the entries with wildcards under its
// directories or with its extension — not with the other entries.
func (ix *Index) OwnersFor(paths []string) []SectionOwners {
	n := len(ix.sections)
	best := make([]int32, n) // per section, the last entry matching the path
	for i := range best {
		best[i] = -1
	}
	var touched []int32 // the sections with an entry in best
	decide := func(section, entry int32) {
		if best[section] < 0 {
			touched = append(touched, section)
		}
		best[section] = max(best[section], entry)
	}
	var sc scratch
	try := func(p string, refs []ref) {
		for k := len(refs) - 1; k >= 0; k-- {
			r := refs[k]
			if r.entry > best[r.section] {
				if m := ix.sections[r.section].matchers[r.entry]; m.mayMatch(p) && m.matchIn(p, &sc) {
					decide(r.section, r.entry)
				}
			}
		}
	}
	accs := make([]*ownersAcc, n)
	var all [][]*matcher // every entry compiled, for paths git never writes
	for _, path := range paths {
		p := strings.TrimLeft(path, "/")
		if p == "" {
			continue
		}
		touched = touched[:0]
		if clean(p) {
			ix.literals(p, decide)
			if len(ix.byDir) > 0 {
				for j, segs := 0, 0; segs < ix.dirSegs; segs++ {
					end := strings.IndexByte(p[j:], '/')
					if end < 0 {
						break
					}
					j += end
					try(p, ix.byDir[p[:j]])
					j++
				}
			}
			if len(ix.byExt) > 0 {
				if ext := extension(p[strings.LastIndexByte(p, '/')+1:]); ext != "" {
					try(p, ix.byExt[ext])
				}
			}
			for _, si := range ix.others {
				s := &ix.sections[si]
				for k := len(s.others) - 1; k >= 0 && s.others[k] > best[si]; k-- {
					if m := s.matchers[s.others[k]]; m.mayMatch(p) && m.matchIn(p, &sc) {
						decide(si, s.others[k])
						break
					}
				}
			}
		} else {
			// Not a path git writes ("a//b", "a/"): try every entry.
			if all == nil {
				all = ix.compileAll()
			}
			for si, ms := range all {
				for ei := len(ms) - 1; ei >= 0; ei-- {
					if m := ms[ei]; m.mayMatch(p) && m.matchIn(p, &sc) {
						decide(int32(si), int32(ei))
						break
					}
				}
			}
		}
		for _, si := range touched {
			if accs[si] == nil {
				s := &ix.sections[si]
				accs[si] = &ownersAcc{so: SectionOwners{Section: s.Name, Optional: s.Optional, ApprovalsRequired: s.ApprovalsRequired}}
			}
			accs[si].add(ix.sections[si].Entries[best[si]])
			best[si] = -1
		}
	}
	var out []SectionOwners
	for _, a := range accs {
		if a != nil && len(a.so.Owners) > 0 {
			out = append(out, a.so)
		}
	}
	return out
}

// compileAll compiles every entry of every section.
func (ix *Index) compileAll() [][]*matcher {
	all := make([][]*matcher, len(ix.sections))
	for si, s := range ix.sections {
		all[si] = make([]*matcher, len(s.Entries))
		for ei, e := range s.Entries {
			if all[si][ei] = s.matchers[ei]; all[si][ei] == nil {
				all[si][ei] = compile(e.Pattern)
			}
		}
	}
	return all
}

// literals calls decide for each entry without wildcards matching p (a
// clean path): an anchored one names p or a directory p is in; a
// floating one the same from any directory down.
func (ix *Index) literals(p string, decide func(section, entry int32)) {
	visit := func(list []ref, whole bool) {
		for _, le := range list {
			if !whole || !le.dirOnly {
				decide(le.section, le.entry)
			}
		}
	}
	if len(ix.anchored) > 0 {
		for j, segs := 0, 0; segs < ix.anchoredSegs; segs++ {
			end := strings.IndexByte(p[j:], '/')
			if end < 0 {
				visit(ix.anchored[p], true)
				break
			}
			j += end
			visit(ix.anchored[p[:j]], false)
			j++
		}
	}
	if len(ix.floating) > 0 {
		for i := 0; i < len(p); {
			for j, segs := i, 0; segs < ix.floatingSegs; segs++ {
				end := strings.IndexByte(p[j:], '/')
				if end < 0 {
					if len(p)-i <= ix.floatingBytes {
						visit(ix.floating[p[i:]], true)
					}
					break
				}
				j += end
				if j-i > ix.floatingBytes {
					break
				}
				visit(ix.floating[p[i:j]], false)
				j++
			}
			next := strings.IndexByte(p[i:], '/')
			if next < 0 {
				break
			}
			i += next + 1
		}
	}
}

// clean reports whether p is a path as git names a file: no empty
// segment, no / at either end.
func clean(p string) bool {
	return p != "" && p[0] != '/' && p[len(p)-1] != '/' && !strings.Contains(p, "//")
}

// ownersAcc gathers a section's owners and deciding patterns.
type ownersAcc struct {
	so       SectionOwners
	owners   ownerList
	patterns map[string]bool
}

func (a *ownersAcc) add(e Entry) {
	for _, o := range e.Owners {
		a.owners.add(o)
	}
	a.so.Owners = a.owners.list
	if a.patterns == nil {
		a.patterns = map[string]bool{}
	}
	if !a.patterns[e.Pattern] {
		a.patterns[e.Pattern] = true
		a.so.Patterns = append(a.so.Patterns, e.Pattern)
	}
}

// Kinds of owner, as Classify returns them.
const (
	// KindName is @name: a user or a top-level group, which the syntax
	// cannot tell apart; resolve it against users first, then groups.
	KindName = "name"
	// KindGroup is @group/subgroup: a group's full path.
	KindGroup = "group"
	// KindEmail is an e-mail address (compare it case-insensitively).
	KindEmail = "email"
	// KindRole is @@developer, @@maintainer or @@owner (or the plural):
	// the project's direct members with exactly that role.
	KindRole = "role"
)

// Classify tells what an owner names. name is the owner without its @
// (the group's full path for KindGroup, the address for KindEmail, the
// singular lower-case role for KindRole). kind is "" for text that is no
// owner — exactly what Parse drops as malformed.
func Classify(owner string) (kind, name string) {
	switch {
	case strings.HasPrefix(owner, "@@"):
		role := strings.ToLower(owner[2:])
		switch role {
		case "developer", "developers", "maintainer", "maintainers", "owner", "owners":
			return KindRole, strings.TrimSuffix(role, "s")
		}
		return "", ""
	case strings.HasPrefix(owner, "@"):
		path := owner[1:]
		for _, seg := range strings.Split(path, "/") {
			if !isPathSegment(seg) {
				return "", ""
			}
		}
		if strings.Contains(path, "/") {
			return KindGroup, path
		}
		return KindName, path
	case isEmail(owner):
		return KindEmail, owner
	}
	return "", ""
}

// isPathSegment: a user name or one segment of a group path (a letter,
// digit or _ then letters, digits, _, . and -).
func isPathSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		word := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
		if !word && (i == 0 || c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// isEmail is GitLab's loose test: one @ with 1–100 bytes before it and
// 1–255 after, no whitespace, ending in a letter, digit or _.
func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at < 1 || at > 100 || len(s)-at-1 < 1 || len(s)-at-1 > 255 || strings.IndexByte(s[at+1:], '@') >= 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) || s[i] == '\n' {
			return false
		}
	}
	c := s[len(s)-1]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
