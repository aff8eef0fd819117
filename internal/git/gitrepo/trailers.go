package gitrepo

import "strings"

// ParseTrailers reads the trailers of a commit message ("Key: value" lines
// of its last paragraph, as git interpret-trailers finds them): values by
// key in order of appearance. Paragraphs are separated by blank lines
// (empty or whitespace only). A line starting with whitespace continues
// the previous value; the pieces are joined by single spaces, as git's
// unfolding does. A message whose last paragraph holds other lines, or
// that has only one paragraph, has no trailers.
//
// Keys are letters, digits and '-'; values hold no line break and no
// leading or trailing whitespace. The work and the result are linear in
// the size of msg.
func ParseTrailers(msg string) map[string][]string {
	out := map[string][]string{}
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	end := len(lines)
	for end > 0 && blank(lines[end-1]) {
		end--
	}
	start := end
	for start > 0 && !blank(lines[start-1]) {
		start--
	}
	if start == end || !hasText(lines[:start]) {
		return out
	}
	type trailer struct {
		key   string
		parts []string
	}
	var found []trailer
	for _, line := range lines[start:end] {
		if len(found) > 0 && (line[0] == ' ' || line[0] == '\t') {
			last := &found[len(found)-1]
			last.parts = append(last.parts, strings.TrimSpace(line))
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !isTrailerKey(k) {
			return out
		}
		tr := trailer{key: k}
		if v = strings.TrimSpace(v); v != "" {
			tr.parts = []string{v}
		}
		found = append(found, tr)
	}
	for _, tr := range found {
		out[tr.key] = append(out[tr.key], strings.Join(tr.parts, " "))
	}
	return out
}

// blank reports a line that separates paragraphs.
func blank(line string) bool { return strings.TrimSpace(line) == "" }

func hasText(lines []string) bool {
	for _, l := range lines {
		if !blank(l) {
			return true
		}
	}
	return false
}

func isTrailerKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
