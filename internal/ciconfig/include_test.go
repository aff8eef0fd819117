package ciconfig

import (
	"errors"
	"strings"
	"testing"
)

// files is a repository for Options.Include.
func files(m map[string]string) Options {
	return Options{Include: func(p string) ([]byte, bool, error) {
		if p == "broken.yml" {
			return nil, false, errors.New("disk on fire")
		}
		s, ok := m[p]
		return []byte(s), ok, nil
	}}
}

func TestLoad_include(t *testing.T) {
	repo := files(map[string]string{
		"ci/base.yml":     "variables: {A: base, B: base}\n.tmpl: {script: [base], stage: build}\nbase: {script: [b]}\n",
		"ci/other.yml":    "variables: {B: other}\nother: {extends: .tmpl}\n",
		"ci/nested.yml":   "include: ci/base.yml\nnested: {script: [n], variables: {X: $A}}\n",
		"ci/self.yml":     "include: ci/self.yml\n",
		"ci/ping.yml":     "include: ci/pong.yml\n",
		"ci/pong.yml":     "include: ci/ping.yml\n",
		"ci/empty.yml":    "  \n",
		"ci/list.yml":     "- a\n",
		"ci/bad.yml":      "a: [\n",
		"ci/blank.yml":    "{}\n",
		"ci/missing.yml":  "include: ci/nope.yml\n",
		"ci/refs.yml":     ".shared: {script: [shared]}\n",
		"ci/a b.yml":      "ab: {script: [x]}\n",
		"ci/rules.yml":    "ruled: {script: [x]}\n",
		"ci/remote.yml":   "include: https://example.com/ci.yml\n",
		"ci/template.yml": "include: {template: Auto-DevOps.gitlab-ci.yml}\n",
	})
	runLoadCases(t, []loadCase{
		{name: "string", src: "include: ci/base.yml\njob: {script: x}", job: "base", field: "script", want: `["b"]`},
		{name: "leading slash", src: "include: /ci/base.yml\njob: {script: x}", job: "base", field: "script", want: `["b"]`},
		{name: "local hash", src: "include: {local: ci/base.yml}\njob: {script: x}", job: "base", field: "script", want: `["b"]`},
		{name: "main wins", src: "include: [ci/base.yml]\nvariables: {A: main}\njob: {script: x}", job: "-", field: "variables", want: `[{"key":"A","value":"main"},{"key":"B","value":"base"}]`},
		{name: "later file wins", src: "include: [ci/base.yml, ci/other.yml]\njob: {script: x}", job: "-", field: "variables", want: `[{"key":"A","value":"base"},{"key":"B","value":"other"}]`},
		{name: "extends across files", src: "include: [ci/base.yml, ci/other.yml]\njob: {script: x}", job: "other", field: "stage", want: `"build"`},
		{name: "included jobs first", src: "include: ci/rules.yml\njob: {script: x}", job: "-", field: "jobs", want: `[{"name":"ruled","stage":"test","script":["x"],"when":"on_success","allow_failure":false,"needs":null,"dependencies":null,"only":{"refs":["branches","tags"]},"inherit_variables":null,"retry":{}},{"name":"job","stage":"test","script":["x"],"when":"on_success","allow_failure":false,"needs":null,"dependencies":null,"only":{"refs":["branches","tags"]},"inherit_variables":null,"retry":{}}]`},
		{name: "nested", src: "include: ci/nested.yml\njob: {script: x}", job: "base", field: "script", want: `["b"]`},
		{name: "reference across files", src: "include: ci/refs.yml\njob: {script: !reference [.shared, script]}", job: "job", field: "script", want: `["shared"]`},
		{name: "variables in paths", src: "include: ci/$NAME.yml\njob: {script: x}", job: "base", field: "script", want: `["b"]`},
		{name: "rules pass", src: "include: [{local: ci/rules.yml, rules: [{if: '$NAME == \"base\"'}]}]\njob: {script: x}", job: "ruled", field: "script", want: `["x"]`},
		{name: "rules exclude", src: "include: [{local: ci/missing-but-excluded.yml, rules: [{if: $NOPE}]}]\njob: {script: x}", job: "job", field: "script", want: `["x"]`},
		{name: "rules never", src: "include: [{local: ci/nope.yml, rules: [{exists: [x], when: never}, {when: never}]}]\njob: {script: x}", job: "job", field: "script", want: `["x"]`},
		{name: "missing", src: "include: ci/nope.yml\njob: {script: x}", err: "Local file `ci/nope.yml` does not exist!"},
		{name: "missing nested", src: "include: ci/missing.yml\njob: {script: x}", err: "Local file `ci/nope.yml` does not exist!"},
		{name: "empty", src: "include: ci/empty.yml\njob: {script: x}", err: "Local file `ci/empty.yml` is empty!"},
		{name: "not yaml", src: "include: ci/notes.txt\njob: {script: x}", err: "Included file `ci/notes.txt` does not have YAML extension!"},
		{name: "not a hash", src: "include: ci/list.yml\njob: {script: x}", err: "`ci/list.yml`: Invalid configuration format"},
		{name: "syntax error", src: "include: ci/bad.yml\njob: {script: x}", err: "`ci/bad.yml`: yaml: line 1: did not find expected node content"},
		{name: "blank hash", src: "include: ci/blank.yml\njob: {script: x}", err: "Included file `ci/blank.yml` does not have valid YAML syntax!"},
		{name: "self", src: "include: ci/self.yml\njob: {script: x}", err: "Maximum of 150 nested includes are allowed!"},
		{name: "cycle", src: "include: ci/ping.yml\njob: {script: x}", err: "Maximum of 150 nested includes are allowed!"},
		{name: "errors after the level", src: "include: [ci/nope.yml, ci/self.yml]\njob: {script: x}", err: "Maximum of 150 nested includes are allowed!"},
		{name: "first error of the level", src: "include: [ci/nope.yml, ci/empty.yml]\njob: {script: x}", err: "Local file `ci/nope.yml` does not exist!"},
		{name: "remote", src: "include: https://example.com/ci.yml\njob: {script: x}", err: "Remote file `https://example.com/ci.yml` could not be fetched because of a socket error!"},
		{name: "nested remote", src: "include: ci/remote.yml\njob: {script: x}", err: "Remote file `https://example.com/ci.yml` could not be fetched because of a socket error!"},
		{name: "project", src: "include: {project: g/p, file: ci.yml}\njob: {script: x}", err: "Project `g/p` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."},
		{name: "template", src: "include: ci/template.yml\njob: {script: x}", err: "Template file `Auto-DevOps.gitlab-ci.yml` could not be fetched because template includes are not supported!"},
		{name: "component", src: "include: {component: gitlab.com/a/b@1}\njob: {script: x}", err: "Component `gitlab.com/a/b@1` could not be fetched because component includes are not supported!"},
		{name: "a number", src: "include: 1\njob: {script: x}", err: "Each include must be a hash or a string"},
		{name: "no subkey", src: "include: {file: x.yml}\njob: {script: x}", err: "`{\"file\":\"x.yml\"}` does not have a valid subkey for include. Valid subkeys are: `local`, `project`, `remote`, `template`, `artifact`, `component`"},
		{name: "two subkeys", src: "include: {local: a.yml, template: b.yml}\njob: {script: x}", err: "Each include must use only one of: `local`, `project`, `remote`, `template`, `artifact`, `component`"},
		{name: "bad rules", src: "include: {local: a.yml, rules: 1}\njob: {script: x}", err: "invalid include rules: 1"},
	}, withVariables(repo, map[string]string{"NAME": "base"}))

	big := files(map[string]string{"ci/big.yml": "a: '" + strings.Repeat("x", 200) + "'\n"})
	big.MaxBytes = 100
	runLoadCases(t, []loadCase{
		{name: "too big", src: "include: ci/big.yml\njob: {script: x}", err: "`ci/big.yml`: The parsed YAML is too big"},
	}, big)

	_, err := Load([]byte("include: broken.yml\njob: {script: x}"), repo)
	var ce *Error
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Load with a failing reader: got %v; want the reader's error", err)
	}
}

func withVariables(o Options, vars map[string]string) Options {
	o.Variables = vars
	return o
}

func TestLoadIncludes(t *testing.T) {
	repo := files(map[string]string{
		"child/a.yml": "stages: [one, two]\na: {stage: one, script: [a]}\n",
		"child/b.yml": "b: {stage: two, script: [b], needs: [a]}\n",
	})
	c, err := LoadIncludes([]string{"child/a.yml", "/child/b.yml"}, repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, c, "b", "needs"); got != `[{"job":"a","artifacts":true}]` {
		t.Errorf("b's needs = %s", got)
	}
	if _, err := LoadIncludes([]string{"child/c.yml"}, repo); err == nil || err.Error() != "Local file `child/c.yml` does not exist!" {
		t.Errorf("LoadIncludes of a missing file: %v", err)
	}
}
