package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// expand replaces $NAME and ${NAME} in s by lookup(NAME) (empty when
// lookup knows no such name) and "$$" by "$", as gitlab-runner expands
// variable values. A "$" followed by anything else stays as it is.
func expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case c == '$':
			b.WriteByte('$')
			i++
		case c == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 || !validName(s[i+2:i+2+end]) {
				b.WriteByte('$')
				continue
			}
			v, _ := lookup(s[i+2 : i+2+end])
			b.WriteString(v)
			i += 2 + end
		case nameStart(c):
			j := i + 2
			for j < len(s) && nameChar(s[j]) {
				j++
			}
			v, _ := lookup(s[i+1 : j])
			b.WriteString(v)
			i = j - 1
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func nameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func nameChar(c byte) bool { return nameStart(c) || c >= '0' && c <= '9' }

func validName(s string) bool {
	if s == "" || !nameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !nameChar(s[i]) {
			return false
		}
	}
	return true
}

// resolveVariables gives the job's variables their final values, in order:
// a value that is not raw has $VAR and ${VAR} expanded from the variables
// before it (the latest definition of a name wins; an unknown name is
// empty); a file variable's (expanded) value is written to a file in
// fileDir, whose path becomes its value. It returns one KEY=VALUE per name,
// in the order names first appear, with the latest value.
func resolveVariables(vars []variable, fileDir string) ([]string, error) {
	values := map[string]string{}
	var order []string
	lookup := func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}
	for _, v := range vars {
		if v.Key == "" || strings.ContainsAny(v.Key, "=\x00") {
			continue // not expressible in an environment
		}
		value := v.Value
		if !v.Raw {
			value = expand(value, lookup)
		}
		if v.File {
			path := filepath.Join(fileDir, fileVarName(v.Key))
			if err := os.WriteFile(path, []byte(value), 0o600); err != nil {
				return nil, fmt.Errorf("file variable %s: %w", v.Key, err)
			}
			value = path
		}
		if _, ok := values[v.Key]; !ok {
			order = append(order, v.Key)
		}
		values[v.Key] = value
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+strings.ReplaceAll(values[k], "\x00", ""))
	}
	return env, nil
}

// fileVarName is the file name of a file variable: its key with anything
// but letters, digits, "_", "-" and "." replaced, never a dot-only name.
func fileVarName(key string) string {
	b := []byte(key)
	for i, c := range b {
		if !nameChar(c) && c != '-' && c != '.' {
			b[i] = '_'
		}
	}
	s := string(b)
	if strings.Trim(s, ".") == "" {
		s = "_" + s
	}
	return s
}

// inheritedEnv is the environment scripts start from, as gitlab-runner's
// shell executor does: the runner's own, without Quarry's settings
// (QUARRY_*: they may hold secrets of a server that runs the runner in
// process) and without git's repository selection.
func inheritedEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "QUARRY_"),
			k == "GIT_DIR", k == "GIT_WORK_TREE", k == "GIT_INDEX_FILE", k == "GIT_OBJECT_DIRECTORY":
			continue
		}
		out = append(out, kv)
	}
	return out
}
