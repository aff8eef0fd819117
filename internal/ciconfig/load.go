package ciconfig

import (
	"maps"
	"slices"
	"strings"
)

// Defaults and bounds of a load.
const (
	defaultMaxBytes = 1 << 20
	defaultMaxJobs  = 5000
	// maxWork bounds merges, extends, references and decoding (in keys
	// and list elements visited): the 50-job golden configuration needs
	// 2,680; a document that needs more than this is an amplification
	// (and would cost tens of megabytes before refusal).
	maxWork = 500_000
)

// loader is one Load: its options, its work budget, and what includes
// have read so far.
type loader struct {
	opts     Options
	budget   budget
	sizes    map[any]int           // treeSize's memo
	files    map[string]parsedFile // included files by location, parsed once
	includes int                   // files included so far (GitLab's expandset)
	total    int                   // bytes of the included files, each inclusion counted
	records  []IncludeRecord       // Config.Includes
	// usesVariables: Options.Variables decided something (Config.UsesVariables).
	usesVariables bool
}

func newLoader(o Options) *loader {
	return &loader{opts: o, budget: budget{left: maxWork}, files: map[string]parsedFile{}, sizes: map[any]int{}}
}

func (l *loader) maxBytes() int {
	if l.opts.MaxBytes > 0 {
		return l.opts.MaxBytes
	}
	return defaultMaxBytes
}

func (l *loader) maxJobs() int {
	if l.opts.MaxJobs > 0 {
		return l.opts.MaxJobs
	}
	return defaultMaxJobs
}

// Load parses and validates a configuration as GitLab does: the YAML
// (anchors, merge keys, !reference tags), then includes, extends,
// !reference, default: and every keyword, then the jobs' stages, needs
// and dependencies. Errors are *Error with GitLab's message, the first
// one found in GitLab's order; the one exception is a failure of
// Options.Include, returned wrapped as it is.
func Load(src []byte, o Options) (*Config, error) {
	if strings.TrimSpace(string(src)) == "" {
		return nil, configError(msgEmpty)
	}
	l := newLoader(o)
	if len(src) > l.maxBytes() {
		return nil, configError(msgTooBig)
	}
	d, err := splitDocuments(src)
	if err != nil {
		return nil, err
	}
	v, ierr := l.interpolate(d, inputArgs(o.Inputs))
	if ierr != "" {
		return nil, configError("%s", ierr)
	}
	root, ok := v.(*mapping)
	if !ok {
		return nil, configError(msgNotHash)
	}
	return l.load(root)
}

// inputArgs are Options.Inputs as a mapping, by name.
func inputArgs(in map[string]any) *mapping {
	if len(in) == 0 {
		return nil
	}
	m := newMapping(len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		m.set(k, in[k])
	}
	return m
}

// LoadIncludes builds the configuration of a child pipeline
// (trigger:include): the same as a file holding only include: with
// these local paths.
func LoadIncludes(paths []string, o Options) (*Config, error) {
	list := make([]any, len(paths))
	for i, p := range paths {
		m := newMapping(1)
		m.set("local", p)
		list[i] = m
	}
	root := newMapping(1)
	root.set("include", list)
	return newLoader(o).load(root)
}

func (l *loader) load(root *mapping) (*Config, error) {
	root, err := l.expandIncludes(root, fileContext{})
	if err != nil {
		return nil, err
	}
	if root, err = l.extend(root); err != nil {
		return nil, err
	}
	if root, err = l.resolveReferences(root); err != nil {
		return nil, err
	}
	var merged string
	if l.opts.Merged {
		merged = mergedYAML(root)
	}
	c, err := l.compose(root)
	if err != nil {
		return nil, err
	}
	c.Includes, c.MergedYAML, c.UsesVariables = l.records, merged, l.usesVariables
	total := 0
	for _, j := range c.Jobs {
		total += j.instanceCount()
	}
	if total > l.maxJobs() {
		return nil, configError("The number of jobs has exceeded the limit of %d. Try splitting the configuration with parent-child-pipelines %s",
			l.maxJobs(), "https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-with-many-jobs-fails-to-start")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// treeSize is the number of keys and elements of a value counted as
// often as they are used (what decoding it visits), each shared part
// measured once.
func (l *loader) treeSize(v any) int {
	var key any
	switch v := v.(type) {
	case *mapping:
		key = v
	case []any:
		if len(v) == 0 {
			return 1
		}
		key = &v[0]
	default:
		return 1
	}
	if n, ok := l.sizes[key]; ok {
		return n
	}
	n := 1
	switch v := v.(type) {
	case *mapping:
		for _, k := range v.keys {
			n += 1 + l.treeSize(v.vals[k])
		}
	case []any:
		for _, e := range v {
			n += l.treeSize(e)
		}
	}
	n = min(n, maxWork+1)
	l.sizes[key] = n
	return n
}

// reservedKeys are top-level keys that are never jobs; default: and
// workflow: are not jobs either unless they look like one.
var reservedKeys = []string{"include", "before_script", "image", "services", "after_script", "variables", "stages", "types", "cache"}

var defaultStages = []string{".pre", "build", "test", "deploy", ".post"}

// compose decodes the root in GitLab's entry order: default: (and the
// top-level forms of its keys), variables:, stages:, types:, cache:,
// workflow:, then the jobs.
func (l *loader) compose(root *mapping) (*Config, error) {
	jobs, settings := newMapping(0), newMapping(0)
	for _, k := range root.keys {
		v := root.vals[k]
		switch {
		case slices.Contains(reservedKeys, k),
			(k == "default" || k == "workflow") && kindOf(k, v) == notAJob:
			settings.set(k, v)
		default:
			jobs.set(k, v)
		}
	}
	d, err := decodeDefaults(settings)
	if err != nil {
		return nil, err
	}
	c := &Config{Stages: defaultStages}
	if v, _ := settings.get("variables"); v != nil {
		if c.Variables, err = decodeVariables("variables", v, globalVariableData); err != nil {
			return nil, err
		}
	}
	var stages, types []string
	for _, k := range []string{"stages", "types"} {
		if v, _ := settings.get(k); v != nil {
			s, ok := nestedStrings(wrapStages(v), 1, maxNestedCommands, []string{})
			if !ok {
				return nil, entryError(k, "config should be an array of strings or a nested array of strings up to 10 levels deep")
			}
			if k == "stages" {
				stages = s
			} else {
				types = s
			}
		}
	}
	switch {
	case stages != nil:
		c.Stages = stages
	case types != nil:
		c.Stages = types
	}
	if err := d.decode("", settings, []string{"cache"}); err != nil {
		return nil, err
	}
	if c.Workflow, err = decodeWorkflow(settings.vals["workflow"]); err != nil {
		return nil, err
	}
	visible := false
	for _, k := range jobs.keys {
		switch kindOf(k, jobs.vals[k]) {
		case notAJob:
			return nil, entryError("jobs", humanize(k)+" config should implement the script:, run:, or trigger: keyword")
		case scriptJob, bridgeJob:
			visible = true
		}
	}
	if !visible {
		return nil, entryError("jobs", "config should contain at least one visible job")
	}
	for _, k := range jobs.keys {
		v := jobs.vals[k]
		kind := kindOf(k, v)
		if kind == hiddenJob {
			if blank(v) {
				return nil, entryError("jobs:"+k, "config can't be blank")
			}
			continue
		}
		j, err := l.decodeJob(k, v.(*mapping), kind, d, c.Workflow.Rules != nil)
		if err != nil {
			return nil, err
		}
		c.Jobs = append(c.Jobs, j)
	}
	return c, nil
}

// wrapStages puts .pre first and .post last in a list of stages, as
// GitLab's EdgeStagesInjector does (an empty list stays empty).
func wrapStages(v any) any {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return v
	}
	out := []any{".pre"}
	for _, s := range l {
		if s != ".pre" && s != ".post" {
			out = append(out, s)
		}
	}
	return append(out, ".post")
}
