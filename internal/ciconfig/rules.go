package ciconfig

import (
	"slices"
	"strconv"
)

// What a job's rules and workflow:rules may say.
var (
	jobRuleWhen      = []string{"on_success", "on_failure", "always", "never", "manual", "delayed"}
	jobRuleKeys      = []string{"if", "changes", "exists", "when", "start_in", "allow_failure", "variables", "needs", "interruptible"}
	workflowRuleWhen = []string{"always", "never"}
	workflowRuleKeys = []string{"if", "changes", "exists", "when", "start_in", "allow_failure", "variables", "needs", "auto_cancel"}
)

// maxRulePaths bounds the paths of changes: and exists:.
const maxRulePaths = 50

// decodeRules reads a rules: list at loc (nested lists, which !reference
// makes, are flattened).
func decodeRules(loc string, v any, when, keys []string) ([]Rule, error) {
	if blank(v) {
		return nil, entryError(loc, "config can't be blank")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, entryError(loc, "config should be a array")
	}
	rules := []Rule{}
	for _, e := range flatten(list, nil) {
		if e == nil {
			continue
		}
		r, err := decodeRule(loc+":rule", e, when, keys)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func flatten(l []any, out []any) []any {
	for _, e := range l {
		if sub, ok := e.([]any); ok {
			out = flatten(sub, out)
		} else {
			out = append(out, e)
		}
	}
	return out
}

func decodeRule(loc string, v any, allowedWhen, keys []string) (Rule, error) {
	var r Rule
	if blank(v) {
		return r, entryError(loc, "config can't be blank")
	}
	m, ok := v.(*mapping)
	if !ok {
		return r, entryError(loc, "config should be a hash")
	}
	when, _ := m.get("when")
	startIn, hasStartIn := m.get("start_in")
	if when == "delayed" {
		if blank(startIn) {
			return r, entryError(loc, "start in can't be blank")
		}
		if _, err := duration(loc, "start in", startIn, maxStartIn); err != nil {
			return r, err
		}
		r.StartIn = startIn.(string)
	} else if hasStartIn && startIn != nil {
		return r, entryError(loc, "config contains disallowed keys: start_in")
	}
	if cond, _ := m.get("if"); cond != nil {
		s, _ := cond.(string)
		e, err := ParseExpression(s)
		if err != nil {
			return r, entryError(loc, "if invalid expression syntax")
		}
		r.If, r.expr = s, e
	}
	if af, _ := m.get("allow_failure"); af != nil {
		b, err := boolean(loc, "allow failure", af)
		if err != nil {
			return r, err
		}
		r.AllowFailure = &b
	}
	if in, _ := m.get("interruptible"); in != nil {
		b, err := boolean(loc, "interruptible", in)
		if err != nil {
			return r, err
		}
		r.Interruptible = &b
	}
	if when != nil {
		s := rubyString(when)
		if !slices.Contains(allowedWhen, s) {
			return r, entryError(loc, "when unknown value: "+s)
		}
		r.When = s
	}
	if err := allowedKeys(loc, m, keys...); err != nil {
		return r, err
	}
	if c, _ := m.get("changes"); c != nil {
		if err := r.decodeChanges(loc+":changes", c); err != nil {
			return r, err
		}
	}
	if ex, _ := m.get("exists"); ex != nil {
		paths, err := decodeExists(loc+":exists", ex)
		if err != nil {
			return r, err
		}
		r.Exists = paths
	}
	var err error
	if vars, _ := m.get("variables"); vars != nil {
		if r.Variables, err = decodeVariables(loc+":variables", vars, nil); err != nil {
			return r, err
		}
	}
	if needs, ok := m.get("needs"); ok && needs != nil {
		if r.Needs, err = decodeNeeds(loc+":needs", needs, false); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r *Rule) decodeChanges(loc string, v any) error {
	switch c := v.(type) {
	case []any:
		paths, ok := stringList(c)
		switch {
		case !ok:
			return entryError(loc, "config should be an array of strings")
		case len(paths) > maxRulePaths:
			return entryError(loc, "config has too many entries (maximum "+strconv.Itoa(maxRulePaths)+")")
		}
		r.Changes = paths
	case *mapping:
		if err := allowedKeys(loc, c, "paths", "compare_to"); err != nil {
			return err
		}
		if err := missingKeys(loc, c, "paths"); err != nil {
			return err
		}
		paths, ok := stringList(c.vals["paths"])
		switch {
		case !ok:
			return entryError(loc, "paths should be an array of strings")
		case len(paths) > maxRulePaths:
			return entryError(loc, "paths has too many entries (maximum "+strconv.Itoa(maxRulePaths)+")")
		}
		r.Changes = paths
		if to, _ := c.get("compare_to"); to != nil {
			s, err := stringValue(loc, "compare to", to)
			if err != nil {
				return err
			}
			r.CompareTo = s
		}
	default:
		return configError("%s should be an array or a hash", loc)
	}
	return nil
}

func decodeExists(loc string, v any) ([]string, error) {
	if m, ok := v.(*mapping); ok && m.len() > 0 {
		if err := allowedKeys(loc, m, "paths", "project", "ref"); err != nil {
			return nil, err
		}
		if err := missingKeys(loc, m, "paths"); err != nil {
			return nil, err
		}
		if m.has("ref") {
			if err := missingKeys(loc, m, "project"); err != nil {
				return nil, err
			}
		}
		paths, ok := stringList(m.vals["paths"])
		switch {
		case !ok && m.vals["paths"] != nil:
			return nil, entryError(loc, "paths should be an array of strings")
		case len(paths) > maxRulePaths:
			return nil, entryError(loc, "paths has too many entries (maximum "+strconv.Itoa(maxRulePaths)+")")
		}
		for _, k := range []string{"project", "ref"} {
			if x, _ := m.get(k); x != nil {
				if _, err := stringValue(loc, k, x); err != nil {
					return nil, err
				}
			}
		}
		return paths, nil
	}
	switch e := v.(type) {
	case string:
		return []string{e}, nil
	case []any:
		paths, ok := stringList(e)
		switch {
		case !ok:
			return nil, entryError(loc, "config should be an array of strings")
		case len(paths) > maxRulePaths:
			return nil, entryError(loc, "config has too many entries (maximum "+strconv.Itoa(maxRulePaths)+")")
		}
		return paths, nil
	}
	if blank(v) {
		return []string{}, nil
	}
	return nil, configError("%s should be a string, an array of strings, or a hash", loc)
}

func decodeWorkflow(v any) (Workflow, error) {
	var w Workflow
	if v == nil {
		return w, nil
	}
	m, ok := v.(*mapping)
	if !ok {
		return w, entryError("workflow", "config should be a hash")
	}
	if err := allowedKeys("workflow", m, "rules", "name", "auto_cancel"); err != nil {
		return w, err
	}
	if name, _ := m.get("name"); name != nil {
		s := rubyString(name)
		switch n := nameLength(s); {
		case n < 1:
			return w, entryError("workflow", "name is too short (minimum is 1 character)")
		case n > 255:
			return w, entryError("workflow", "name is too long (maximum is 255 characters)")
		}
		w.Name = s
	}
	if rules, ok := m.get("rules"); ok && rules != nil {
		r, err := decodeRules("workflow:rules", rules, workflowRuleWhen, workflowRuleKeys)
		if err != nil {
			return w, err
		}
		w.Rules = r
	}
	return w, nil
}

// rulesContext is what rules are evaluated against.
type rulesContext struct {
	in   *Input
	vars map[string]string // the variables expressions see
}

// match returns the first rule whose clauses hold, or nil.
func (c rulesContext) match(rules []Rule) *Rule {
	for i := range rules {
		if c.holds(&rules[i]) {
			return &rules[i]
		}
	}
	return nil
}

// holds reports whether each clause of a rule holds: if: is true,
// changes: names a changed path (always, when changes are not known),
// exists: names a file of the commit.
func (c rulesContext) holds(r *Rule) bool {
	if r.If != "" || r.expr != nil {
		e := r.expr
		if e == nil {
			var err error
			if e, err = ParseExpression(r.If); err != nil {
				return false
			}
		}
		if !e.Evaluate(c.vars) {
			return false
		}
	}
	if r.Changes != nil && !c.changed(r.Changes, true) {
		return false
	}
	if r.Exists != nil && !c.exists(r.Exists) {
		return false
	}
	return true
}

// changed reports whether a changed path matches one of the globs
// ($VARIABLES in them expanded when expand).
func (c rulesContext) changed(globs []string, expand bool) bool {
	if !c.in.ChangesKnown {
		return true
	}
	for _, g := range globs {
		if expand {
			g = expandVariables(g, c.vars, true)
		}
		for _, p := range c.in.Changes {
			if MatchGlob(g, p) {
				return true
			}
		}
	}
	return false
}

func (c rulesContext) exists(globs []string) bool {
	if c.in.Exists == nil {
		return false
	}
	for _, g := range globs {
		if c.in.Exists(expandVariables(g, c.vars, true)) {
			return true
		}
	}
	return false
}
