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
// entry matches, or the deciding entries clear ownership.
func (f File) OwnersFor(paths []string) []SectionOwners {
	var out []SectionOwners
	for _, s := range f.Sections {
		matchers := make([]*matcher, len(s.Entries))
		for i, e := range s.Entries {
			matchers[i] = compile(e.Pattern)
		}
		so := SectionOwners{Section: s.Name, Optional: s.Optional, ApprovalsRequired: s.ApprovalsRequired}
		for _, path := range paths {
			for i := len(s.Entries) - 1; i >= 0; i-- {
				if !matchers[i].match(path) {
					continue
				}
				e := s.Entries[i]
				so.Owners = appendOwners(so.Owners, e.Owners...)
				if !contains(so.Patterns, e.Pattern) {
					so.Patterns = append(so.Patterns, e.Pattern)
				}
				break
			}
		}
		if len(so.Owners) > 0 {
			out = append(out, so)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
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
