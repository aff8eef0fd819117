package ciconfig

import "strings"

// maxReferenceNesting bounds !reference tags resolved through others
// (GitLab documents 10 levels).
const maxReferenceNesting = 10

// resolver replaces !reference tags, after extends as in GitLab, by the
// value at their path in the configuration (itself resolved). Paths
// never go through a tag, a list or a scalar. Each mapping and list is
// resolved once and each path once; the result shares what has no tag.
type resolver struct {
	root  *mapping
	b     *budget
	maps  map[*mapping]*mapping
	lists map[*any][]any
	paths map[string]any
	stack []string
}

func (l *loader) resolveReferences(root *mapping) (*mapping, error) {
	r := &resolver{root: root, b: &l.budget, maps: map[*mapping]*mapping{}, lists: map[*any][]any{}, paths: map[string]any{}}
	return r.mapping(root)
}

func (r *resolver) value(v any) (any, error) {
	switch v := v.(type) {
	case *reference:
		return r.reference(v)
	case *mapping:
		return r.mapping(v)
	case []any:
		return r.list(v)
	}
	return v, nil
}

func (r *resolver) mapping(m *mapping) (*mapping, error) {
	if out, ok := r.maps[m]; ok {
		return out, nil
	}
	if err := r.b.spend(m.len()); err != nil {
		return nil, err
	}
	out := m
	for _, k := range m.keys {
		v, err := r.value(m.vals[k])
		if err != nil {
			return nil, err
		}
		if !same(v, m.vals[k]) {
			if out == m {
				out = m.clone(0)
			}
			out.vals[k] = v
		}
	}
	r.maps[m] = out
	return out, nil
}

func (r *resolver) list(s []any) ([]any, error) {
	if len(s) == 0 {
		return s, nil
	}
	if out, ok := r.lists[&s[0]]; ok && len(out) == len(s) {
		return out, nil
	}
	if err := r.b.spend(len(s)); err != nil {
		return nil, err
	}
	out := s
	for i, e := range s {
		v, err := r.value(e)
		if err != nil {
			return nil, err
		}
		if !same(v, e) {
			if &out[0] == &s[0] {
				out = append([]any(nil), s...)
			}
			out[i] = v
		}
	}
	r.lists[&s[0]] = out
	return out, nil
}

// same reports whether resolving left a value as it was (values that
// are not comparable, lists, are new when they differ).
func same(a, b any) bool {
	switch a := a.(type) {
	case []any:
		bs, ok := b.([]any)
		return ok && len(a) == len(bs) && (len(a) == 0 || &a[0] == &bs[0])
	case float64:
		bf, ok := b.(float64)
		return ok && (a == bf || a != a && bf != bf) // NaN is itself
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return a == b
}

func (r *resolver) reference(ref *reference) (any, error) {
	tag := "!reference " + rubyInspect(ref.content)
	if ref.path == nil {
		return nil, configError("!reference %s is not valid", invalidReference(ref.content))
	}
	key := strings.Join(ref.path, "\x00")
	if v, ok := r.paths[key]; ok {
		return v, nil
	}
	for _, open := range r.stack {
		if open == key {
			return nil, configError("%s is part of a circular chain", tag)
		}
	}
	if len(r.stack) >= maxReferenceNesting {
		return nil, configError("%s is nested too deeply (maximum is %d levels)", tag, maxReferenceNesting)
	}
	var found any = r.root
	for _, step := range ref.path {
		m, ok := found.(*mapping)
		if !ok {
			return nil, configError("%s could not be found", tag)
		}
		found, _ = m.get(step)
	}
	r.stack = append(r.stack, key)
	v, err := r.value(found)
	r.stack = r.stack[:len(r.stack)-1]
	if err != nil {
		return nil, err
	}
	if v == nil || v == false {
		return nil, configError("%s could not be found", tag)
	}
	r.paths[key] = v
	return v, nil
}

// invalidReference is what GitLab quotes of a tag that is not a list of
// strings: its scalar or mapping when not blank, else its list.
func invalidReference(content any) string {
	switch c := content.(type) {
	case string:
		if !blank(c) {
			return rubyInspect(c)
		}
		return "nil"
	case *mapping:
		if c.len() > 0 {
			return rubyInspect(c)
		}
		return "nil"
	}
	return rubyInspect(content)
}
