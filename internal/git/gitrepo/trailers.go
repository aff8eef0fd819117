package gitrepo

import "strings"

// ParseTrailers reads the trailers of a commit message ("Key: value" lines
// of its last paragraph, as git interpret-trailers finds them): values by
// key in order of appearance. A line starting with whitespace continues
// the previous value. A message whose last paragraph holds other lines,
// or that has only one paragraph, has no trailers.
func ParseTrailers(msg string) map[string][]string {
	out := map[string][]string{}
	paras := strings.Split(strings.TrimSpace(strings.ReplaceAll(msg, "\r\n", "\n")), "\n\n")
	if len(paras) < 2 {
		return out
	}
	var lastKey string
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		if lastKey != "" && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			vals := out[lastKey]
			vals[len(vals)-1] += " " + strings.TrimSpace(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !isTrailerKey(k) {
			return map[string][]string{}
		}
		out[k] = append(out[k], strings.TrimSpace(v))
		lastKey = k
	}
	return out
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
