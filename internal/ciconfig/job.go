package ciconfig

import (
	"slices"
	"strings"
	"time"
)

// Keys of a job: those of every job and bridge (GitLab's processable),
// those of a job that runs a script, those of a bridge, and those kept
// as written for the engine (GitLab validates most of them; Quarry does
// not act on them).
var (
	processableKeys = []string{"extends", "stage", "only", "except", "rules", "variables", "inherit",
		"allow_failure", "when", "needs", "resource_group", "environment", "interruptible"}
	scriptJobKeys = []string{"tags", "script", "image", "services", "start_in", "artifacts", "cache",
		"dependencies", "before_script", "after_script", "hooks", "coverage", "retry", "parallel", "timeout",
		"release", "id_tokens", "publish", "pages", "manual_confirmation", "run", "secrets",
		"dast_configuration", "identity"}
	bridgeKeys = []string{"trigger", "parallel"}
	keptKeys   = []string{"environment", "pages", "secrets", "id_tokens", "hooks", "inherit",
		"identity", "dast_configuration", "publish", "manual_confirmation", "run"}
	jobWhen    = []string{"on_success", "on_failure", "always", "manual", "delayed"}
	bridgeWhen = []string{"on_success", "on_failure", "always", "manual"}
	// processableEntries and scriptJobEntries are the keywords GitLab
	// decodes, in its order (a bridge's are trigger, needs, parallel).
	processableEntries = []string{"stage", "only", "except", "rules", "variables", "inherit", "environment", "interruptible"}
	scriptJobEntries   = []string{"before_script", "script", "after_script", "hooks", "cache", "image", "services",
		"timeout", "retry", "tags", "artifacts", "needs", "coverage", "release", "parallel", "allow_failure",
		"id_tokens", "publish", "pages"}
	// defaultKeys are what default: may say, and what jobs inherit.
	defaultKeys = []string{"before_script", "after_script", "hooks", "cache", "image", "services",
		"interruptible", "timeout", "retry", "tags", "artifacts", "id_tokens"}
)

// refusedKeys are keywords Quarry cannot honour and that would change
// what the job does if ignored: the configuration is invalid, so a job
// never runs without what it asked for (secrets:, hooks:, …). pages:
// false is no Pages job and passes.
var refusedKeys = []struct{ key, why string }{
	// Quarry has no Vault, Azure Key Vault or GCP Secret Manager.
	{"secrets", "Quarry has no secrets provider"},
	{"hooks", "Quarry runs no job hooks"},
	{"pages", "Quarry has no Pages server"},
	{"identity", "Quarry has no identity federation"},
	{"dast_configuration", "Quarry has no DAST profiles"},
	{"run", "Quarry runs no CI steps"},
}

// jobKind is what a top-level key is, as GitLab tells: a hidden job (a
// name starting with "."), a job (a hash with script: or run:), a
// bridge (a hash with trigger: or needs:), or none of these.
type jobKind int

const (
	notAJob jobKind = iota
	hiddenJob
	scriptJob
	bridgeJob
)

func kindOf(name string, v any) jobKind {
	if strings.HasPrefix(name, ".") {
		return hiddenJob
	}
	m, ok := v.(*mapping)
	switch {
	case !ok:
		return notAJob
	case m.has("script") || m.has("run"):
		return scriptJob
	case m.has("trigger") || m.has("needs"):
		return bridgeJob
	}
	return notAJob
}

// defaults are default: with the deprecated top-level forms of its
// keys, decoded; has tells which keys are set.
type defaults struct {
	job Job
	has map[string]bool
}

// decodeJob validates and decodes one job or bridge in GitLab's order:
// the job's own checks, then its keywords in GitLab's entry order, then
// the checks that need them; then what it inherits from default:.
func (l *loader) decodeJob(name string, m *mapping, kind jobKind, d *defaults, workflowRules bool) (*Job, error) {
	loc := "jobs:" + name
	if err := jobChecks(loc, name, m, kind); err != nil {
		return nil, err
	}
	if err := l.budget.spend(l.treeSize(m)); err != nil {
		return nil, err
	}
	j := &Job{Name: name, Stage: "test", When: "on_success"}
	val := func(k string) any { v, _ := m.get(k); return v }
	for _, k := range refusedKeys {
		if v := val(k.key); v != nil && (k.key != "pages" || v != false) {
			return nil, configError("%s:%s config is not supported: %s", loc, k.key, k.why)
		}
	}
	if w := val("when"); w != nil {
		j.When = w.(string)
	}
	if s := val("start_in"); s != nil && j.When == "delayed" {
		j.StartIn = s.(string)
	}
	if rg := val("resource_group"); rg != nil {
		j.ResourceGroup = rg.(string)
	}
	if deps := val("dependencies"); deps != nil {
		j.Dependencies, _ = stringList(deps)
	}
	j.AllowFailure = j.When == "manual"
	switch af := val("allow_failure").(type) {
	case bool:
		j.AllowFailure = af
	case *mapping:
		j.AllowFailure = false
	}
	entries := append(slices.Clip(processableEntries), scriptJobEntries...)
	if kind == bridgeJob {
		entries = append(slices.Clip(processableEntries), "trigger", "needs", "parallel")
	}
	in := inheritance{allDefaults: true}
	var err error
	for _, k := range entries {
		v := val(k)
		if v == nil {
			continue
		}
		kloc := loc + ":" + k
		switch k {
		case "stage":
			j.Stage, err = stringValue(kloc, "config", v)
		case "only":
			j.Only, err = decodeFilter(kloc, v)
		case "except":
			j.Except, err = decodeFilter(kloc, v)
		case "rules":
			j.Rules, err = decodeRules(kloc, v, jobRuleWhen, jobRuleKeys)
		case "variables":
			j.Variables, err = decodeVariables(kloc, v, jobVariableData)
		case "inherit":
			in, err = decodeInherit(kloc, v)
		case "interruptible":
			j.Interruptible, err = boolean(kloc, "config", v)
		case "before_script":
			j.BeforeScript, err = commands(kloc, v)
		case "script":
			j.Script, err = commands(kloc, v)
		case "after_script":
			j.AfterScript, err = commands(kloc, v)
		case "cache":
			j.Cache, err = decodeCaches(loc, v)
		case "image":
			var img Image
			img, err = decodeImage(kloc, v, false)
			j.Image = &img
		case "services":
			j.Services, err = decodeServices(kloc, v)
		case "timeout":
			j.Timeout, err = duration(kloc, "config", v, maxTimeout)
		case "retry":
			j.Retry, err = retry(v)
		case "tags":
			j.Tags, err = tags(kloc, v)
		case "artifacts":
			j.Artifacts, err = decodeArtifacts(kloc, v)
		case "needs":
			j.Needs, err = decodeNeeds(kloc, v, kind == scriptJob)
		case "coverage":
			j.Coverage, err = coverage(kloc, v)
		case "parallel":
			j.Parallel, err = decodeParallel(kloc, v, kind == bridgeJob)
		case "allow_failure":
			err = j.decodeAllowFailure(kloc, v)
		case "trigger":
			j.Trigger, err = decodeTrigger(kloc, v)
		case "id_tokens":
			err = checkIDTokens(kloc, v)
		case "release":
			j.Release, err = decodeRelease(kloc, v)
		case "environment":
			err = checkEnvironment(kloc, v)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := j.composedChecks(loc, m, kind); err != nil {
		return nil, err
	}
	// Seed evaluates the job for each of its parallel jobs.
	if err := l.budget.spend(l.treeSize(m) * (j.instanceCount() - 1)); err != nil {
		return nil, err
	}
	for _, k := range keptKeys {
		if v := val(k); v != nil {
			if j.Kept == nil {
				j.Kept = map[string]any{}
			}
			j.Kept[k] = plain(v)
		}
	}
	if j.Rules == nil && !workflowRules && j.Only == nil {
		only := defaultOnly
		j.Only = &only
	}
	j.InheritVariables = in.variables
	j.inherit(m, d, in, kind)
	return j, nil
}

// jobChecks are GitLab's validations of a job's own hash, in order.
func jobChecks(loc, name string, m *mapping, kind jobKind) error {
	val := func(k string) any { v, _ := m.get(k); return v }
	if nameLength(name) > 255 {
		return entryError(loc, "name is too long (maximum is 255 characters)")
	}
	if err := exclusiveKeys(loc, m, "script", "trigger"); err != nil {
		return err
	}
	if err := exclusiveKeys(loc, m, "run", "trigger"); err != nil {
		return err
	}
	if val("rules") != nil {
		var present []string
		for _, k := range m.keys {
			if (k == "only" || k == "except" || k == "start_in") && m.vals[k] != nil {
				present = append(present, k)
			}
		}
		if len(present) > 0 {
			return entryError(loc, "config key may not be used with `rules`: "+strings.Join(present, ", "))
		}
	}
	if e := val("extends"); e != nil {
		if _, ok := stringList(e); !ok && !isString(e) {
			return entryError(loc, "extends should be an array of strings or a string")
		}
	}
	if r := val("rules"); r != nil && !nestedRules(r, 1) {
		return entryError(loc, "rules should be an array containing hashes and arrays of hashes")
	}
	if rg := val("resource_group"); rg != nil && !isString(rg) {
		return entryError(loc, "resource group should be a string")
	}
	if kind == bridgeJob {
		if err := allowedKeys(loc, m, append(slices.Clip(processableKeys), bridgeKeys...)...); err != nil {
			return err
		}
		if w := val("when"); w != nil {
			if s, ok := w.(string); !ok || !slices.Contains(bridgeWhen, s) {
				return entryError(loc, "when should be one of: "+strings.Join(bridgeWhen, ", "))
			}
		}
		if af := val("allow_failure"); af != nil && !isBool(af) {
			return entryError(loc, "allow failure should be a boolean value")
		}
		return nil
	}
	if err := allowedKeys(loc, m, append(slices.Clip(processableKeys), scriptJobKeys...)...); err != nil {
		return err
	}
	if err := exclusiveKeys(loc, m, "script", "run"); err != nil {
		return err
	}
	if !m.has("run") && blank(val("script")) {
		return entryError(loc, "script can't be blank")
	}
	if w := val("when"); w != nil {
		if _, err := oneOf(loc, "when", w, jobWhen...); err != nil {
			return err
		}
	}
	if deps := val("dependencies"); deps != nil {
		if _, ok := stringList(deps); !ok {
			return entryError(loc, "dependencies should be an array of strings")
		}
	}
	if af := val("allow_failure"); af != nil && !isBool(af) {
		if _, ok := af.(*mapping); !ok {
			return entryError(loc, "allow failure should be a hash or a boolean value")
		}
	}
	if mc := val("manual_confirmation"); mc != nil && !isString(mc) {
		return entryError(loc, "manual confirmation should be a string")
	}
	delayed := val("when") == "delayed"
	if delayed {
		if _, err := duration(loc, "start in", val("start_in"), maxStartIn); err != nil {
			return err
		}
	}
	if (m.has("rules") || !delayed) && !blank(val("start_in")) {
		return entryError(loc, "start in must be blank")
	}
	return nil
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

// nestedRules is GitLab's "array containing hashes and arrays of
// hashes", nested at most 10 levels.
func nestedRules(v any, level int) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		if _, ok := e.(*mapping); ok {
			continue
		}
		if level >= 10 || !nestedRules(e, level+1) {
			return false
		}
	}
	return true
}

func (j *Job) decodeAllowFailure(loc string, v any) error {
	m, ok := v.(*mapping)
	if !ok {
		return nil
	}
	if err := allowedKeys(loc, m, "exit_codes"); err != nil {
		return err
	}
	if codes, _ := m.get("exit_codes"); codes != nil {
		c, err := integers(loc, "exit codes", codes)
		if err != nil {
			return err
		}
		j.AllowFailureExitCodes = c
	}
	return nil
}

// composedChecks are GitLab's validations that need the job's decoded
// keywords.
func (j *Job) composedChecks(loc string, m *mapping, kind jobKind) error {
	if kind == bridgeJob {
		if j.Trigger == nil {
			return entryError(loc, "config should contain either a trigger or a needs:pipeline")
		}
		return nil
	}
	if len(j.Dependencies) > 0 && len(j.Needs) > 0 {
		var names, missing []string
		for _, n := range j.Needs {
			if n.Pipeline == "" {
				names = append(names, n.Job)
			}
		}
		if names == nil {
			return entryError(loc, "needs corresponding to dependencies must be from the same pipeline")
		}
		for _, d := range j.Dependencies {
			if !slices.Contains(names, d) {
				missing = append(missing, d)
			}
		}
		if len(missing) > 0 {
			return entryError(loc, "dependencies the "+strings.Join(missing, ", ")+" should be part of needs")
		}
	}
	if p, _ := m.get("publish"); p != nil && !j.pagesJob(m) {
		return entryError(loc, "publish can only be used within a `pages` job")
	}
	return nil
}

// pagesJob is GitLab's pages job: pages: set, or a job named pages
// (unless pages: false).
func (j *Job) pagesJob(m *mapping) bool {
	p, _ := m.get("pages")
	return !blank(p) || (j.Name == "pages" && p != false)
}

// inherit takes from default: the keys the job does not set and its
// inherit:default allows (a bridge only interruptible).
func (j *Job) inherit(m *mapping, d *defaults, in inheritance, kind jobKind) {
	for _, k := range defaultKeys {
		if v, _ := m.get(k); v != nil || !d.has[k] || !in.inheritsDefault(k) || (kind == bridgeJob && k != "interruptible") {
			continue
		}
		from := &d.job
		switch k {
		case "before_script":
			j.BeforeScript = from.BeforeScript
		case "after_script":
			j.AfterScript = from.AfterScript
		case "cache":
			j.Cache = from.Cache
		case "image":
			j.Image = from.Image
		case "services":
			j.Services = from.Services
		case "interruptible":
			j.Interruptible = from.Interruptible
		case "timeout":
			j.Timeout = from.Timeout
		case "retry":
			j.Retry = from.Retry
		case "tags":
			j.Tags = from.Tags
		case "artifacts":
			j.Artifacts = from.Artifacts
		case "hooks", "id_tokens":
			if j.Kept == nil {
				j.Kept = map[string]any{}
			}
			j.Kept[k] = from.Kept[k]
		}
	}
}

// decodeDefaults reads default: and the deprecated top-level keys of the
// same meaning, in GitLab's order: default:'s own checks, a key set in
// both places (an error that wins), default:'s keywords, then the
// top-level ones (but cache:, which comes later).
func decodeDefaults(root *mapping) (*defaults, error) {
	d := &defaults{has: map[string]bool{}}
	raw, _ := root.get("default")
	if raw != nil {
		m, ok := raw.(*mapping)
		if !ok {
			return nil, entryError("default", "config should be a hash")
		}
		if err := allowedKeys("default", m, defaultKeys...); err != nil {
			return nil, err
		}
		for _, k := range []string{"before_script", "after_script", "cache", "image", "services"} {
			if v, _ := root.get(k); v != nil && m.vals[k] != nil {
				return nil, configError("%s is defined in top-level and `default:` entry", k)
			}
		}
		if err := d.decode("default", m, defaultKeys); err != nil {
			return nil, err
		}
	}
	return d, d.decode("", root, []string{"before_script", "image", "services", "after_script"})
}

// decode reads the default keys of m (default: or the root) that are
// set; prefix is the location of m.
func (d *defaults) decode(prefix string, m *mapping, keys []string) error {
	loc := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + ":" + k
	}
	j := &d.job
	var err error
	for _, k := range keys {
		v, _ := m.get(k)
		if v == nil {
			continue
		}
		d.has[k] = true
		switch k {
		case "before_script":
			j.BeforeScript, err = commands(loc(k), v)
		case "after_script":
			j.AfterScript, err = commands(loc(k), v)
		case "cache":
			j.Cache, err = decodeCaches(prefix, v)
		case "image":
			var img Image
			img, err = decodeImage(loc(k), v, false)
			j.Image = &img
		case "services":
			j.Services, err = decodeServices(loc(k), v)
		case "interruptible":
			j.Interruptible, err = boolean(loc(k), "config", v)
		case "timeout":
			var t time.Duration
			t, err = duration(loc(k), "config", v, maxTimeout)
			j.Timeout = t
		case "retry":
			j.Retry, err = retry(v)
		case "tags":
			j.Tags, err = tags(loc(k), v)
		case "artifacts":
			j.Artifacts, err = decodeArtifacts(loc(k), v)
		case "hooks", "id_tokens":
			if k == "hooks" {
				return configError("%s config is not supported: Quarry runs no job hooks", loc(k))
			}
			if k == "id_tokens" {
				if err := checkIDTokens(loc(k), v); err != nil {
					return err
				}
			}
			if j.Kept == nil {
				j.Kept = map[string]any{}
			}
			j.Kept[k] = plain(v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkIDTokens validates id_tokens: as GitLab does: a hash of tokens,
// each a hash with aud: (required, the only key), a string or a list of
// strings. The job's payload makes the tokens (Quarry's oidc package).
func checkIDTokens(loc string, v any) error {
	m, ok := v.(*mapping)
	if !ok {
		return entryError(loc, "config should be a hash")
	}
	for _, name := range m.keys {
		tloc := loc + ":" + name
		tm, ok := m.vals[name].(*mapping)
		if !ok {
			return entryError(tloc, "config should be a hash")
		}
		if err := allowedKeys(tloc, tm, "aud"); err != nil {
			return err
		}
		aud, _ := tm.get("aud")
		if aud == nil {
			return entryError(tloc, "config missing required keys: aud")
		}
		if _, ok := aud.(string); ok {
			continue
		}
		if l, ok := stringList(aud); !ok || len(l) == 0 {
			return entryError(tloc+":aud", "config should be an array of strings or a string")
		}
	}
	return nil
}

// IDTokens are the ID tokens a job asks for (id_tokens:), by variable
// name, each with its audience as written: a string or a list of
// strings, not yet expanded.
func (j *Job) IDTokens() map[string]any {
	m, _ := j.Kept["id_tokens"].(map[string]any)
	out := make(map[string]any, len(m))
	for name, t := range m {
		tm, _ := t.(map[string]any)
		switch aud := tm["aud"].(type) {
		case string:
			out[name] = aud
		case []any:
			l := make([]string, 0, len(aud))
			for _, a := range aud {
				if s, ok := a.(string); ok {
					l = append(l, s)
				}
			}
			out[name] = l
		}
	}
	return out
}
