package ciconfig

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// seedCase is a configuration seeded for an Input: the jobs it creates
// (names, in order) and, for the first of them or the job named by
// field's "job.key", a field as JSON; or the error.
type seedCase struct {
	name  string
	src   string
	in    Input
	jobs  string // names joined with "|"
	field string // "job.key" (a JSON key of Planned)
	want  string
	err   string
	rsn   string // the error's reason (default ReasonConfig)
}

func push(ref string, vars ...string) Input {
	in := Input{Source: "push", Ref: ref, Variables: map[string]string{"CI_COMMIT_BRANCH": ref, "CI_COMMIT_REF_NAME": ref, "CI_PIPELINE_SOURCE": "push"}}
	for i := 0; i+1 < len(vars); i += 2 {
		in.Variables[vars[i]] = vars[i+1]
	}
	return in
}

func runSeedCases(t *testing.T, cases []seedCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Helper()
			cfg, err := Load([]byte(c.src), Options{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			p, err := cfg.Seed(c.in)
			if c.err != "" {
				rsn := c.rsn
				if rsn == "" {
					rsn = ReasonConfig
				}
				var ce *Error
				if !errors.As(err, &ce) || ce.Message != c.err || ce.Reason != rsn {
					t.Fatalf("Seed: got %#v; want %q (%s)", err, c.err, rsn)
				}
				return
			}
			if err != nil {
				t.Fatalf("Seed: %v", err)
			}
			var names []string
			for _, j := range p.Jobs {
				names = append(names, j.Name)
			}
			if got := strings.Join(names, "|"); c.jobs != "" && got != c.jobs {
				t.Errorf("jobs = %s; want %s", got, c.jobs)
			}
			if c.field == "" {
				return
			}
			job, key, _ := strings.Cut(c.field, ".")
			i := slices.IndexFunc(p.Jobs, func(j Planned) bool { return j.Name == job })
			if i < 0 {
				t.Fatalf("no job %q in %v", job, names)
			}
			data, _ := json.Marshal(p.Jobs[i])
			var m map[string]json.RawMessage
			json.Unmarshal(data, &m)
			if got := string(m[key]); got != c.want {
				t.Errorf("%s = %s; want %s", c.field, got, c.want)
			}
		})
	}
}

func TestSeed_rules(t *testing.T) {
	src := `
job:
  script: x
  variables: {OWN: own}
  rules:
    - if: $CI_COMMIT_BRANCH == "main"
      when: manual
      variables: {DEPLOY: prod, OWN: rule}
    - if: $CI_COMMIT_BRANCH =~ /^release-/
      when: never
    - if: $OWN == "own" && $CI_COMMIT_TAG
      when: delayed
      start_in: 1 hour
    - changes: [docs/**/*.md]
      allow_failure: true
    - exists: [Dockerfile]
      when: always
      needs: []
`
	docs := push("dev")
	docs.Changes, docs.ChangesKnown = []string{"docs/a/b.md"}, true
	code := push("dev")
	code.Changes, code.ChangesKnown = []string{"main.go"}, true
	docker := code
	docker.Exists = func(g string) bool { return g == "Dockerfile" }
	tag := Input{Source: "push", Ref: "v1", Tag: true, Variables: map[string]string{"CI_COMMIT_TAG": "v1"}}
	runSeedCases(t, []seedCase{
		{name: "first match wins", src: src, in: push("main"), field: "job.when", want: `"manual"`},
		{name: "manual in rules may fail no more", src: src, in: push("main"), field: "job.allow_failure", want: `false`},
		{name: "rule variables override", src: src, in: push("main"), field: "job.variables", want: `[{"key":"OWN","value":"rule"},{"key":"DEPLOY","value":"prod"}]`},
		{name: "when never", src: src, in: push("release-1"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "job variables in if", src: src, in: tag, field: "job.start_in", want: `"1 hour"`},
		{name: "changes known", src: src, in: docs, field: "job.allow_failure", want: `true`},
		{name: "changes not matching", src: src, in: code, err: msgFilteredRule, rsn: ReasonRules},
		{name: "changes unknown match", src: src, in: push("dev"), field: "job.allow_failure", want: `true`},
		{name: "exists", src: src, in: docker, field: "job.needs", want: `[]`},
		{name: "no rule matches", src: "job: {script: x, rules: [{if: $NOPE}]}", in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "job's when kept", src: "job: {script: x, when: on_failure, rules: [{if: $CI_COMMIT_BRANCH}]}", in: push("main"), field: "job.when", want: `"on_failure"`},
		{name: "exit codes dropped", src: "job: {script: x, allow_failure: {exit_codes: 1}, rules: [{allow_failure: true}]}", in: push("main"), field: "job.allow_failure_exit_codes", want: ``},
		{name: "interruptible", src: "job: {script: x, rules: [{interruptible: true}]}", in: push("main"), field: "job.interruptible", want: `true`},
		{name: "variables in changes", src: "job: {script: x, variables: {DIR: docs}, rules: [{changes: [$DIR/*]}]}", in: docs, err: msgFilteredRule, rsn: ReasonRules},
		{name: "global variables seen", src: "variables: {G: g}\njob: {script: x, rules: [{if: $G == \"g\"}]}", in: push("main"), jobs: "job"},
		{name: "input wins", src: "variables: {G: g}\njob: {script: x, rules: [{if: $G == \"input\"}]}", in: push("main", "G", "input"), jobs: "job"},
		{name: "inherit none, unseen", src: "variables: {G: g}\njob: {script: x, inherit: {variables: false}, rules: [{if: $G}]}", in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "tags expanded", src: "job: {script: x, variables: {RUNNER: big}, tags: [$RUNNER, $NONE]}", in: push("main"), field: "job.tags", want: `["big","$NONE"]`},
	})
}

func TestSeed_onlyExcept(t *testing.T) {
	job := func(f string) string { return "job: {script: x, " + f + "}" }
	mr := Input{Source: "merge_request_event", Ref: "feature", Variables: map[string]string{}}
	tag := Input{Source: "push", Ref: "v1.0", Tag: true}
	sched := push("main")
	sched.Source = "schedule"
	trig := push("main")
	trig.Source = "trigger"
	child := push("main")
	child.Source = "parent_pipeline"
	changed := push("main")
	changed.Changes, changed.ChangesKnown = []string{"src/a.go"}, true
	runSeedCases(t, []seedCase{
		{name: "default on a branch", src: job("stage: test"), in: push("main"), jobs: "job"},
		{name: "default on a tag", src: job("stage: test"), in: tag, jobs: "job"},
		{name: "default not for merge requests", src: job("stage: test"), in: mr, err: msgFilteredRule, rsn: ReasonRules},
		{name: "branches", src: job("only: [branches]"), in: tag, err: msgFilteredRule, rsn: ReasonRules},
		{name: "tags", src: job("only: [tags]"), in: tag, jobs: "job"},
		{name: "name", src: job("only: [main]"), in: push("main"), jobs: "job"},
		{name: "other name", src: job("only: [main]"), in: push("dev"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "regexp", src: job("only: ['/^v\\d/']"), in: tag, jobs: "job"},
		{name: "regexp with flag", src: job("only: ['/^MAIN$/i']"), in: push("main"), jobs: "job"},
		{name: "pushes", src: job("only: [pushes]"), in: push("dev"), jobs: "job"},
		{name: "schedules", src: job("only: [schedules]"), in: sched, jobs: "job"},
		{name: "triggers", src: job("only: [triggers]"), in: trig, jobs: "job"},
		{name: "merge_requests", src: job("only: [merge_requests]"), in: mr, jobs: "job"},
		{name: "parent pipelines", src: job("only: [parent_pipelines]"), in: child, jobs: "job"},
		{name: "pipelines is not a child", src: job("only: [pipelines]"), in: child, err: msgFilteredRule, rsn: ReasonRules},
		{name: "project path", src: job("only: [main@group/project]"), in: func() Input { in := push("main"); in.ProjectPath = "group/project"; return in }(), jobs: "job"},
		{name: "other project", src: job("only: [main@group/other]"), in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "except", src: job("except: [main]"), in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "except other", src: job("except: [main]"), in: push("dev"), jobs: "job"},
		{name: "variables", src: job(`only: {variables: ['$DEPLOY == "yes"', $FORCE]}`), in: push("main", "FORCE", "1"), jobs: "job"},
		{name: "variables false", src: job(`only: {variables: ['$DEPLOY == "yes"']}`), in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "refs and variables", src: job(`only: {refs: [tags], variables: [$FORCE]}`), in: push("main", "FORCE", "1"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "changes", src: job(`only: {changes: ['src/**/*.go']}`), in: changed, jobs: "job"},
		{name: "changes not matching", src: job(`only: {changes: ['docs/*']}`), in: changed, err: msgFilteredRule, rsn: ReasonRules},
		{name: "changes unknown", src: job(`only: {changes: ['docs/*']}`), in: push("main"), jobs: "job"},
		{name: "except changes", src: job(`except: {changes: ['src/**']}`), in: changed, err: msgFilteredRule, rsn: ReasonRules},
		{name: "kubernetes never", src: job(`only: {kubernetes: active}`), in: push("main"), err: msgFilteredRule, rsn: ReasonRules},
		{name: "except kubernetes", src: job(`except: {kubernetes: active}`), in: push("main"), jobs: "job"},
		{name: "except keeps default only", src: job(`except: [dev]`), in: mr, err: msgFilteredRule, rsn: ReasonRules},
	})
}

func TestSeed_workflow(t *testing.T) {
	src := `
variables: {G: global}
workflow:
  name: 'Deploy $ENVIRONMENT ($G) $NONE'
  rules:
    - if: $CI_COMMIT_TAG
      when: never
    - if: $CI_COMMIT_BRANCH == "main"
      variables: {ENVIRONMENT: production}
    - if: $CI_PIPELINE_SOURCE == "web"
      when: always
job: {script: x, rules: [{if: $ENVIRONMENT == "production"}, {when: manual}]}
`
	cfg, err := Load([]byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Seed(push("main"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Deploy production (global) " || len(p.Variables) != 1 || p.Variables[0].Value != "production" || p.Jobs[0].When != "on_success" {
		t.Errorf("main: %+v", p)
	}
	for _, in := range []Input{push("dev"), {Source: "push", Ref: "v1", Tag: true, Variables: map[string]string{"CI_COMMIT_TAG": "v1"}}} {
		_, err := cfg.Seed(in)
		var ce *Error
		if !errors.As(err, &ce) || ce.Message != "Pipeline filtered out by workflow rules." || ce.Reason != ReasonWorkflow {
			t.Errorf("Seed(%s): %v; want filtered by workflow rules", in.Ref, err)
		}
	}
	web := push("dev")
	web.Source, web.Variables["CI_PIPELINE_SOURCE"] = "web", "web"
	if p, err := cfg.Seed(web); err != nil || p.Jobs[0].When != "manual" || p.Name != "Deploy  (global) " {
		t.Errorf("web: %+v, %v", p, err)
	}
}

func TestSeed_parallel(t *testing.T) {
	src := `
stages: [build, test]
build: {stage: build, script: x, parallel: 3}
test:
  stage: test
  script: x
  parallel:
    matrix:
      - PROVIDER: aws
        STACK: [monitoring, app1]
      - PROVIDER: [gcp, vultr]
        STACK: data
  needs: [build]
  rules:
    - if: $PROVIDER == "vultr"
      when: never
    - when: on_success
`
	runSeedCases(t, []seedCase{
		{name: "names", src: src, in: push("main"), jobs: "build 1/3|build 2/3|build 3/3|test: [aws, monitoring]|test: [aws, app1]|test: [gcp, data]"},
		{name: "node", src: src, in: push("main"), field: "build 2/3.node_index", want: `2`},
		{name: "node total", src: src, in: push("main"), field: "build 2/3.node_total", want: `3`},
		{name: "matrix", src: src, in: push("main"), field: "test: [gcp, data].matrix", want: `{"PROVIDER":"gcp","STACK":"data"}`},
		{name: "matrix node", src: src, in: push("main"), field: "test: [gcp, data].node_index", want: `3`},
		{name: "matrix variables", src: src, in: push("main"), field: "test: [aws, app1].variables", want: `[{"key":"PROVIDER","value":"aws"},{"key":"STACK","value":"app1"}]`},
		{name: "needs expanded", src: src, in: push("main"), field: "test: [aws, app1].needs",
			want: `[{"job":"build 1/3","artifacts":true},{"job":"build 2/3","artifacts":true},{"job":"build 3/3","artifacts":true}]`},
		{name: "stage index", src: src, in: push("main"), field: "test: [aws, app1].stage_index", want: `2`},
	})
}

func TestSeed_needs(t *testing.T) {
	src := `
build: {stage: build, script: x, rules: [{if: $BUILD}]}
lint: {stage: build, script: x}
test: {stage: test, script: x, needs: [{job: build, optional: true}, lint]}
deploy: {stage: deploy, script: x, needs: [build]}
`
	runSeedCases(t, []seedCase{
		{name: "all there", src: src, in: push("main", "BUILD", "1"), field: "deploy.needs", want: `[{"job":"build","artifacts":true}]`},
		{name: "optional dropped", src: strings.Replace(src, "deploy: {stage: deploy, script: x, needs: [build]}", "", 1), in: push("main"), field: "test.needs", want: `[{"job":"lint","artifacts":true}]`},
		{name: "missing", src: src, in: push("main"),
			err: "'deploy' job needs 'build' job, but 'build' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional."},
		{name: "rule needs", src: "a: {script: x}\nb: {script: x, needs: [a], rules: [{needs: []}]}", in: push("main"), field: "b.needs", want: `[]`},
		{name: "stages with jobs only", src: "a: {stage: build, script: x}\nb: {stage: deploy, script: x}", in: push("main"), jobs: "a|b"},
		{name: "order by stage", src: "b: {stage: deploy, script: x}\na: {stage: build, script: x}\nc: {stage: .pre, script: x}", in: push("main"), jobs: "c|a|b"},
		{name: "too many", src: "a: {script: x, parallel: 51}\nb: {script: x, needs: [a]}", in: push("main"),
			err: "b: one job can only need 50 others, but you have listed 51. See needs keyword documentation for more details"},
		{name: "dependencies expanded", src: "a: {stage: build, script: x, parallel: 2}\nb: {script: x, dependencies: [a]}", in: push("main"), field: "b.dependencies", want: `["a 1/2","a 2/2"]`},
	})
	cfg, err := Load([]byte("a: {stage: build, script: x}\nb: {stage: deploy, script: x}"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Seed(push("main"))
	if err != nil || strings.Join(p.Stages, ",") != "build,deploy" {
		t.Errorf("stages %v, %v", p.Stages, err)
	}
}

func TestJob_InheritedVariables(t *testing.T) {
	global := []Variable{{Key: "A", Value: "g"}, {Key: "B", Value: "g"}, {Key: "C", Value: "g"}}
	workflow := []Variable{{Key: "B", Value: "w"}, {Key: "D", Value: "w"}}
	for _, c := range []struct {
		inherit []string
		want    string
	}{
		{nil, "A=g B=w C=j D=w E=j"}, // C replaced in its place
		{[]string{}, "C=j E=j"},
		{[]string{"B", "D"}, "B=w D=w C=j E=j"},
	} {
		j := &Job{Variables: []Variable{{Key: "C", Value: "j"}, {Key: "E", Value: "j"}}, InheritVariables: c.inherit}
		var got []string
		for _, v := range j.InheritedVariables(global, workflow) {
			got = append(got, v.Key+"="+v.Value)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("inherit %v: %s; want %s", c.inherit, strings.Join(got, " "), c.want)
		}
	}
}

// TestSeed_concurrent: a loaded configuration is seeded by many
// pipelines at once (the engine caches it); run with -race.
func TestSeed_concurrent(t *testing.T) {
	src, err := os.ReadFile("testdata/golden/fifty_jobs.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := push("main", "CI_DEFAULT_BRANCH", "main", "CI_PIPELINE_SOURCE", "push")
			in.Changes, in.ChangesKnown = []string{"services/api/x.go"}, i%2 == 0
			if _, err := cfg.Seed(in); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
