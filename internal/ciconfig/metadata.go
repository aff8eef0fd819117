package ciconfig

import (
	"bytes"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Types of IncludeRecord, GitLab's include metadata types (a project
// include is "file").
const (
	RecordLocal  = "local"
	RecordFile   = "file"
	RecordRemote = "remote"
)

// IncludeRecord is one included file as GitLab's include metadata lists
// it (the lint API's includes): what kind of file, where it was read,
// its blob and raw URLs, and the project and commit of the file that
// included it.
type IncludeRecord struct {
	Type     string // RecordLocal, RecordFile or RecordRemote
	Location string // the path (local, file) or the URL (remote) as written
	// Blob and Raw are the file's web URLs (Options.FileURLs); a remote
	// file has no blob and its raw URL is its location.
	Blob, Raw string
	// Extra is {project, ref} for a file of another project, else empty.
	Extra map[string]string
	// ContextProject and ContextSHA are the full path and commit of the
	// file that included this one ("" for a file a remote file
	// included).
	ContextProject, ContextSHA string
}

// record adds an included file to the load's records, once its content
// and own includes are read (a file's own includes are listed before it,
// as GitLab lists them).
func (l *loader) record(f *includedFile, loc, commit string) {
	ctxProject, ctxSHA := f.ctx.project, f.ctx.commit
	switch {
	case f.ctx.remote:
		ctxProject, ctxSHA = "", ""
	case ctxProject == "":
		ctxProject, ctxSHA = l.opts.Project, l.opts.SHA
	}
	r := IncludeRecord{Location: loc, Extra: map[string]string{}, ContextProject: ctxProject, ContextSHA: ctxSHA}
	urls := func(project, sha string) {
		if l.opts.FileURLs != nil && project != "" && sha != "" {
			r.Blob, r.Raw = l.opts.FileURLs(project, sha, loc)
		}
	}
	switch f.kind {
	case "local":
		r.Type = RecordLocal
		urls(ctxProject, ctxSHA)
	case "project":
		r.Type = RecordFile
		r.Extra = map[string]string{"project": f.project, "ref": f.ref}
		urls(f.project, commit)
	case "remote":
		r.Type, r.Raw = RecordRemote, loc
	}
	l.records = append(l.records, r)
}

// readVariables is Options.Variables for a use that makes the
// configuration depend on them (Config.UsesVariables).
func (l *loader) readVariables() map[string]string {
	l.usesVariables = true
	if l.opts.UsedVariables != nil {
		*l.opts.UsedVariables = true
	}
	return l.opts.Variables
}

// expand expands variables in an include's location, noting the use
// when the text refers to any.
func (l *loader) expand(s string) string {
	if !reVariableReference.MatchString(s) {
		return s
	}
	return expandVariables(s, l.readVariables(), false)
}

// expandKeep is expand keeping unknown variables as written (exists:
// globs).
func (l *loader) expandKeep(s string) string {
	if !reVariableReference.MatchString(s) {
		return s
	}
	return expandVariables(s, l.readVariables(), true)
}

// mergedYAML renders the merged configuration as GitLab's merged_yaml:
// a YAML document of the mapping, keys in order, .pre and .post added
// to stages: (or types:) as GitLab's EdgeStagesInjector does.
func mergedYAML(root *mapping) string {
	out := newMapping(root.len())
	stagesKey := ""
	if root.has("stages") {
		stagesKey = "stages"
	} else if root.has("types") {
		stagesKey = "types"
	}
	for _, k := range root.keys {
		v := root.vals[k]
		if k == stagesKey {
			v = wrapStages(v)
		}
		out.set(k, v)
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(yamlNode(out)); err != nil {
		return ""
	}
	enc.Close()
	return b.String()
}

// yamlNode is a value as a YAML node.
func yamlNode(v any) *yaml.Node {
	switch v := v.(type) {
	case *mapping:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range v.keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, yamlNode(v.vals[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, x := range v {
			n.Content = append(n.Content, yamlNode(x))
		}
		return n
	case *reference:
		return yamlNode(v.content)
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		switch {
		case math.IsInf(v, 1):
			s = ".inf"
		case math.IsInf(v, -1):
			s = "-.inf"
		case math.IsNaN(v):
			s = ".nan"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: s}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: rubyString(v)}
}
