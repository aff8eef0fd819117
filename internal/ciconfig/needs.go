package ciconfig

// decodeNeeds reads needs: at loc: job names, {job, artifacts,
// optional}, and (where cross is true) {pipeline, job, artifacts} to
// take artifacts from another pipeline (a child's parent, usually).
// needs: [] is an empty list, not nil.
func decodeNeeds(loc string, v any, cross bool) ([]Need, error) {
	switch v := v.(type) {
	case *mapping:
		if v.len() == 0 {
			return nil, entryError(loc, "config can not be an empty Hash")
		}
	case []any:
	default:
		return nil, entryError(loc, "config can only be a Hash or an Array")
	}
	out := []Need{}
	for _, e := range flatten([]any{v}, nil) {
		n, err := decodeNeed(loc+":need", e)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	for _, n := range out {
		if n.Pipeline != "" && !cross {
			return nil, entryError(loc, "config uses invalid types: cross_dependency")
		}
	}
	return out, nil
}

func decodeNeed(loc string, v any) (Need, error) {
	n := Need{Artifacts: true}
	m, isMap := v.(*mapping)
	switch {
	case isString(v):
		if blank(v) {
			return n, entryError(loc, "config can't be blank")
		}
		n.Job = v.(string)
		return n, nil
	case !isMap || !m.has("job") || m.has("project") || m.has("ref"):
		return n, configError("%s has an unsupported type", loc)
	}
	keys := []string{"job", "artifacts", "optional"}
	if m.has("pipeline") {
		keys = []string{"pipeline", "job", "artifacts"}
	}
	if err := allowedKeys(loc, m, keys...); err != nil {
		return n, err
	}
	for _, k := range []string{"pipeline", "job"} {
		if x, ok := m.get(k); ok || k == "job" {
			s, err := stringValue(loc, k, x)
			if err != nil {
				return n, err
			}
			if blank(s) {
				return n, entryError(loc, k+" can't be blank")
			}
			if k == "job" {
				n.Job = s
			} else {
				n.Pipeline = s
			}
		}
	}
	for _, k := range []string{"artifacts", "optional"} {
		if x, _ := m.get(k); x != nil {
			b, err := boolean(loc, k, x)
			if err != nil {
				return n, err
			}
			if k == "artifacts" {
				n.Artifacts = b
			} else {
				n.Optional = b
			}
		}
	}
	return n, nil
}
