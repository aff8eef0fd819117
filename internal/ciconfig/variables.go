package ciconfig

import (
	"regexp"
	"slices"
	"strings"
)

// Hash keys a variable may have: global variables, job variables; rule
// and service variables must be scalars.
var (
	globalVariableData = []string{"value", "description", "expand", "options"}
	jobVariableData    = []string{"value", "expand"}
)

// decodeVariables reads a variables: hash at loc. A scalar value is the
// variable's value as Ruby writes it (numbers and booleans become
// strings); a hash may have the keys in data.
func decodeVariables(loc string, v any, data []string) ([]Variable, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(*mapping)
	if !ok {
		return nil, entryError(loc, "config should be a hash")
	}
	out := make([]Variable, 0, m.len())
	for _, k := range m.keys {
		vloc := loc + ":" + k
		switch val := m.vals[k].(type) {
		case string, int64, float64, bool:
			out = append(out, Variable{Key: k, Value: rubyString(val)})
		case nil:
			if data == nil {
				return nil, entryError(vloc, "config must be a string")
			}
			out = append(out, Variable{Key: k})
		case *mapping:
			variable, err := complexVariable(vloc, k, val, data)
			if err != nil {
				return nil, err
			}
			out = append(out, variable)
		default:
			return nil, configError("variable definition must be either a string or a hash")
		}
	}
	return out, nil
}

func complexVariable(loc, key string, m *mapping, data []string) (Variable, error) {
	v := Variable{Key: key}
	value, _ := m.get("value")
	desc, _ := m.get("description")
	expand, hasExpand := m.get("expand")
	options, _ := m.get("options")
	switch value.(type) {
	case nil, string, int64, float64, bool:
		v.Value = rubyString(value)
	default:
		return v, entryError(loc, "config value must be a scalar")
	}
	switch desc.(type) {
	case nil:
	case string, int64:
		v.Description = rubyString(desc)
	default:
		return v, entryError(loc, "config description must be an alphanumeric string")
	}
	if hasExpand && expand != nil {
		b, ok := expand.(bool)
		if !ok {
			return v, entryError(loc, "config expand should be a boolean value")
		}
		v.Raw = !b
	}
	if options != nil {
		opts, ok := stringList(options)
		if !ok {
			return v, entryError(loc, "config options should be an array of strings")
		}
		v.Options = opts
	}
	if data == nil {
		return v, entryError(loc, "config must be a string")
	}
	var extra []string
	for _, k := range m.keys {
		if !slices.Contains(data, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return v, entryError(loc, "config uses invalid data keys: "+strings.Join(extra, ", "))
	}
	if len(v.Options) > 0 && !slices.Contains(v.Options, v.Value) {
		return v, entryError(loc, "config value must be present in options")
	}
	return v, nil
}

// inheritance is a job's inherit: which default: keys and which global
// variables it takes.
type inheritance struct {
	allDefaults bool
	defaults    []string // when not allDefaults
	variables   []string // nil: all
}

func (in inheritance) inheritsDefault(key string) bool {
	return in.allDefaults || slices.Contains(in.defaults, key)
}

func decodeInherit(loc string, v any) (inheritance, error) {
	in := inheritance{allDefaults: true}
	if v == nil {
		return in, nil
	}
	m, ok := v.(*mapping)
	if !ok {
		return in, entryError(loc, "config should be a hash")
	}
	if err := allowedKeys(loc, m, "default", "variables"); err != nil {
		return in, err
	}
	if d, ok := m.get("default"); ok && d != nil {
		switch d := d.(type) {
		case bool:
			in.allDefaults = d
		case []any:
			keys, ok := stringList(d)
			if !ok {
				return in, entryError(loc+":default", "config should be an array of strings")
			}
			var unknown []string
			for _, k := range keys {
				if !slices.Contains(defaultKeys, k) {
					unknown = append(unknown, k)
				}
			}
			if len(unknown) > 0 {
				return in, entryError(loc+":default", "config contains unknown values: "+strings.Join(unknown, ", "))
			}
			in.allDefaults, in.defaults = false, keys
		default:
			return in, configError("%s:default should be a bool or array of strings", loc)
		}
	}
	if vs, ok := m.get("variables"); ok && vs != nil {
		switch vs := vs.(type) {
		case bool:
			if !vs {
				in.variables = []string{}
			}
		case []any:
			keys, ok := stringList(vs)
			if !ok {
				return in, entryError(loc+":variables", "config should be an array of strings")
			}
			in.variables = keys
		default:
			return in, configError("%s:variables should be a bool or array of strings", loc)
		}
	}
	return in, nil
}

var reVariableReference = regexp.MustCompile(`\$([a-zA-Z_][a-zA-Z0-9_]*)|\$\{([a-zA-Z_][a-zA-Z0-9_]*)\}|%([a-zA-Z_][a-zA-Z0-9_]*)%`)

// expandVariables replaces $VAR, ${VAR} and %VAR% in s by their values,
// as GitLab's ExpandVariables: an unknown variable becomes empty, or is
// left as written when keepUnknown (expand_existing).
func expandVariables(s string, vars map[string]string, keepUnknown bool) string {
	if !strings.ContainsAny(s, "$%") {
		return s
	}
	return reVariableReference.ReplaceAllStringFunc(s, func(ref string) string {
		m := reVariableReference.FindStringSubmatch(ref)
		if v, ok := vars[m[1]+m[2]+m[3]]; ok {
			return v
		}
		if keepUnknown {
			return ref
		}
		return ""
	})
}

// mergeVariables joins variable lists, a later key replacing an earlier
// one in its place (GitLab's merge_variables).
func mergeVariables(lists ...[]Variable) []Variable {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	out := make([]Variable, 0, n)
	// A few variables are found faster by a scan than through a map.
	var at map[string]int
	if n > 16 {
		at = make(map[string]int, n)
	}
	for _, l := range lists {
		for _, v := range l {
			i, ok := -1, false
			if at != nil {
				i, ok = at[v.Key]
			} else {
				i = slices.IndexFunc(out, func(o Variable) bool { return o.Key == v.Key })
				ok = i >= 0
			}
			if ok {
				out[i] = v
				continue
			}
			if at != nil {
				at[v.Key] = len(out)
			}
			out = append(out, v)
		}
	}
	return out
}

// Expand replaces $VAR, ${VAR} and %VAR% in s by their values in vars, as
// GitLab expands variables on the server (an unknown variable becomes
// empty).
func Expand(s string, vars map[string]string) string { return expandVariables(s, vars, false) }

// ExpandAll is Expand when every variable s names is in vars; ok is
// false (and s is returned as written) when one is not.
func ExpandAll(s string, vars map[string]string) (out string, ok bool) {
	for _, m := range reVariableReference.FindAllStringSubmatch(s, -1) {
		if _, known := vars[m[1]+m[2]+m[3]]; !known {
			return s, false
		}
	}
	return expandVariables(s, vars, false), true
}
