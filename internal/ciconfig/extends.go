package ciconfig

import "strings"

// maxExtendsNesting is GitLab's Extendable::Entry::MAX_NESTING_LEVELS:
// an entry reached through more than 10 others may not extend further.
const maxExtendsNesting = 10

// extender resolves extends: for every top-level hash that has the key,
// as GitLab's Extendable does: its bases extended first, deep-merged in
// order, the entry itself on top (hashes merged, arrays replaced, the
// entry wins). Results are kept per key, with the height of the chain
// below each, so that a base used by many jobs is merged once and the
// nesting limit is still checked from every place it is reached.
type extender struct {
	root   *mapping
	done   map[string]*mapping
	height map[string]int
	b      *budget
}

func (l *loader) extend(root *mapping) (*mapping, error) {
	x := &extender{root: root, done: map[string]*mapping{}, height: map[string]int{}, b: &l.budget}
	out := root.clone(0)
	for _, k := range root.keys {
		if !extensible(root.vals[k]) {
			continue
		}
		v, err := x.entry(k, nil)
		if err != nil {
			return nil, err
		}
		out.vals[k] = v
	}
	return out, nil
}

func extensible(v any) bool {
	m, ok := v.(*mapping)
	return ok && m.has("extends")
}

// entry extends key, reached through ancestors.
func (x *extender) entry(key string, ancestors []string) (*mapping, error) {
	value := x.root.vals[key].(*mapping)
	if v, ok := x.done[key]; ok && len(ancestors)+x.height[key] <= maxExtendsNesting {
		return v, nil
	}
	bases := extendsNames(value.vals["extends"])
	var unknown, invalid []string
	for _, b := range bases {
		v, ok := x.root.get(b)
		if !ok {
			unknown = append(unknown, b)
		} else if _, isMap := v.(*mapping); !isMap {
			invalid = append(invalid, b)
		}
	}
	switch {
	case len(unknown) > 0:
		return nil, configError("%s: unknown keys in `extends` (%s)", key, strings.Join(unknown, ", "))
	case len(invalid) > 0:
		return nil, configError("%s: invalid base hashes in `extends` (%s)", key, strings.Join(invalid, ", "))
	case len(ancestors) > maxExtendsNesting:
		return nil, configError("%s: nesting too deep in `extends`", key)
	}
	for _, a := range ancestors {
		if a == key {
			return nil, configError("%s: circular dependency detected in `extends`", key)
		}
	}
	merged, height := newMapping(0), 0
	for _, b := range bases {
		base := x.root.vals[b].(*mapping)
		if extensible(base) {
			var err error
			if base, err = x.entry(b, append(ancestors[:len(ancestors):len(ancestors)], key)); err != nil {
				return nil, err
			}
			height = max(height, x.height[b]+1)
		}
		var err error
		if merged, err = deepMerge(merged, base, x.b); err != nil {
			return nil, err
		}
	}
	out, err := deepMerge(merged, value, x.b)
	if err != nil {
		return nil, err
	}
	x.done[key], x.height[key] = out, height
	return out, nil
}

// extendsNames is Ruby's Array(extends).map(&:to_s).
func extendsNames(v any) []string {
	var out []string
	switch v := v.(type) {
	case nil:
	case []any:
		for _, e := range v {
			out = append(out, rubyString(e))
		}
	case *mapping:
		for _, k := range v.keys {
			out = append(out, rubyInspect([]any{k, v.vals[k]}))
		}
	default:
		out = append(out, rubyString(v))
	}
	return out
}
