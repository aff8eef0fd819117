package ciconfig

import (
	"errors"
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

// fileContext is where an included file's own local includes are read:
// a project ("" the pipeline's own) at a commit ("" the pipeline's), as
// GitLab's context switch. A remote file has no repository.
type fileContext struct {
	project, commit string
	remote          bool
}

// includedFile is one entry of an include: list on its way through
// GitLab's verifier: its kind, where it points, and the first error.
type includedFile struct {
	kind     string
	params   *mapping
	location any // params[kind] (project: file); local and project without leading slashes
	project  string
	ref      string
	inputs   *mapping
	ctx      fileContext // of the including file
	err      *Error
	value    *mapping // the file's content, its own includes expanded
}

// expandIncludes merges the files a mapping's include: names under it,
// as GitLab's External::Processor does: each file (its own includes
// expanded first, in its own project) deep-merged in order, then the
// mapping itself on top. Errors found while checking the files of one
// level are reported after the level; a nested file's error and the
// include limit stop at once. A file may be included more than once
// (each inclusion counted); a cycle ends at the include limit.
func (l *loader) expandIncludes(values *mapping, ctx fileContext) (*mapping, error) {
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
	files, err := l.matchIncludes(locations, ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if l.includes >= l.maxIncludes() {
			return nil, configError("Maximum of %d nested includes are allowed!", l.maxIncludes())
		}
		l.includes++
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

func (l *loader) maxIncludes() int {
	if l.opts.MaxIncludes > 0 {
		return l.opts.MaxIncludes
	}
	return maxIncludes
}

// matchIncludes normalizes include entries (a string is a local path,
// or a remote one when it is a URL), drops those whose rules: exclude
// them, expands variables in locations, makes one entry of each file of
// a project include, and finds each entry's kind.
func (l *loader) matchIncludes(locations []any, ctx fileContext) ([]*includedFile, error) {
	var files []*includedFile
	for _, loc := range locations {
		var params *mapping
		switch loc := loc.(type) {
		case string:
			s := l.expand(loc)
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
			v, _ := params.get(k)
			if k == "project" {
				if file, _ := params.get("file"); blank(file) {
					continue
				}
			}
			if !blank(v) {
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
		var inputs *mapping
		if in, ok := params.get("inputs"); ok && in != nil {
			if inputs, ok = in.(*mapping); !ok {
				return nil, configError("`%s`: inputs should be a hash", toJSON(params))
			}
		}
		kind := kinds[0]
		if kind != "project" {
			f := &includedFile{kind: kind, params: params, inputs: inputs, ctx: ctx}
			f.location, _ = params.get(kind)
			if s, ok := f.location.(string); ok {
				s = l.expand(s)
				if kind == "local" {
					s = strings.TrimLeft(s, "/")
				}
				f.location = s
			}
			files = append(files, f)
			continue
		}
		// GitLab reads the first of a list of projects.
		project, _ := params.get("project")
		if list, ok := project.([]any); ok && len(list) > 0 {
			project = list[0]
		}
		name := strings.ToLower(l.expand(rubyString(project)))
		ref := "HEAD"
		if r, ok := params.get("ref"); ok && r != nil {
			ref = l.expand(rubyString(r))
		}
		file, _ := params.get("file")
		for _, p := range arrayWrap(file) {
			f := &includedFile{kind: kind, params: params, inputs: inputs, ctx: ctx, project: name, ref: ref, location: p}
			if s, ok := p.(string); ok {
				f.location = strings.TrimLeft(l.expand(s), "/")
			}
			files = append(files, f)
		}
	}
	return files, nil
}

var yamlExtension = regexp.MustCompile(`(?i).+\.(yml|yaml)$`)

func (f *includedFile) validateLocation() {
	s, ok := f.location.(string)
	switch {
	case f.kind == "template":
		if !strings.HasSuffix(rubyString(f.location), ".gitlab-ci.yml") {
			f.err = configError("Template file `%s` is not a valid location!", rubyString(f.location))
		}
	case f.kind != "local" && f.kind != "remote" && f.kind != "project":
	case !ok:
		f.err = configError("Included file `%s` needs to be a string", rubyString(f.location))
	case !yamlExtension.MatchString(path.Base(s)):
		f.err = configError("Included file `%s` does not have YAML extension!", s)
	case f.kind == "remote" && !isURL(s):
		f.err = configError("Remote file `%s` does not have a valid address!", s)
	}
}

// fetch reads, parses, interpolates and expands one included file:
// local files in the including file's project and commit, project files
// as the pipeline's user, remote files over HTTP (through Options.Fetch).
// Templates and components are not supported; artifacts are for child
// pipelines only.
func (l *loader) fetch(f *includedFile) error {
	loc := rubyString(f.location)
	var at Location
	next := f.ctx
	switch f.kind {
	case "local":
		if f.ctx.remote {
			f.err = configError("Local file `%s` does not exist!", loc)
			return nil
		}
		at = Location{Kind: IncludeLocal, Project: f.ctx.project, Ref: f.ctx.commit, Path: loc}
	case "project":
		at = Location{Kind: IncludeProject, Project: f.project, Ref: f.ref, Path: loc}
	case "remote":
		at = Location{Kind: IncludeRemote, URL: loc}
		next = fileContext{remote: true}
	case "artifact":
		f.err = configError("Including configs from artifacts is only allowed when triggering child pipelines")
		return nil
	default:
		what := map[string]string{"template": "Template file", "component": "Component"}[f.kind]
		f.err = configError("%s `%s` could not be fetched because %s includes are not supported!", what, loc, f.kind)
		return nil
	}
	key := strings.Join([]string{at.Kind, at.Project, at.Ref, at.Path, at.URL}, "\x00")
	doc, ok := l.files[key]
	if !ok {
		fetched, err := l.read(at)
		if err != nil {
			if f.err = fetchError(f, err); f.err == nil {
				return fmt.Errorf("read included file %q: %w", loc, err)
			}
			return nil
		}
		switch {
		case strings.TrimSpace(string(fetched.Data)) == "":
			switch f.kind {
			case "local":
				f.err = configError("Local file `%s` is empty!", loc)
			case "project":
				f.err = configError("Project `%s` file `%s` is empty!", f.project, loc)
			default:
				f.err = configError("Included file `%s` is empty or does not exist!", loc)
			}
			return nil
		case len(fetched.Data) > l.maxBytes():
			f.err = configError("`%s`: %s", loc, msgTooBig)
			return nil
		}
		d, err := splitDocuments(fetched.Data)
		if err != nil {
			f.err = configError("`%s`: %s", loc, err.(*Error).Message)
			return nil
		}
		doc = parsedFile{document: d, bytes: len(fetched.Data), commit: fetched.Commit}
		l.files[key] = doc
	}
	if f.kind == "project" {
		next = fileContext{project: f.project, commit: doc.commit}
	}
	content, ierr := l.interpolate(doc.document, f.inputs)
	if ierr != "" {
		f.err = configError("`%s`: %s", loc, ierr)
		return nil
	}
	value, isMap := content.(*mapping)
	if !isMap {
		f.err = configError("`%s`: %s", loc, msgNotHash)
		return nil
	}
	expanded, err := l.expandIncludes(value, next)
	if err != nil {
		return err
	}
	if expanded.len() == 0 {
		f.err = configError("Included file `%s` does not have valid YAML syntax!", loc)
		return nil
	}
	f.value = expanded
	l.record(f, loc, doc.commit)
	if l.total += doc.bytes; l.total > totalBytesRatio*l.maxBytes() {
		return configError(msgTotalTooBig)
	}
	return nil
}

// parsedFile is an included file read and split, kept for its next
// inclusion.
type parsedFile struct {
	document
	bytes  int
	commit string
}

// read answers Options.Fetch, or Options.Include for the pipeline's own
// local files.
func (l *loader) read(at Location) (Fetched, error) {
	if l.opts.Fetch != nil {
		return l.opts.Fetch(at)
	}
	if at.Kind != IncludeLocal || at.Project != "" || l.opts.Include == nil {
		switch at.Kind {
		case IncludeProject:
			return Fetched{}, ErrProjectNotFound
		case IncludeRemote:
			return Fetched{}, ErrRemoteSocket
		}
		return Fetched{}, ErrFileNotFound
	}
	data, found, err := l.opts.Include(at.Path)
	switch {
	case err != nil:
		return Fetched{}, err
	case !found:
		return Fetched{}, ErrFileNotFound
	}
	return Fetched{Data: data}, nil
}

// fetchError is GitLab's message for a file Fetch could not read; nil
// for an error that is not one of Fetch's.
func fetchError(f *includedFile, err error) *Error {
	loc := rubyString(f.location)
	var status *RemoteStatusError
	var blocked *RemoteBlockedError
	var ce *Error
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, ErrTooBig):
		return configError("`%s`: %s", loc, msgTooBig)
	case errors.Is(err, ErrProjectNotFound):
		return configError("Project `%s` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.", f.project)
	case errors.Is(err, ErrRefNotFound):
		return configError("Project `%s` reference `%s` does not exist!", f.project, f.ref)
	case errors.Is(err, ErrFileNotFound) && f.kind == "project":
		return configError("Project `%s` file `%s` does not exist!", f.project, loc)
	case errors.Is(err, ErrFileNotFound) && f.kind == "local":
		return configError("Local file `%s` does not exist!", loc)
	case errors.Is(err, ErrFileNotFound):
		return configError("Included file `%s` is empty or does not exist!", loc)
	case errors.Is(err, ErrRemoteTimeout):
		return configError("Remote file `%s` could not be fetched because of a timeout error!", loc)
	case errors.Is(err, ErrRemoteSocket):
		return configError("Remote file `%s` could not be fetched because of a socket error!", loc)
	case errors.Is(err, ErrRemoteHTTP):
		return configError("Remote file `%s` could not be fetched because of HTTP error!", loc)
	case errors.As(err, &status):
		return configError("Remote file `%s` could not be fetched because of HTTP code `%d` error!", loc, status.Code)
	case errors.As(err, &blocked):
		return configError("Remote file could not be fetched because URL is blocked: %s!", blocked.Reason)
	}
	return nil
}

// interpolate applies a file's spec:inputs header to its content with
// the include's inputs; the error is GitLab's (up to three joined).
func (l *loader) interpolate(d document, args *mapping) (any, string) {
	if d.header == nil {
		if args.len() > 0 {
			return nil, "Given inputs not defined in the `spec` section of the included configuration file"
		}
		return d.content, ""
	}
	specs, err := parseHeader(d.header)
	if err != nil {
		return nil, err.Message
	}
	values, errs := resolveInputs(specs, args)
	if len(errs) == 0 {
		var content any
		content, errs = interpolateTracked(d.content, values, l.opts.Variables, &l.usesVariables)
		if l.usesVariables && l.opts.UsedVariables != nil {
			*l.opts.UsedVariables = true
		}
		if len(errs) == 0 {
			return content, ""
		}
	}
	return nil, strings.Join(errs[:min(3, len(errs))], ", ")
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
			matched = e.Evaluate(l.readVariables())
		}
		if ex, ok := rule.get("exists"); ok && matched {
			matched = false
			for _, g := range existsPaths(ex) {
				if l.opts.Exists != nil && l.opts.Exists(l.expandKeep(g)) {
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
