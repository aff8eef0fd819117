package ciconfig

// maxTriggerIncludes is GitLab's INCLUDE_MAX_SIZE of trigger:include.
const maxTriggerIncludes = 3

// decodeTrigger reads trigger: at loc: a project path (multi-project
// pipeline), {project, branch, strategy, forward}, or {include,
// strategy, forward} (a child pipeline of local files; Quarry cannot
// fetch others).
func decodeTrigger(loc string, v any) (*Trigger, error) {
	t := &Trigger{ForwardYAMLVariables: true}
	switch v := v.(type) {
	case string:
		if blank(v) {
			return nil, entryError(loc, "config can't be blank")
		}
		t.Project = v
		return t, nil
	case *mapping:
		if v.len() == 0 {
			return nil, entryError(loc, "config can't be blank")
		}
		child := v.has("include")
		allowed := []string{"project", "branch", "strategy", "forward"}
		if child {
			allowed = []string{"strategy", "include", "forward"}
		}
		if err := allowedKeys(loc, v, allowed...); err != nil {
			return nil, err
		}
		if !child {
			p, _ := v.get("project")
			s, err := stringValue(loc, "project", p)
			if err == nil && blank(s) {
				err = entryError(loc, "project can't be blank")
			}
			if err != nil {
				return nil, err
			}
			t.Project = s
			if b, _ := v.get("branch"); b != nil {
				if t.Branch, err = stringValue(loc, "branch", b); err != nil {
					return nil, err
				}
			}
		}
		if s, _ := v.get("strategy"); s != nil {
			strategy, err := stringValue(loc, "strategy", s)
			if err == nil && strategy != "depend" {
				err = entryError(loc, "strategy should be depend")
			}
			if err != nil {
				return nil, err
			}
			t.Strategy = strategy
		}
		if child {
			paths, err := triggerIncludes(loc+":include", v.vals["include"])
			if err != nil {
				return nil, err
			}
			t.Include = paths
		}
		if f, ok := v.vals["forward"].(*mapping); ok {
			if err := allowedKeys(loc+":forward", f, "yaml_variables", "pipeline_variables"); err != nil {
				return nil, err
			}
			for _, k := range []string{"yaml_variables", "pipeline_variables"} {
				if x, _ := f.get(k); x != nil {
					b, err := boolean(loc+":forward", humanize(k), x)
					if err != nil {
						return nil, err
					}
					if k == "yaml_variables" {
						t.ForwardYAMLVariables = b
					} else {
						t.ForwardPipelineVariables = b
					}
				}
			}
		}
		return t, nil
	}
	return nil, configError("%s has to be either a string or a hash", loc)
}

// triggerIncludes are the local files of trigger:include: paths or
// {local: path}, at most three.
func triggerIncludes(loc string, v any) ([]string, error) {
	var list []any
	switch v := v.(type) {
	case string:
		list = []any{v}
	case []any:
		list = v
	default:
		return nil, entryError(loc, "config should be an array or a string")
	}
	if len(list) > maxTriggerIncludes {
		return nil, entryError(loc, "config is too long (maximum is 3 characters)")
	}
	paths := []string{}
	for _, e := range list {
		switch e := e.(type) {
		case string:
			paths = append(paths, e)
			continue
		case *mapping:
			if err := allowedKeys(loc+":include", e, "local", "file", "remote", "template", "component", "artifact", "inputs", "job", "project", "ref", "rules"); err != nil {
				return nil, err
			}
			if p, ok := e.vals["local"].(string); ok && e.len() == 1 {
				paths = append(paths, p)
				continue
			}
		default:
			return nil, entryError(loc+":include", "config should be a hash or a string")
		}
		return nil, entryError(loc, "config can only include local files of the project")
	}
	return paths, nil
}
