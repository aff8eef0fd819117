package ciconfig

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// loadCase is a configuration and either GitLab's error for it or, as
// JSON, a field of one of its jobs ("" field: the whole Config field
// named by job).
type loadCase struct {
	name  string
	src   string
	err   string // the message Load must return
	job   string // the job whose field to look at ("" when err)
	field string // a JSON key of Job, or of Config when job is "-"
	want  string // compact JSON
}

func runLoadCases(t *testing.T, cases []loadCase, o Options) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Helper()
			cfg, err := Load([]byte(c.src), o)
			if c.err != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Message != c.err || ce.Reason != ReasonConfig {
					t.Fatalf("Load: got %v; want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := field(t, cfg, c.job, c.field); got != c.want {
				t.Errorf("%s.%s = %s; want %s", c.job, c.field, got, c.want)
			}
		})
	}
}

// field is one field of a job (or of the Config, for job "-") as JSON.
func field(t *testing.T, c *Config, job, key string) string {
	t.Helper()
	var v any = c
	if job != "-" {
		v = nil
		for _, j := range c.Jobs {
			if j.Name == job {
				v = j
			}
		}
		if v == nil {
			t.Fatalf("no job %q", job)
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m[key] == nil {
		return ""
	}
	return string(m[key])
}

func TestLoad_topLevel(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "empty", src: "", err: "Please provide content of .gitlab-ci.yml"},
		{name: "blank", src: " \n\t\n", err: "Please provide content of .gitlab-ci.yml"},
		{name: "comments only", src: "# nothing\n", err: "Invalid configuration format"},
		{name: "a list", src: "- a\n", err: "Invalid configuration format"},
		{name: "a string", src: "hello", err: "Invalid configuration format"},
		{name: "no jobs", src: "stages: [a]", err: "jobs config should contain at least one visible job"},
		{name: "only hidden", src: ".a: {script: x}", err: "jobs config should contain at least one visible job"},
		{name: "no script", src: "job: {stage: test}", err: "jobs job config should implement the script:, run:, or trigger: keyword"},
		{name: "name humanized", src: "Build_Linux: {stage: test}\nx: {script: a}", err: "jobs build linux config should implement the script:, run:, or trigger: keyword"},
		{name: "not a hash", src: "job: echo", err: "jobs job config should implement the script:, run:, or trigger: keyword"},
		{name: "blank hidden", src: ".hidden:\njob: {script: x}", err: "jobs:.hidden config can't be blank"},
		{name: "unknown keys downcased", src: "Job: {script: x, Foo: 1, bar: 2}", err: "jobs:job config contains unknown keys: foo, bar"},
		{name: "long name", src: strings.Repeat("j", 256) + ": {script: x}", err: "jobs:" + strings.Repeat("j", 256) + " name is too long (maximum is 255 characters)"},
		{name: "pages is a job", src: "pages: {script: x}", job: "pages", field: "stage", want: `"test"`},
		{name: "default stages", src: "job: {script: x}", job: "-", field: "stages", want: `[".pre","build","test","deploy",".post"]`},
		{name: "stages wrapped", src: "stages: [.post, b, .pre, a]\njob: {script: x, stage: a}", job: "-", field: "stages", want: `[".pre","b","a",".post"]`},
		{name: "types", src: "types: [a]\njob: {script: x, stage: a}", job: "-", field: "stages", want: `[".pre","a",".post"]`},
		{name: "nested stages", src: "stages: [[a, b], c]\njob: {script: x, stage: c}", job: "-", field: "stages", want: `[".pre","a","b","c",".post"]`},
		{name: "bad stages", src: "stages: a\njob: {script: x}", err: "stages config should be an array of strings or a nested array of strings up to 10 levels deep"},
		{name: "missing stage", src: "job: {script: x, stage: foo}", err: "job job: chosen stage foo does not exist; available stages are .pre, build, test, deploy, .post"},
		{name: "default stage missing", src: "stages: [a, b]\njob: {script: x}", err: "job job: chosen stage test does not exist; available stages are .pre, a, b, .post"},
		{name: "stage not a string", src: "job: {script: x, stage: [a]}", err: "jobs:job:stage config should be a string"},
		{name: "default is a job when it has a script", src: "default: {script: x}", job: "default", field: "script", want: `["x"]`},
		{name: "too many jobs", src: "a: {script: x, parallel: 200}\nb: {script: x, parallel: 200}\n", err: "The number of jobs has exceeded the limit of 300. Try splitting the configuration with parent-child-pipelines https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-with-many-jobs-fails-to-start"},
	}, Options{MaxJobs: 300})
}

func TestLoad_yaml(t *testing.T) {
	vars := func(v string) string { return "variables:\n  V: " + v + "\njob: {script: x}" }
	runLoadCases(t, []loadCase{
		{name: "float", src: vars("1.10"), job: "-", field: "variables", want: `[{"key":"V","value":"1.1"}]`},
		{name: "whole float", src: vars("2.0"), job: "-", field: "variables", want: `[{"key":"V","value":"2.0"}]`},
		{name: "big float", src: vars("1.0e+20"), job: "-", field: "variables", want: `[{"key":"V","value":"1.0e+20"}]`},
		{name: "octal", src: vars("0644"), job: "-", field: "variables", want: `[{"key":"V","value":"420"}]`},
		{name: "hex", src: vars("0x1F"), job: "-", field: "variables", want: `[{"key":"V","value":"31"}]`},
		{name: "underscores", src: vars("1_000"), job: "-", field: "variables", want: `[{"key":"V","value":"1000"}]`},
		{name: "sexagesimal", src: vars("1:30"), job: "-", field: "variables", want: `[{"key":"V","value":"90"}]`},
		{name: "yes", src: vars("yes"), job: "-", field: "variables", want: `[{"key":"V","value":"true"}]`},
		{name: "Off", src: vars("Off"), job: "-", field: "variables", want: `[{"key":"V","value":"false"}]`},
		{name: "quoted", src: vars(`"yes"`), job: "-", field: "variables", want: `[{"key":"V","value":"yes"}]`},
		{name: "null", src: vars("~"), job: "-", field: "variables", want: `[{"key":"V","value":""}]`},
		{name: "symbol", src: vars(":sym"), job: "-", field: "variables", want: `[{"key":"V","value":"sym"}]`},
		{name: "str tag", src: vars("!!str 010"), job: "-", field: "variables", want: `[{"key":"V","value":"010"}]`},
		{name: "date", src: vars("2024-01-31"), err: "Tried to load unspecified class: Date"},
		{name: "time", src: vars("2024-01-31 10:00:00"), err: "Tried to load unspecified class: Time"},
		{name: "not a date", src: vars("2024-02-31"), job: "-", field: "variables", want: `[{"key":"V","value":"2024-02-31"}]`},
		{name: "syntax error", src: "a: [\n", err: "yaml: line 1: did not find expected node content"},
		{name: "duplicate key, last wins", src: "job: {script: a}\njob: {script: b}", job: "job", field: "script", want: `["b"]`},
	}, Options{})
}

func TestLoad_script(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "string", src: "job: {script: make}", job: "job", field: "script", want: `["make"]`},
		{name: "list", src: "job: {script: [a, b]}", job: "job", field: "script", want: `["a","b"]`},
		{name: "nested flattened", src: "job: {script: [a, [b, [c]]], before_script: [[x]], after_script: y}", job: "job", field: "script", want: `["a","b","c"]`},
		{name: "before", src: "job: {script: a, before_script: [[x], y]}", job: "job", field: "before_script", want: `["x","y"]`},
		{name: "after", src: "job: {script: a, after_script: y}", job: "job", field: "after_script", want: `["y"]`},
		{name: "blank", src: "job: {script: []}", err: "jobs:job script can't be blank"},
		{name: "empty string", src: "job: {script: ''}", err: "jobs:job script can't be blank"},
		{name: "number", src: "job: {script: [1]}", err: "jobs:job:script config should be a string or a nested array of strings up to 10 levels deep"},
		{name: "hash", src: "job: {script: a, before_script: {a: b}}", err: "jobs:job:before_script config should be a string or a nested array of strings up to 10 levels deep"},
		{name: "too deep", src: "job: {script: " + strings.Repeat("[", 11) + "a" + strings.Repeat("]", 11) + "}", err: "jobs:job:script config should be a string or a nested array of strings up to 10 levels deep"},
		{name: "ten deep", src: "job: {script: " + strings.Repeat("[", 10) + "a" + strings.Repeat("]", 10) + "}", job: "job", field: "script", want: `["a"]`},
		{name: "run instead", src: "job: {run: [{name: a, script: b}]}", err: "jobs:job:run config is not supported: Quarry runs no CI steps"},
		{name: "script and run", src: "job: {script: a, run: []}", err: "jobs:job these keys cannot be used together: script, run"},
	}, Options{})
}

func TestLoad_when(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "default", src: "job: {script: x}", job: "job", field: "when", want: `"on_success"`},
		{name: "always", src: "job: {script: x, when: always}", job: "job", field: "when", want: `"always"`},
		{name: "unknown", src: "job: {script: x, when: sometimes}", err: "jobs:job when should be one of: on_success, on_failure, always, manual, delayed"},
		{name: "never outside rules", src: "job: {script: x, when: never}", err: "jobs:job when should be one of: on_success, on_failure, always, manual, delayed"},
		{name: "not a string", src: "job: {script: x, when: 1}", err: "jobs:job when should be a string"},
		{name: "delayed", src: "job: {script: x, when: delayed, start_in: 30 minutes}", job: "job", field: "start_in", want: `"30 minutes"`},
		{name: "delayed without start_in", src: "job: {script: x, when: delayed}", err: "jobs:job start in should be a duration"},
		{name: "delayed too long", src: "job: {script: x, when: delayed, start_in: 8 days}", err: "jobs:job start in should not exceed the limit"},
		{name: "a week is the limit", src: "job: {script: x, when: delayed, start_in: 1 week}", job: "job", field: "start_in", want: `"1 week"`},
		{name: "start_in not delayed", src: "job: {script: x, start_in: 1 day}", err: "jobs:job start in must be blank"},
	}, Options{})
}

func TestLoad_allowFailure(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "default", src: "job: {script: x}", job: "job", field: "allow_failure", want: `false`},
		{name: "manual default", src: "job: {script: x, when: manual}", job: "job", field: "allow_failure", want: `true`},
		{name: "manual false", src: "job: {script: x, when: manual, allow_failure: false}", job: "job", field: "allow_failure", want: `false`},
		{name: "yes", src: "job: {script: x, allow_failure: yes}", job: "job", field: "allow_failure", want: `true`},
		{name: "exit code", src: "job: {script: x, allow_failure: {exit_codes: 137}}", job: "job", field: "allow_failure_exit_codes", want: `[137]`},
		{name: "exit codes", src: "job: {script: x, when: manual, allow_failure: {exit_codes: [1, 2]}}", job: "job", field: "allow_failure", want: `false`},
		{name: "in rules with manual", src: "job: {script: x, rules: [{when: manual}]}", job: "job", field: "allow_failure", want: `false`},
		{name: "bad", src: "job: {script: x, allow_failure: maybe}", err: "jobs:job allow failure should be a hash or a boolean value"},
		{name: "unknown key", src: "job: {script: x, allow_failure: {codes: 1}}", err: "jobs:job:allow_failure config contains unknown keys: codes"},
		{name: "bad codes", src: "job: {script: x, allow_failure: {exit_codes: a}}", err: "jobs:job:allow_failure exit codes should be an array of integers or an integer"},
	}, Options{})
}

func TestLoad_needs(t *testing.T) {
	two := "build: {stage: build, script: x}\n"
	runLoadCases(t, []loadCase{
		{name: "names", src: two + "job: {script: x, needs: [build]}", job: "job", field: "needs", want: `[{"job":"build","artifacts":true}]`},
		{name: "hashes", src: two + "job: {script: x, needs: [{job: build, artifacts: false, optional: true}]}", job: "job", field: "needs", want: `[{"job":"build","artifacts":false,"optional":true}]`},
		{name: "one hash", src: two + "job: {script: x, needs: {job: build}}", job: "job", field: "needs", want: `[{"job":"build","artifacts":true}]`},
		{name: "empty", src: "job: {script: x, needs: []}", job: "job", field: "needs", want: `[]`},
		{name: "absent", src: "job: {script: x}", job: "job", field: "needs", want: `null`},
		{name: "pipeline", src: "job: {script: x, needs: [{pipeline: $PARENT_PIPELINE_ID, job: gen}]}", job: "job", field: "needs", want: `[{"job":"gen","artifacts":true,"pipeline":"$PARENT_PIPELINE_ID"}]`},
		{name: "same stage", src: "a: {script: x}\nb: {script: x, needs: [a]}", job: "b", field: "needs", want: `[{"job":"a","artifacts":true}]`},
		{name: "optional undefined", src: "job: {script: x, needs: [{job: nope, optional: true}]}", job: "job", field: "needs", want: `[{"job":"nope","artifacts":true,"optional":true}]`},
		{name: "parallel", src: "a: {script: x, parallel: 2}\nb: {script: x, needs: [a]}", job: "b", field: "needs", want: `[{"job":"a","artifacts":true}]`},
		{name: "not a list", src: "job: {script: x, needs: 1}", err: "jobs:job:needs config can only be a hash or an array"},
		{name: "empty hash", src: "job: {script: x, needs: {}}", err: "jobs:job:needs config can not be an empty hash"},
		{name: "number", src: "job: {script: x, needs: [1]}", err: "jobs:job:needs:need has an unsupported type"},
		{name: "project", src: "job: {script: x, needs: [{project: a/b, job: c}]}", err: "jobs:job:needs:need has an unsupported type"},
		{name: "blank", src: "job: {script: x, needs: ['']}", err: "jobs:job:needs:need config can't be blank"},
		{name: "unknown key", src: two + "job: {script: x, needs: [{job: build, when: x}]}", err: "jobs:job:needs:need config contains unknown keys: when"},
		{name: "job not string", src: "job: {script: x, needs: [{job: [a]}]}", err: "jobs:job:needs:need job should be a string"},
		{name: "artifacts not bool", src: two + "job: {script: x, needs: [{job: build, artifacts: 1}]}", err: "jobs:job:needs:need artifacts should be a boolean value"},
		{name: "undefined", src: "job: {script: x, needs: [nope]}", err: "job job: undefined need: nope"},
		{name: "later stage", src: "build: {stage: build, script: x, needs: [test]}\ntest: {script: x}", err: "build job: need test is not defined in current or prior stages"},
		{name: "parallel instance named", src: "a: {script: x, parallel: 2}\nb: {script: x, needs: ['a 1/2']}", job: "b", field: "needs", want: `[{"job":"a 1/2","artifacts":true}]`},
		{name: "later stage of a parallel job", src: "b: {stage: build, script: x, parallel: 2, needs: [a]}\na: {script: x}", err: "b 1/2 job: need a is not defined in current or prior stages"},
		{name: "duplicated", src: two + "job: {script: x, needs: [build, build]}", err: "job has the following needs duplicated: build."},
		{name: "duplicated through parallel", src: "a: {script: x, parallel: 2}\nb: {script: x, needs: [a, 'a 2/2']}", err: "b has the following needs duplicated: a 2/2."},
		{name: "in rules", src: "job: {script: x, rules: [{needs: [nope]}]}", err: "job job: undefined need: nope"},
		{name: "cycle", src: "a: {script: x, needs: [b]}\nb: {script: x, needs: [c]}\nc: {script: x, needs: [a]}", err: `The pipeline has circular dependencies: topological sort failed: ["a", "b", "c"]`},
		{name: "self", src: "a: {script: x, needs: [a]}", err: "The pipeline has circular dependencies: self-dependency: a"},
		{name: "dependencies", src: two + "job: {script: x, dependencies: [build]}", job: "job", field: "dependencies", want: `["build"]`},
		{name: "no dependencies", src: "job: {script: x, dependencies: []}", job: "job", field: "dependencies", want: `[]`},
		{name: "undefined dependency", src: "job: {script: x, dependencies: [nope]}", err: "job job: undefined dependency: nope"},
		{name: "later dependency", src: "build: {stage: build, script: x, dependencies: [test]}\ntest: {script: x}", err: "build job: dependency test is not defined in current or prior stages"},
		{name: "dependency not needed", src: two + "a: {script: x}\njob: {script: x, needs: [build], dependencies: [a]}", err: "jobs:job dependencies the a should be part of needs"},
		{name: "dependencies not a list", src: "job: {script: x, dependencies: a}", err: "jobs:job dependencies should be an array of strings"},
	}, Options{})
}

func TestLoad_rules(t *testing.T) {
	rule := func(r string) string { return "job: {script: x, rules: [" + r + "]}" }
	runLoadCases(t, []loadCase{
		{name: "all clauses", src: rule(`{if: '$A == "b"', changes: [a/**], exists: [Dockerfile], when: manual, allow_failure: true, variables: {V: 1}, needs: []}`), job: "job", field: "rules",
			want: `[{"if":"$A == \"b\"","changes":["a/**"],"exists":["Dockerfile"],"when":"manual","allow_failure":true,"variables":[{"key":"V","value":"1"}]}]`},
		{name: "changes hash", src: rule(`{changes: {paths: [a], compare_to: main}}`), job: "job", field: "rules", want: `[{"changes":["a"],"compare_to":"main"}]`},
		{name: "exists string", src: rule(`{exists: a.txt}`), job: "job", field: "rules", want: `[{"exists":["a.txt"]}]`},
		{name: "exists hash", src: rule(`{exists: {paths: [a]}}`), job: "job", field: "rules", want: `[{"exists":["a"]}]`},
		{name: "delayed", src: rule(`{when: delayed, start_in: 1 hour}`), job: "job", field: "rules", want: `[{"when":"delayed","start_in":"1 hour"}]`},
		{name: "never", src: rule(`{if: $X, when: never}`), job: "job", field: "rules", want: `[{"if":"$X","when":"never"}]`},
		{name: "nested lists", src: "job: {script: x, rules: [[{when: manual}], {when: always}]}", job: "job", field: "rules", want: `[{"when":"manual"},{"when":"always"}]`},
		{name: "no only default", src: rule(`{when: always}`), job: "job", field: "only", want: ``},
		{name: "with only", src: "job: {script: x, only: [main], rules: [{when: always}]}", err: "jobs:job config key may not be used with `rules`: only"},
		{name: "with except and start_in", src: "job: {script: x, except: [a], when: delayed, start_in: 1h, rules: [{when: always}]}", err: "jobs:job config key may not be used with `rules`: except, start_in"},
		{name: "not a list", src: "job: {script: x, rules: {when: always}}", err: "jobs:job rules should be an array containing hashes and arrays of hashes"},
		{name: "empty", src: "job: {script: x, rules: []}", err: "jobs:job:rules config can't be blank"},
		{name: "bad if", src: rule(`{if: '$A ==='}`), err: "jobs:job:rules:rule if invalid expression syntax"},
		{name: "if not a string", src: rule(`{if: [a]}`), err: "jobs:job:rules:rule if invalid expression syntax"},
		{name: "bad when", src: rule(`{when: sometimes}`), err: "jobs:job:rules:rule when unknown value: sometimes"},
		{name: "unknown key", src: rule(`{when: always, foo: 1}`), err: "jobs:job:rules:rule config contains unknown keys: foo"},
		{name: "blank rule", src: rule(`{}`), err: "jobs:job:rules:rule config can't be blank"},
		{name: "delayed without start_in", src: rule(`{when: delayed}`), err: "jobs:job:rules:rule start in can't be blank"},
		{name: "start_in not delayed", src: rule(`{start_in: 1 day}`), err: "jobs:job:rules:rule config contains disallowed keys: start_in"},
		{name: "bad allow_failure", src: rule(`{allow_failure: x}`), err: "jobs:job:rules:rule allow failure should be a boolean value"},
		{name: "bad changes", src: rule(`{changes: a}`), err: "jobs:job:rules:rule:changes should be an array or a hash"},
		{name: "changes without paths", src: rule(`{changes: {compare_to: a}}`), err: "jobs:job:rules:rule:changes config missing required keys: paths"},
		{name: "too many changes", src: rule(`{changes: [` + strings.Repeat("a,", 50) + `a]}`), err: "jobs:job:rules:rule:changes config has too many entries (maximum 50)"},
		{name: "bad exists", src: rule(`{exists: 1}`), err: "jobs:job:rules:rule:exists should be a string, an array of strings, or a hash"},
		{name: "hash variable", src: rule(`{variables: {A: {value: x}}}`), err: "jobs:job:rules:rule:variables:a config must be a string"},
		{name: "list variable", src: rule(`{variables: {A: [1]}}`), err: "variable definition must be either a string or a hash"},
	}, Options{})
}

func TestLoad_onlyExcept(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "default", src: "job: {script: x}", job: "job", field: "only", want: `{"refs":["branches","tags"]}`},
		{name: "none with workflow rules", src: "workflow: {rules: [{when: always}]}\njob: {script: x}", job: "job", field: "only", want: ``},
		{name: "refs list", src: "job: {script: x, only: [main, /^release-.*$/]}", job: "job", field: "only", want: `{"refs":["main","/^release-.*$/"]}`},
		{name: "hash", src: "job: {script: x, except: {refs: [tags], variables: ['$A == \"1\"'], changes: [docs/*], kubernetes: active}}", job: "job", field: "except",
			want: `{"refs":["tags"],"variables":["$A == \"1\""],"changes":["docs/*"],"kubernetes":"active"}`},
		{name: "a string", src: "job: {script: x, only: main}", err: "jobs:job:only has to be either an array of conditions or a hash"},
		{name: "blank hash", src: "job: {script: x, only: {}}", err: "jobs:job:only config can't be blank"},
		{name: "unknown key", src: "job: {script: x, only: {refs: [a], foo: 1}}", err: "jobs:job:only config contains unknown keys: foo"},
		{name: "bad expression", src: "job: {script: x, only: {variables: ['$A ==']}}", err: "jobs:job:only variables invalid expression syntax"},
		{name: "bad kubernetes", src: "job: {script: x, except: {kubernetes: inactive}}", err: "jobs:job:except kubernetes unknown value: inactive"},
		{name: "bad regexp", src: "job: {script: x, only: ['/(/']}", err: "jobs:job:only config should be an array of strings or regular expressions using re2 syntax"},
		{name: "bad refs", src: "job: {script: x, only: {refs: [1]}}", err: "jobs:job:only refs should be an array of strings or regular expressions using re2 syntax"},
		{name: "bad changes", src: "job: {script: x, only: {changes: a}}", err: "jobs:job:only changes should be an array of strings"},
	}, Options{})
}

func TestLoad_variables(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "global forms", src: "variables: {A: 1, B: true, C: {value: x, description: d, expand: false, options: [x, y]}, D: {description: only}}\njob: {script: x}", job: "-", field: "variables",
			want: `[{"key":"A","value":"1"},{"key":"B","value":"true"},{"key":"C","value":"x","description":"d","raw":true,"options":["x","y"]},{"key":"D","value":"","description":"only"}]`},
		{name: "job forms", src: "job: {script: x, variables: {A: a, B: {value: b, expand: true}, C: null}}", job: "job", field: "variables",
			want: `[{"key":"A","value":"a"},{"key":"B","value":"b"},{"key":"C","value":""}]`},
		{name: "not a hash", src: "variables: [a]\njob: {script: x}", err: "variables config should be a hash"},
		{name: "job description", src: "job: {script: x, variables: {A: {value: x, description: d}}}", err: "jobs:job:variables:a config uses invalid data keys: description"},
		{name: "not in options", src: "variables: {A: {value: z, options: [x, y]}}\njob: {script: x}", err: "variables:a config value must be present in options"},
		{name: "list value", src: "job: {script: x, variables: {A: [1]}}", err: "variable definition must be either a string or a hash"},
		{name: "bad expand", src: "variables: {A: {value: x, expand: 1}}\njob: {script: x}", err: "variables:a config expand should be a boolean value"},
		{name: "unknown data", src: "variables: {A: {valu: x}}\njob: {script: x}", err: "variables:a config uses invalid data keys: valu"},
	}, Options{})
}

func TestLoad_artifacts(t *testing.T) {
	art := func(a string) string { return "job: {script: x, artifacts: " + a + "}" }
	runLoadCases(t, []loadCase{
		{name: "all", src: art(`{name: n, paths: [a], exclude: [b], untracked: true, when: always, expire_in: 1 week, expose_as: 'Report 1', public: false, reports: {junit: r.xml, dotenv: [e.env], coverage_report: {coverage_format: cobertura, path: c.xml}}}`),
			job: "job", field: "artifacts",
			want: `{"name":"n","paths":["a"],"exclude":["b"],"untracked":true,"when":"always","expire_in":"1 week","expose_as":"Report 1","public":false,"reports":{"coverage_report":{"coverage_format":"cobertura","path":"c.xml"},"dotenv":["e.env"],"junit":["r.xml"]}}`},
		{name: "never expires", src: art(`{paths: [a], expire_in: never}`), job: "job", field: "artifacts", want: `{"paths":["a"],"expire_in":"never"}`},
		{name: "access", src: art(`{paths: [a], access: developer}`), job: "job", field: "artifacts", want: `{"paths":["a"],"access":"developer"}`},
		{name: "not a hash", src: art(`[a]`), err: "jobs:job:artifacts config should be a hash"},
		{name: "unknown key", src: art(`{path: [a]}`), err: "jobs:job:artifacts config contains unknown keys: path"},
		{name: "bad when", src: art(`{when: sometimes}`), err: "jobs:job:artifacts when should be one of: on_success, on_failure, always"},
		{name: "bad expire_in", src: art(`{expire_in: forever}`), err: "jobs:job:artifacts expire in should be a duration"},
		{name: "expose_as without paths", src: art(`{expose_as: r}`), err: "jobs:job:artifacts paths can't be blank"},
		{name: "expose_as with a glob", src: art(`{expose_as: r, paths: ['*.xml']}`), err: "jobs:job:artifacts paths can't contain '*' when used with 'expose_as'"},
		{name: "bad junit", src: art(`{reports: {junit: 1}}`), err: "jobs:job:artifacts:reports junit should be an array of strings or a string"},
		{name: "unknown report", src: art(`{reports: {foo: a}}`), err: "jobs:job:artifacts:reports config contains unknown keys: foo"},
		{name: "public and access", src: art(`{public: true, access: all}`), err: "jobs:job:artifacts these keys cannot be used together: public, access"},
		{name: "bad paths", src: art(`{paths: a}`), err: "jobs:job:artifacts paths should be an array of strings"},
	}, Options{})
}

func TestLoad_cache(t *testing.T) {
	cache := func(c string) string { return "job: {script: x, cache: " + c + "}" }
	runLoadCases(t, []loadCase{
		{name: "hash", src: cache(`{key: $CI_COMMIT_REF_SLUG, paths: [vendor/], policy: pull, when: always, untracked: true, fallback_keys: [main]}`), job: "job", field: "cache",
			want: `[{"key":"$CI_COMMIT_REF_SLUG","paths":["vendor/"],"untracked":true,"policy":"pull","when":"always","fallback_keys":["main"]}]`},
		{name: "defaults", src: cache(`{paths: [a]}`), job: "job", field: "cache", want: `[{"key":"default","paths":["a"],"policy":"pull-push","when":"on_success"}]`},
		{name: "key files", src: cache(`[{key: {files: [Gemfile.lock], prefix: ruby}, paths: [a]}, {paths: [b]}]`), job: "job", field: "cache",
			want: `[{"key_files":["Gemfile.lock"],"key_prefix":"ruby","paths":["a"],"policy":"pull-push","when":"on_success"},{"key":"default","paths":["b"],"policy":"pull-push","when":"on_success"}]`},
		{name: "not a hash", src: cache(`1`), err: "jobs:job:caches config can only be a hash or an array"},
		{name: "too many", src: cache(`[{}, {}, {}, {}, {}]`), err: "jobs:job:caches config no more than 4 caches can be created"},
		{name: "unknown key", src: cache(`{foo: 1}`), err: "jobs:job:cache config contains unknown keys: foo"},
		{name: "slash", src: cache(`{key: a/b}`), err: `jobs:job:cache:key config cannot contain the "/" character`},
		{name: "escaped slash", src: cache(`{key: a%2Fb}`), err: `jobs:job:cache:key config cannot contain the "/" character`},
		{name: "dots", src: cache(`{key: ..}`), err: `jobs:job:cache:key config cannot be "." or ".."`},
		{name: "key without files", src: cache(`{key: {prefix: a}}`), err: "jobs:job:cache:key config missing required keys: files"},
		{name: "three files", src: cache(`{key: {files: [a, b, c]}}`), err: "jobs:job:cache:key:files config has too many items (maximum is 2)"},
		{name: "number key", src: cache(`{key: 1}`), err: "jobs:job:cache:key should be a hash, a string or a symbol"},
		{name: "bad policy", src: cache(`{policy: sometimes}`), err: "jobs:job:cache policy should be a variable or one of: pull-push, push, pull"},
		{name: "bad when", src: cache(`{when: later}`), err: "jobs:job:cache when should be one of: on_success, on_failure, always"},
		{name: "six fallbacks", src: cache(`{fallback_keys: [a, b, c, d, e, f]}`), err: "jobs:job:cache fallback keys has to many entries (maximum 5)"},
		{name: "global", src: "cache: 1\njob: {script: x}", err: "caches config can only be a hash or an array"},
		{name: "default", src: "default: {cache: {foo: 1}}\njob: {script: x}", err: "default:cache config contains unknown keys: foo"},
		{name: "key files_commits", src: cache(`{key: {files_commits: [go.sum, go.mod]}, unprotect: true, policy: $POLICY}`), job: "job", field: "cache",
			want: `[{"key_files_commits":["go.sum","go.mod"],"policy":"$POLICY","when":"on_success","unprotect":true}]`},
		{name: "key files and files_commits", src: cache(`{key: {files: [a], files_commits: [b], prefix: p}}`), job: "job", field: "cache",
			want: `[{"key_files":["a"],"key_files_commits":["b"],"key_prefix":"p","policy":"pull-push","when":"on_success"}]`},
		{name: "no files", src: cache(`{key: {files: []}}`), err: "jobs:job:cache:key:files config requires at least 1 item"},
		{name: "files not a list", src: cache(`{key: {files: Gemfile}}`), err: "jobs:job:cache:key:files config should be an array of strings"},
		{name: "three files_commits", src: cache(`{key: {files_commits: [a, b, c]}}`), err: "jobs:job:cache:key:files_commits config has too many items (maximum is 2)"},
		{name: "key unknown key", src: cache(`{key: {files: [a], suffix: b}}`), err: "jobs:job:cache:key config contains unknown keys: suffix"},
		{name: "prefix not a string", src: cache(`{key: {files: [a], prefix: [b]}}`), err: "jobs:job:cache:key:prefix config should be a string"},
		{name: "unprotect not a boolean", src: cache(`{unprotect: maybe}`), err: "jobs:job:cache:unprotect config should be a boolean value"},
		{name: "paths not a list", src: cache(`{paths: vendor}`), err: "jobs:job:cache:paths config should be an array of strings"},
		{name: "fallback_keys not strings", src: cache(`{fallback_keys: [[a]]}`), err: "jobs:job:cache:fallback_keys config should be an array of strings"},
		{name: "five caches from default", src: "default: {cache: [{}, {}, {}, {}, {}]}\njob: {script: x}", err: "default:caches config no more than 4 caches can be created"},
	}, Options{})
}

func TestLoad_keywords(t *testing.T) {
	job := func(k string) string { return "job: {script: x, " + k + "}" }
	runLoadCases(t, []loadCase{
		{name: "secrets refused", src: "deploy: {script: x, secrets: {DB: {vault: prod/db/password@ops}}}",
			err: "jobs:deploy:secrets config is not supported: Quarry has no secrets provider"},
		{name: "secrets refused through extends", src: ".vault: {secrets: {DB: {vault: a/b}}}\ndeploy: {script: x, extends: .vault}",
			err: "jobs:deploy:secrets config is not supported: Quarry has no secrets provider"},
		{name: "id_tokens", src: job("id_tokens: {A: {aud: x}, B: {aud: [y, $CI_SERVER_URL]}}"), job: "job", field: "kept",
			want: `{"id_tokens":{"A":{"aud":"x"},"B":{"aud":["y","$CI_SERVER_URL"]}}}`},
		{name: "id_tokens from default", src: "default: {id_tokens: {A: {aud: x}}}\njob: {script: x}", job: "job", field: "kept",
			want: `{"id_tokens":{"A":{"aud":"x"}}}`},
		{name: "id_tokens not a hash", src: job("id_tokens: [a]"), err: "jobs:job:id_tokens config should be a hash"},
		{name: "id_token not a hash", src: job("id_tokens: {A: x}"), err: "jobs:job:id_tokens:a config should be a hash"},
		{name: "id_token without aud", src: job("id_tokens: {A: {}}"), err: "jobs:job:id_tokens:a config missing required keys: aud"},
		{name: "id_token unknown key", src: job("id_tokens: {A: {aud: x, sub: y}}"), err: "jobs:job:id_tokens:a config contains unknown keys: sub"},
		{name: "id_token bad aud", src: job("id_tokens: {A: {aud: 1}}"), err: "jobs:job:id_tokens:a:aud config should be an array of strings or a string"},
		{name: "id_token in default without aud", src: "default: {id_tokens: {A: {}}}\njob: {script: x}",
			err: "default:id_tokens:a config missing required keys: aud"},
		{name: "retry number", src: job("retry: 2"), job: "job", field: "retry", want: `{"max":2}`},
		{name: "retry hash", src: job("retry: {max: 1, when: [script_failure, api_failure], exit_codes: 137}"), job: "job", field: "retry", want: `{"max":1,"when":["script_failure","api_failure"],"exit_codes":[137]}`},
		{name: "retry when string", src: job("retry: {when: always}"), job: "job", field: "retry", want: `{"when":["always"]}`},
		{name: "retry too many", src: job("retry: 3"), err: "retry config must be less than or equal to 2"},
		{name: "retry max", src: job("retry: {max: -1}"), err: "retry max must be greater than or equal to 0"},
		{name: "retry bad when", src: job("retry: {when: nope}"), err: "retry when is not included in the list"},
		{name: "retry bad whens", src: job("retry: {when: [always, nope, never]}"), err: "retry when contains unknown values: nope, never"},
		{name: "retry unknown key", src: job("retry: {max: 1, foo: 1}"), err: "retry config contains unknown keys: foo"},
		{name: "retry string", src: job("retry: two"), err: "retry config has to be either an integer or a hash"},
		{name: "timeout", src: job("timeout: 1h 30m"), job: "job", field: "timeout", want: `5400000000000`},
		{name: "timeout words", src: job("timeout: 3 hours"), job: "job", field: "timeout", want: `10800000000000`},
		{name: "timeout seconds", src: job("timeout: '90'"), job: "job", field: "timeout", want: `90000000000`},
		{name: "timeout number", src: job("timeout: 3600"), err: "jobs:job:timeout config should be a duration"},
		{name: "timeout word", src: job("timeout: forever"), err: "jobs:job:timeout config should be a duration"},
		{name: "timeout too long", src: job("timeout: 2 months"), err: "jobs:job:timeout config should not exceed the limit"},
		{name: "coverage", src: job(`coverage: '/Total: (\d+)%/'`), job: "job", field: "coverage", want: `"Total: (\\d+)%"`},
		{name: "coverage flags", src: job(`coverage: '/total: (\d+)%/i'`), job: "job", field: "coverage", want: `"(?i)total: (\\d+)%"`},
		{name: "coverage not a regexp", src: job("coverage: total"), err: "jobs:job:coverage config must be a regular expression with re2 syntax"},
		{name: "coverage not RE2", src: job(`coverage: '/(?<=a)b/'`), err: "jobs:job:coverage config must be a regular expression with re2 syntax"},
		{name: "tags", src: job("tags: [docker, linux]"), job: "job", field: "tags", want: `["docker","linux"]`},
		{name: "tags string", src: job("tags: docker"), err: "jobs:job:tags config should be an array of strings"},
		{name: "fifty tags", src: job("tags: [" + strings.Repeat("t,", 49) + "t]"), err: "jobs:job:tags config must be less than the limit of 50 tags"},
		{name: "interruptible", src: job("interruptible: true"), job: "job", field: "interruptible", want: `true`},
		{name: "interruptible bad", src: job("interruptible: 1"), err: "jobs:job:interruptible config should be a boolean value"},
		{name: "resource_group", src: job("resource_group: prod"), job: "job", field: "resource_group", want: `"prod"`},
		{name: "resource_group bad", src: job("resource_group: [a]"), err: "jobs:job resource group should be a string"},
		{name: "image string", src: job("image: ruby:3.3"), job: "job", field: "image", want: `{"name":"ruby:3.3"}`},
		{name: "image hash", src: job("image: {name: ruby, entrypoint: [''], pull_policy: [always, if-not-present], docker: {platform: arm64}}"), job: "job", field: "image",
			want: `{"name":"ruby","entrypoint":[""],"pull_policy":["always","if-not-present"],"docker":{"platform":"arm64"}}`},
		{name: "image bad", src: job("image: 1"), err: "jobs:job:image config should be a hash or a string"},
		{name: "image without name", src: job("image: {entrypoint: [a]}"), err: "jobs:job:image name should be a string"},
		{name: "image unknown key", src: job("image: {name: a, alias: b}"), err: "jobs:job:image config contains unknown keys: alias"},
		{name: "image pull policy", src: job("image: {name: a, pull_policy: sometimes}"), err: "jobs:job:image:pull_policy config contains unknown values: sometimes"},
		{name: "services", src: job("services: [postgres:16, {name: redis, alias: cache, command: [redis-server], variables: {A: 1}}]"), job: "job", field: "services",
			want: `[{"name":"postgres:16"},{"name":"redis","command":["redis-server"],"alias":"cache","variables":{"A":"1"}}]`},
		{name: "services not a list", src: job("services: postgres"), err: "jobs:job:services config should be a array"},
		{name: "service bad", src: job("services: [{name: a, foo: b}]"), err: "jobs:job:services:service config contains unknown keys: foo"},
		{name: "kept", src: job("environment: {name: prod, url: 'https://x'}, id_tokens: {T: {aud: x}}, manual_confirmation: 'sure?', inherit: {variables: false}, pages: false"),
			job: "job", field: "kept",
			want: `{"environment":{"name":"prod","url":"https://x"},"id_tokens":{"T":{"aud":"x"}},"inherit":{"variables":false},"manual_confirmation":"sure?","pages":false}`},
		{name: "hooks refused", src: job("hooks: {pre_get_sources_script: [a]}"), err: "jobs:job:hooks config is not supported: Quarry runs no job hooks"},
		{name: "identity refused", src: job("identity: google_cloud"), err: "jobs:job:identity config is not supported: Quarry has no identity federation"},
		{name: "pages refused", src: job("pages: {publish: public}"), err: "jobs:job:pages config is not supported: Quarry has no Pages server"},
		{name: "pages true refused", src: job("pages: true"), err: "jobs:job:pages config is not supported: Quarry has no Pages server"},
		{name: "dast refused", src: job("dast_configuration: {site_profile: a}"), err: "jobs:job:dast_configuration config is not supported: Quarry has no DAST profiles"},
		{name: "publish outside pages", src: job("publish: public"), err: "jobs:job publish can only be used within a `pages` job"},
		{name: "publish in pages", src: "pages: {script: x, publish: out}", job: "pages", field: "kept", want: `{"publish":"out"}`},
		{name: "on_stop", src: "job: {script: x, environment: {name: r, on_stop: stop}}\nstop: {script: x, when: manual, environment: {name: r, action: stop}}", job: "stop", field: "when", want: `"manual"`},
		{name: "on_stop undefined", src: job("environment: {name: r, on_stop: stop}"), err: "job job: on_stop job stop is not defined"},
		{name: "on_stop without action", src: "job: {script: x, environment: {name: r, on_stop: stop}}\nstop: {script: x, environment: r}", err: "job job: on_stop job stop needs to have action stop defined"},
	}, Options{})
}

func TestLoad_parallel(t *testing.T) {
	job := func(p string) string { return "job: {script: x, parallel: " + p + "}" }
	runLoadCases(t, []loadCase{
		{name: "number", src: job("3"), job: "job", field: "parallel", want: `{"total":3}`},
		{name: "one", src: job("1"), job: "job", field: "parallel", want: `{"total":1}`},
		{name: "matrix", src: job("{matrix: [{PROVIDER: aws, STACK: [monitoring, app1]}, {PROVIDER: gcp, N: 1}]}"), job: "job", field: "parallel",
			want: `{"matrix":[{"PROVIDER":["aws"],"STACK":["monitoring","app1"]},{"N":["1"],"PROVIDER":["gcp"]}],"keys":[["PROVIDER","STACK"],["PROVIDER","N"]]}`},
		{name: "zero", src: job("0"), err: "jobs:job:parallel config must be greater than or equal to 1"},
		{name: "too many", src: job("201"), err: "jobs:job:parallel config must be less than or equal to 200"},
		{name: "fraction", src: job("2.5"), err: "jobs:job:parallel config must be an integer"},
		{name: "string", src: job("two"), err: "jobs:job:parallel should be an integer or a hash"},
		{name: "unknown key", src: job("{matrix: [], max: 2}"), err: "jobs:job:parallel config contains unknown keys: max"},
		{name: "no matrix", src: job("{}"), err: "jobs:job:parallel config missing required keys: matrix"},
		{name: "matrix not a list", src: job("{matrix: {A: b}}"), err: "jobs:job:parallel:matrix config should be an array of hashes"},
		{name: "matrix bad value", src: job("{matrix: [{A: [b, {c: d}]}]}"), err: "jobs:job:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{name: "matrix empty entry", src: job("{matrix: [{}]}"), err: "jobs:job:parallel:matrix:variables config requires at least 1 items"},
		{name: "matrix too big", src: job("{matrix: [{A: [" + strings.Repeat("a,", 14) + "a], B: [" + strings.Repeat("b,", 14) + "b]}]}"), err: "jobs:job:parallel:matrix config generates too many jobs (maximum is 200)"},
	}, Options{})
}

func TestLoad_trigger(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "project", src: "job: {trigger: group/project}", job: "job", field: "trigger", want: `{"project":"group/project","forward_yaml_variables":true,"forward_pipeline_variables":false}`},
		{name: "project hash", src: "job: {trigger: {project: g/p, branch: main, strategy: depend, forward: {yaml_variables: false, pipeline_variables: true}}}", job: "job", field: "trigger",
			want: `{"project":"g/p","branch":"main","strategy":"depend","forward_yaml_variables":false,"forward_pipeline_variables":true}`},
		{name: "child", src: "job: {trigger: {include: [a.yml, {local: /b.yml}], strategy: depend}}", job: "job", field: "trigger",
			want: `{"include":["a.yml","/b.yml"],"strategy":"depend","forward_yaml_variables":true,"forward_pipeline_variables":false}`},
		{name: "child string", src: "job: {trigger: {include: a.yml}}", job: "job", field: "trigger", want: `{"include":["a.yml"],"forward_yaml_variables":true,"forward_pipeline_variables":false}`},
		{name: "bridge manual", src: "job: {trigger: a/b, when: manual}", job: "job", field: "allow_failure", want: `true`},
		{name: "script too", src: "job: {script: x, trigger: a/b}", err: "jobs:job these keys cannot be used together: script, trigger"},
		{name: "trigger first", src: "job: {trigger: a/b, script: x}", err: "jobs:job these keys cannot be used together: trigger, script"},
		{name: "a number", src: "job: {trigger: 1}", err: "jobs:job:trigger has to be either a string or a hash"},
		{name: "no project", src: "job: {trigger: {branch: main}}", err: "jobs:job:trigger project should be a string"},
		{name: "bad strategy", src: "job: {trigger: {project: a/b, strategy: wait}}", err: "jobs:job:trigger strategy should be depend"},
		{name: "unknown key", src: "job: {trigger: {project: a/b, include: c.yml}}", err: "jobs:job:trigger config contains unknown keys: project"},
		{name: "bad forward", src: "job: {trigger: {project: a/b, forward: {yaml_variables: 1}}}", err: "jobs:job:trigger:forward yaml variables should be a boolean value"},
		{name: "too many includes", src: "job: {trigger: {include: [a.yml, b.yml, c.yml, d.yml]}}", err: "jobs:job:trigger:include config is too long (maximum is 3 characters)"},
		{name: "other project", src: "job: {trigger: {include: [{project: a/b, file: c.yml}]}}", err: "jobs:job:trigger:include config can only include local files of the project"},
		{name: "delayed bridge", src: "job: {trigger: a/b, when: delayed}", err: "jobs:job when should be one of: on_success, on_failure, always, manual"},
		{name: "bridge parallel number", src: "job: {trigger: a/b, parallel: 2}", err: `jobs:job:parallel config cannot use "parallel: <number>".`},
		{name: "bridge matrix", src: "job: {trigger: a/b, parallel: {matrix: [{A: [1, 2]}]}}", job: "job", field: "parallel", want: `{"matrix":[{"A":["1","2"]}],"keys":[["A"]]}`},
		{name: "bridge unknown key", src: "job: {trigger: a/b, image: ruby}", err: "jobs:job config contains unknown keys: image"},
		{name: "needs only", src: "a: {script: x}\njob: {needs: [a]}", err: "jobs:job config should contain either a trigger or a needs:pipeline"},
		{name: "bridge allow_failure hash", src: "job: {trigger: a/b, allow_failure: {exit_codes: 1}}", err: "jobs:job allow failure should be a boolean value"},
	}, Options{})
}

func TestLoad_extends(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "multi-level deep merge", src: `
.base: {variables: {A: base, B: base}, script: [base], tags: [a]}
.mid: {extends: .base, variables: {B: mid, C: mid}, tags: [b, c]}
job: {extends: .mid, variables: {C: job}}
`, job: "job", field: "variables", want: `[{"key":"A","value":"base"},{"key":"B","value":"mid"},{"key":"C","value":"job"}]`},
		{name: "arrays replaced", src: ".base: {script: [a, b], tags: [x]}\njob: {extends: .base, tags: [y]}", job: "job", field: "tags", want: `["y"]`},
		{name: "list, later base wins", src: ".a: {script: a, stage: build}\n.b: {script: b}\njob: {extends: [.a, .b]}", job: "job", field: "script", want: `["b"]`},
		{name: "list merges", src: ".a: {script: a, stage: build}\n.b: {script: b}\njob: {extends: [.a, .b]}", job: "job", field: "stage", want: `"build"`},
		{name: "visible base", src: "a: {script: a, stage: build}\nb: {extends: a}", job: "b", field: "stage", want: `"build"`},
		{name: "unknown", src: "job: {script: x, extends: .nope}", err: "job: unknown keys in `extends` (.nope)"},
		{name: "unknowns", src: ".a: {}\njob: {script: x, extends: [.x, .a, .y]}", err: "job: unknown keys in `extends` (.x, .y)"},
		{name: "invalid base", src: ".s: text\njob: {script: x, extends: .s}", err: "job: invalid base hashes in `extends` (.s)"},
		{name: "circular", src: "a: {script: x, extends: b}\nb: {script: x, extends: a}", err: "a: circular dependency detected in `extends`"},
		{name: "self", src: "a: {script: x, extends: a}", err: "a: circular dependency detected in `extends`"},
		{name: "eleven levels", src: chain(11), job: "job", field: "script", want: `["x"]`},
		{name: "twelve levels", src: chain(12), err: ".b11: nesting too deep in `extends`"},
		{name: "bad extends", src: "job: {script: x, extends: {a: b}}", err: `job: unknown keys in ` + "`extends`" + ` (["a", "b"])`},
	}, Options{})
}

// chain is a job extending through n hidden jobs, .b1 to .bn.
func chain(n int) string {
	var b strings.Builder
	b.WriteString("job: {extends: .b1}\n")
	for i := 1; i < n; i++ {
		b.WriteString(".b" + strconv.Itoa(i) + ": {extends: .b" + strconv.Itoa(i+1) + "}\n")
	}
	b.WriteString(".b" + strconv.Itoa(n) + ": {script: x}\n")
	return b.String()
}

func TestLoad_anchors(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "alias", src: ".s: &s [a, b]\njob: {script: *s}", job: "job", field: "script", want: `["a","b"]`},
		{name: "merge key", src: ".t: &t {stage: build, script: a}\njob:\n  <<: *t\n  script: b", job: "job", field: "stage", want: `"build"`},
		{name: "explicit key wins", src: ".t: &t {stage: build, script: a}\njob:\n  <<: *t\n  script: b", job: "job", field: "script", want: `["b"]`},
		{name: "merge overrides earlier keys", src: ".t: &t {stage: build, script: a}\njob:\n  script: b\n  <<: *t", job: "job", field: "script", want: `["a"]`},
		{name: "merge list, first wins", src: ".a: &a {stage: build}\n.b: &b {stage: deploy, script: b}\njob:\n  <<: [*a, *b]", job: "job", field: "stage", want: `"build"`},
		{name: "merge a scalar", src: ".a: &a x\njob:\n  script: b\n  <<: *a", err: "jobs:job config contains unknown keys: <<"},
		{name: "self-enclosing anchor", src: "a: &a [*a]\njob: {script: x}", err: "The parsed YAML is too big"},
		{name: "unknown anchor", src: "job: {script: *nope}", err: "yaml: unknown anchor 'nope' referenced"},
	}, Options{})
}

func TestLoad_reference(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "script", src: ".s: {script: [a, b]}\njob: {script: [!reference [.s, script], c]}", job: "job", field: "script", want: `["a","b","c"]`},
		{name: "hash", src: ".v: {variables: {A: a}}\njob: {script: x, variables: !reference [.v, variables]}", job: "job", field: "variables", want: `[{"key":"A","value":"a"}]`},
		{name: "rules", src: ".r: {rules: [{if: $A}]}\njob: {script: x, rules: [!reference [.r, rules], {when: never}]}", job: "job", field: "rules", want: `[{"if":"$A"},{"when":"never"}]`},
		{name: "nested", src: ".a: {script: [a]}\n.b: {script: [!reference [.a, script], b]}\njob: {script: [!reference [.b, script], c]}", job: "job", field: "script", want: `["a","b","c"]`},
		{name: "after extends", src: ".a: {script: [a]}\n.b: {extends: .a}\njob: {script: !reference [.b, script]}", job: "job", field: "script", want: `["a"]`},
		{name: "missing", src: "job: {script: !reference [.nope, script]}", err: `!reference [".nope", "script"] could not be found`},
		{name: "through a list", src: ".a: {script: [a]}\njob: {script: !reference [.a, script, '0']}", err: `!reference [".a", "script", "0"] could not be found`},
		{name: "scalar", src: "job: {script: !reference foo}", err: `!reference "foo" is not valid`},
		{name: "empty", src: "job: {script: !reference []}", err: `!reference [] is not valid`},
		{name: "not strings", src: "job: {script: !reference [.a, 1]}", err: `!reference [".a", 1] is not valid`},
		{name: "circular", src: ".a: {script: !reference [.b, script]}\n.b: {script: !reference [.a, script]}\njob: {script: x}", err: `!reference [".b", "script"] is part of a circular chain`},
		{name: "too deep", src: refChain(12), err: `!reference [".r11", "script"] is nested too deeply (maximum is 10 levels)`},
		{name: "ten deep", src: refChain(10), job: "job", field: "script", want: `["x"]`},
	}, Options{})
}

// refChain is a job whose script is a !reference through n hidden jobs.
func refChain(n int) string {
	var b strings.Builder
	b.WriteString("job: {script: !reference [.r1, script]}\n")
	for i := 1; i < n; i++ {
		b.WriteString(".r" + strconv.Itoa(i) + ": {script: !reference [.r" + strconv.Itoa(i+1) + ", script]}\n")
	}
	b.WriteString(".r" + strconv.Itoa(n) + ": {script: [x]}\n")
	return b.String()
}

func TestLoad_default(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "inherited", src: "default: {image: ruby, before_script: [a], retry: 1, tags: [t], interruptible: true, timeout: 10m}\njob: {script: x}", job: "job", field: "image", want: `{"name":"ruby"}`},
		{name: "inherited timeout", src: "default: {timeout: 10m}\njob: {script: x}", job: "job", field: "timeout", want: `600000000000`},
		{name: "job wins", src: "default: {image: ruby, tags: [a]}\njob: {script: x, image: go}", job: "job", field: "image", want: `{"name":"go"}`},
		{name: "null inherits", src: "default: {image: ruby}\njob: {script: x, image: null}", job: "job", field: "image", want: `{"name":"ruby"}`},
		{name: "top-level form", src: "image: ruby\nbefore_script: [a]\njob: {script: x}", job: "job", field: "before_script", want: `["a"]`},
		{name: "kept keys", src: "default: {id_tokens: {T: {aud: b}}}\njob: {script: x}", job: "job", field: "kept", want: `{"id_tokens":{"T":{"aud":"b"}}}`},
		{name: "hooks refused", src: "default: {hooks: {pre_get_sources_script: a}}\njob: {script: x}", err: "default:hooks config is not supported: Quarry runs no job hooks"},
		{name: "inherit none", src: "default: {image: ruby}\njob: {script: x, inherit: {default: false}}", job: "job", field: "image", want: ``},
		{name: "inherit some", src: "default: {image: ruby, tags: [a]}\njob: {script: x, inherit: {default: [tags]}}", job: "job", field: "image", want: ``},
		{name: "inherit some tags", src: "default: {image: ruby, tags: [a]}\njob: {script: x, inherit: {default: [tags]}}", job: "job", field: "tags", want: `["a"]`},
		{name: "inherit variables", src: "variables: {A: a}\njob: {script: x, inherit: {variables: [A, B]}}", job: "job", field: "inherit_variables", want: `["A","B"]`},
		{name: "inherit no variables", src: "variables: {A: a}\njob: {script: x, inherit: {variables: false}}", job: "job", field: "inherit_variables", want: `[]`},
		{name: "bridge inherits interruptible only", src: "default: {image: ruby, interruptible: true}\njob: {trigger: a/b}", job: "job", field: "image", want: ``},
		{name: "bridge interruptible", src: "default: {image: ruby, interruptible: true}\njob: {trigger: a/b}", job: "job", field: "interruptible", want: `true`},
		{name: "both places", src: "image: a\ndefault: {image: b}\njob: {script: x}", err: "image is defined in top-level and `default:` entry"},
		{name: "both places wins", src: "image: a\ndefault: {image: b, tags: 1}\nvariables: 1\njob: {script: x}", err: "image is defined in top-level and `default:` entry"},
		{name: "not a hash", src: "default: [a]\njob: {script: x}", err: "default config should be a hash"},
		{name: "unknown key", src: "default: {image: a, stage: b}\njob: {script: x}", err: "default config contains unknown keys: stage"},
		{name: "bad value", src: "default: {image: 1}\njob: {script: x}", err: "default:image config should be a hash or a string"},
		{name: "bad top-level value", src: "before_script: 1\njob: {script: x}", err: "before_script config should be a string or a nested array of strings up to 10 levels deep"},
		{name: "inherit unknown", src: "job: {script: x, inherit: {default: [stage]}}", err: "jobs:job:inherit:default config contains unknown values: stage"},
		{name: "inherit bad", src: "job: {script: x, inherit: {default: 1}}", err: "jobs:job:inherit:default should be a bool or array of strings"},
		{name: "inherit bad key", src: "job: {script: x, inherit: {defaults: false}}", err: "jobs:job:inherit config contains unknown keys: defaults"},
	}, Options{})
}

func TestLoad_workflow(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "rules and name", src: "workflow: {name: 'Pipeline $CI_COMMIT_REF_NAME', rules: [{if: $CI_COMMIT_TAG, when: never}, {variables: {A: b}}], auto_cancel: {on_new_commit: interruptible}}\njob: {script: x}", job: "-", field: "workflow",
			want: `{"name":"Pipeline $CI_COMMIT_REF_NAME","rules":[{"if":"$CI_COMMIT_TAG","when":"never"},{"variables":[{"key":"A","value":"b"}]}]}`},
		{name: "not a hash", src: "workflow: [a]\njob: {script: x}", err: "workflow config should be a hash"},
		{name: "unknown key", src: "workflow: {when: always}\njob: {script: x}", err: "workflow config contains unknown keys: when"},
		{name: "bad when", src: "workflow: {rules: [{when: on_success}]}\njob: {script: x}", err: "workflow:rules:rule when unknown value: on_success"},
		{name: "empty rules", src: "workflow: {rules: []}\njob: {script: x}", err: "workflow:rules config can't be blank"},
		{name: "empty name", src: "workflow: {name: ''}\njob: {script: x}", err: "workflow name is too short (minimum is 1 character)"},
		{name: "job named workflow", src: "workflow: {script: x}", job: "workflow", field: "script", want: `["x"]`},
	}, Options{})
}

// TestLoad_order: the first error in GitLab's order wins.
func TestLoad_order(t *testing.T) {
	runLoadCases(t, []loadCase{
		{name: "default before variables", src: "variables: 1\ndefault: {foo: 1}\njob: {script: x}", err: "default config contains unknown keys: foo"},
		{name: "variables before stages", src: "stages: a\nvariables: 1\njob: {script: x}", err: "variables config should be a hash"},
		{name: "workflow before jobs", src: "job: {script: x, foo: 1}\nworkflow: 1", err: "workflow config should be a hash"},
		{name: "unmatched before job errors", src: "a: {script: x, foo: 1}\nb: {stage: test}", err: "jobs b config should implement the script:, run:, or trigger: keyword"},
		{name: "jobs in file order", src: "b: {script: x, foo: 1}\na: {script: x, bar: 1}", err: "jobs:b config contains unknown keys: foo"},
		{name: "own checks before keywords", src: "a: {script: 1, when: later}", err: "jobs:a when should be one of: on_success, on_failure, always, manual, delayed"},
		{name: "keywords in GitLab's order", src: "a: {script: 1, stage: [x]}", err: "jobs:a:stage config should be a string"},
		{name: "extends before keywords", src: "a: {script: 1, extends: .x}", err: "a: unknown keys in `extends` (.x)"},
		{name: "config before stages", src: "a: {script: x, stage: nope, retry: 5}", err: "retry config must be less than or equal to 2"},
	}, Options{})
}
