package ciconfig

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Include bounds: GitLab's ci_max_includes, and a bound on the bytes of
// all included files together (each inclusion counted, as GitLab does).
const (
	maxIncludes     = 150
	totalBytesRatio = 10 // times Options.MaxBytes
)

// includeKinds are GitLab's include subkeys, in the order its messages
// list them.
var includeKinds = []string{"local", "project", "remote", "template", "artifact", "component"}

// includedFile is one entry of an include: list on its way through
// GitLab's verifier: its kind, where it points, and the first error.
type includedFile struct {
	kind     string
	params   *mapping
	location any // params[kind]; for local without leading slashes
	err      *Error
	value    *mapping // the file's content, its own includes expanded
}

// expandIncludes merges the files a mapping's include: names under it,
// as GitLab's External::Processor does: each file (its own includes
// expanded first) deep-merged in order, then the mapping itself on top.
// Errors found while checking the files of one level are reported after
// the level; a nested file's error and the include limit stop at once.
func (l *loader) expandIncludes(values *mapping) (*mapping, error) {
	raw, ok := values.get("include")
	if !ok {
		return values, nil
	}
	var locations []any
	for _, v := range arrayWrap(raw) {
		if v != nil {
			locations = append(locations, v)
		}
	}
	if len(locations) == 0 {
		return values.without("include"), nil
	}
	files, err := l.matchIncludes(locations)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if l.includes++; l.includes > maxIncludes {
			return nil, configError("Maximum of %d nested includes are allowed!", maxIncludes)
		}
		f.validateLocation()
	}
	for _, f := range files {
		if f.err == nil {
			if err := l.fetch(f); err != nil {
				return nil, err
			}
		}
	}
	content := newMapping(0)
	for _, f := range files {
		if f.err != nil {
			return nil, f.err
		}
		if content, err = deepMerge(content, f.value, &l.budget); err != nil {
			return nil, err
		}
	}
	content, err = deepMerge(content, values, &l.budget)
	if err != nil {
		return nil, err
	}
	return content.without("include"), nil
}

// matchIncludes normalizes include entries (a string is a local path,
// or a remote one when it is a URL), drops those whose rules: exclude
// them, expands variables in locations, and finds each entry's kind.
func (l *loader) matchIncludes(locations []any) ([]*includedFile, error) {
	var files []*includedFile
	for _, loc := range locations {
		var params *mapping
		switch loc := loc.(type) {
		case string:
			s := expandVariables(loc, l.opts.Variables, false)
			kind := "local"
			if isURL(s) {
				kind = "remote"
			}
			params = newMapping(1)
			params.set(kind, s)
		case *mapping:
			params = loc
		default:
			return nil, configError("Each include must be a hash or a string")
		}
		pass, err := l.includeRulesPass(params)
		if err != nil {
			return nil, err
		}
		if !pass {
			continue
		}
		var kinds []string
		for _, k := range includeKinds {
			if v, _ := params.get(k); !blank(v) && k != "artifact" { // artifacts exist only for child pipelines
				kinds = append(kinds, k)
			}
		}
		switch len(kinds) {
		case 0:
			return nil, configError("`%s` does not have a valid subkey for include. Valid subkeys are: `%s`",
				toJSON(params), strings.Join(includeKinds, "`, `"))
		case 1:
		default:
			return nil, configError("Each include must use only one of: `%s`", strings.Join(includeKinds, "`, `"))
		}
		f := &includedFile{kind: kinds[0], params: params}
		f.location, _ = params.get(f.kind)
		if s, ok := f.location.(string); ok {
			s = expandVariables(s, l.opts.Variables, false)
			if f.kind == "local" {
				s = strings.TrimLeft(s, "/")
			}
			f.location = s
		}
		files = append(files, f)
	}
	return files, nil
}

var yamlExtension = regexp.MustCompile(`(?i).+\.(yml|yaml)$`)

func (f *includedFile) validateLocation() {
	s, ok := f.location.(string)
	switch {
	case f.kind != "local" && f.kind != "remote":
	case !ok:
		f.err = configError("Included file `%s` needs to be a string", rubyString(f.location))
	case !yamlExtension.MatchString(path.Base(s)):
		f.err = configError("Included file `%s` does not have YAML extension!", s)
	case f.kind == "remote" && !isURL(s):
		f.err = configError("Remote file `%s` does not have a valid address!", s)
	}
}

// fetch reads, parses and expands one included file. Quarry reads local
// files only; the other kinds fail as an unreachable file does.
func (l *loader) fetch(f *includedFile) error {
	loc := rubyString(f.location)
	if f.kind != "local" {
		what := map[string]string{"project": "Project file", "remote": "Remote file", "template": "Template file", "component": "Component"}[f.kind]
		if f.kind == "project" {
			loc += ":" + rubyString(f.params.vals["file"])
		}
		f.err = configError("%s `%s` could not be fetched because %s includes are not supported!", what, loc, f.kind)
		return nil
	}
	value, ok := l.files[loc]
	if !ok {
		var data []byte
		found := false
		if l.opts.Include != nil {
			var err error
			if data, found, err = l.opts.Include(loc); err != nil {
				return fmt.Errorf("read included file %q: %w", loc, err)
			}
		}
		switch {
		case !found:
			f.err = configError("Local file `%s` does not exist!", loc)
			return nil
		case strings.TrimSpace(string(data)) == "":
			f.err = configError("Local file `%s` is empty!", loc)
			return nil
		case len(data) > l.maxBytes():
			f.err = configError("`%s`: %s", loc, msgTooBig)
			return nil
		}
		v, err := parseYAML(data)
		if err != nil {
			f.err = configError("`%s`: %s", loc, err.(*Error).Message)
			return nil
		}
		m, isMap := v.(*mapping)
		if !isMap {
			f.err = configError("`%s`: %s", loc, msgNotHash)
			return nil
		}
		value = m
		l.files[loc] = m
		l.bytes[loc] = len(data)
	}
	expanded, err := l.expandIncludes(value)
	if err != nil {
		return err
	}
	if expanded.len() == 0 {
		f.err = configError("Included file `%s` does not have valid YAML syntax!", loc)
		return nil
	}
	f.value = expanded
	if l.total += l.bytes[loc]; l.total > totalBytesRatio*l.maxBytes() {
		return configError(msgTotalTooBig)
	}
	return nil
}

// includeRulesPass evaluates an include's rules: (if, exists, changes,
// when) with Options.Variables and Options.Exists; changes: always
// match, as nothing is compared when a configuration is loaded.
func (l *loader) includeRulesPass(params *mapping) (bool, error) {
	raw, ok := params.get("rules")
	if !ok || raw == nil {
		return true, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return false, configError("invalid include rules: %s", rubyInspect(raw))
	}
	for _, r := range list {
		rule, ok := r.(*mapping)
		if !ok {
			return false, configError("invalid include rules: %s", rubyInspect(raw))
		}
		matched := true
		if cond, ok := rule.get("if"); ok {
			s, _ := cond.(string)
			e, err := ParseExpression(s)
			if err != nil {
				return false, configError("invalid include rules: %s", rubyInspect(raw))
			}
			matched = e.Evaluate(l.opts.Variables)
		}
		if ex, ok := rule.get("exists"); ok && matched {
			matched = false
			for _, g := range existsPaths(ex) {
				if l.opts.Exists != nil && l.opts.Exists(expandVariables(g, l.opts.Variables, true)) {
					matched = true
					break
				}
			}
		}
		if matched {
			when, _ := rule.get("when")
			return when != "never", nil
		}
	}
	return false, nil
}

// existsPaths is the paths of an exists: clause (a string, a list, or
// {paths: …}).
func existsPaths(v any) []string {
	if m, ok := v.(*mapping); ok {
		v, _ = m.get("paths")
	}
	var out []string
	for _, p := range arrayWrap(v) {
		if s, ok := p.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// isURL is GitLab's UrlSanitizer.valid?: a URL of an allowed scheme.
func isURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ssh", "git":
		return u.Host != ""
	}
	return false
}

// arrayWrap is Ruby's Array.wrap: a list as is, nil as none, anything
// else as a list of one.
func arrayWrap(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}
