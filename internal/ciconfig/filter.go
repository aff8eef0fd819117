package ciconfig

import "strings"

// defaultOnly is the only: of a job with neither rules: nor only:, when
// the configuration has no workflow:rules.
var defaultOnly = Filter{Refs: []string{"branches", "tags"}}

// decodeFilter reads only: or except: at loc: a list of refs, or a hash
// of refs, variables, changes and kubernetes.
func decodeFilter(loc string, v any) (*Filter, error) {
	switch v := v.(type) {
	case []any:
		refs, err := refPatterns(loc, "config", v)
		if err != nil {
			return nil, err
		}
		return &Filter{Refs: refs}, nil
	case *mapping:
		if v.len() == 0 {
			return nil, entryError(loc, "config can't be blank")
		}
		if err := allowedKeys(loc, v, "refs", "kubernetes", "variables", "changes"); err != nil {
			return nil, err
		}
		f := &Filter{}
		vars, _ := v.get("variables")
		if l, ok := vars.([]any); ok {
			for _, s := range l {
				str, _ := s.(string)
				e, err := ParseExpression(str)
				if err != nil {
					return nil, entryError(loc, "variables invalid expression syntax")
				}
				f.exprs = append(f.exprs, e)
			}
		}
		if refs, _ := v.get("refs"); refs != nil {
			var err error
			if f.Refs, err = refPatterns(loc, "refs", refs); err != nil {
				return nil, err
			}
		}
		if k, _ := v.get("kubernetes"); k != nil {
			if k != "active" {
				return nil, entryError(loc, "kubernetes unknown value: "+rubyString(k))
			}
			f.Kubernetes = "active"
		}
		if vars != nil {
			l, ok := stringList(vars)
			if !ok {
				return nil, entryError(loc, "variables should be an array of strings")
			}
			f.Variables = l
		}
		if c, _ := v.get("changes"); c != nil {
			l, ok := stringList(c)
			if !ok {
				return nil, entryError(loc, "changes should be an array of strings")
			}
			f.Changes = l
		}
		return f, nil
	}
	return nil, configError("%s has to be either an array of conditions or a hash", loc)
}

// refPatterns is a list of ref names, keywords and /regexps/ (RE2).
func refPatterns(loc, attr string, v any) ([]string, error) {
	l, ok := stringList(v)
	if ok {
		for _, p := range l {
			if reRubySyntax.MatchString(p) {
				if _, err := rubyRegexp(p); err != nil {
					ok = false
				}
			}
		}
	}
	if !ok {
		return nil, entryError(loc, attr+" should be an array of strings or regular expressions using re2 syntax")
	}
	return l, nil
}

// clauses reports whether each clause of the filter holds (only: needs
// all of them, except: none): refs, variables (any expression true),
// changes and kubernetes (Quarry has no Kubernetes integration, so
// kubernetes: active never holds).
func (f *Filter) clauses(c rulesContext) []bool {
	var out []bool
	if f.Refs != nil {
		out = append(out, c.refsMatch(f.Refs))
	}
	if f.Variables != nil {
		ok := false
		for i, s := range f.Variables {
			var e *Expression
			if i < len(f.exprs) {
				e = f.exprs[i]
			} else { // a Filter not made by Load
				e, _ = ParseExpression(s)
			}
			if e != nil && e.Evaluate(c.vars) {
				ok = true
				break
			}
		}
		out = append(out, ok)
	}
	if f.Changes != nil {
		out = append(out, c.changed(f.Changes, false))
	}
	if f.Kubernetes != "" {
		out = append(out, false)
	}
	return out
}

// refsMatch is GitLab's refs policy: a keyword naming the pipeline's
// kind or source (branches, tags, pushes, web, api, triggers,
// schedules, pipelines, merge_requests, …: the source without _event,
// singular or plural), a /regexp/ or a name matched against a branch or
// tag, each optionally @project/path.
func (c rulesContext) refsMatch(patterns []string) bool {
	source := strings.TrimSuffix(c.in.Source, "_event")
	branch := !c.in.Tag && c.in.Ref != "" && source != "merge_request"
	for _, pattern := range patterns {
		pattern, path, hasPath := strings.Cut(pattern, "@")
		if hasPath && path != c.in.ProjectPath {
			continue
		}
		switch {
		case c.in.Tag && pattern == "tags", branch && pattern == "branches":
			return true
		case source != "" && (pattern == source || pattern == pluralize(source)):
			return true
		case branch || c.in.Tag:
			if reRubySyntax.MatchString(pattern) {
				if re, err := rubyRegexp(pattern); err == nil {
					if re.MatchString(c.in.Ref) {
						return true
					}
					continue
				}
			}
			if pattern == c.in.Ref {
				return true
			}
		}
	}
	return false
}

// pluralize is ActiveSupport's for the pipeline sources.
func pluralize(s string) string {
	for _, suffix := range []string{"s", "sh", "ch", "x", "z"} {
		if strings.HasSuffix(s, suffix) {
			return s + "es"
		}
	}
	return s + "s"
}
