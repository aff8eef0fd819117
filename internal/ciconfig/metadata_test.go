package ciconfig

import (
	"reflect"
	"testing"
)

// TestLoad_includeRecords: each included file is recorded once read,
// its own includes first, with its context and URLs.
func TestLoad_includeRecords(t *testing.T) {
	own := map[string]string{
		"ci/a.yml":     "include: ci/b.yml\na: {script: [a]}\n",
		"ci/b.yml":     "b: {script: [b]}\n",
		"ci/$SKIP.yml": "never: {script: [x]}\n",
	}
	other := map[string]string{
		"lib.yml":   "include: inner.yml\nlib: {script: [l]}\n",
		"inner.yml": "inner: {script: [i]}\n",
	}
	fetch := func(at Location) (Fetched, error) {
		switch at.Kind {
		case IncludeLocal:
			src := own
			if at.Project != "" {
				src = other
			}
			if s, ok := src[at.Path]; ok {
				return Fetched{Data: []byte(s)}, nil
			}
			return Fetched{}, ErrFileNotFound
		case IncludeProject:
			return Fetched{Data: []byte(other[at.Path]), Commit: "c0ffee"}, nil
		case IncludeRemote:
			return Fetched{Data: []byte("remote: {script: [r]}\n")}, nil
		}
		return Fetched{}, ErrFileNotFound
	}
	urls := func(project, sha, path string) (string, string) {
		return "B/" + project + "/" + sha + "/" + path, "R/" + project + "/" + sha + "/" + path
	}
	src := "include:\n- ci/a.yml\n- {project: g/lib, file: /lib.yml, ref: main}\n- https://example.com/r.yml\n" +
		"- {local: ci/$SKIP.yml, rules: [{if: $SKIP}]}\njob: {script: [x]}\n"
	c, err := Load([]byte(src), Options{Fetch: fetch, Project: "g/p", SHA: "abc", FileURLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	none := map[string]string{}
	want := []IncludeRecord{
		{Type: RecordLocal, Location: "ci/b.yml", Blob: "B/g/p/abc/ci/b.yml", Raw: "R/g/p/abc/ci/b.yml", Extra: none, ContextProject: "g/p", ContextSHA: "abc"},
		{Type: RecordLocal, Location: "ci/a.yml", Blob: "B/g/p/abc/ci/a.yml", Raw: "R/g/p/abc/ci/a.yml", Extra: none, ContextProject: "g/p", ContextSHA: "abc"},
		{Type: RecordLocal, Location: "inner.yml", Blob: "B/g/lib/c0ffee/inner.yml", Raw: "R/g/lib/c0ffee/inner.yml", Extra: none, ContextProject: "g/lib", ContextSHA: "c0ffee"},
		{Type: RecordFile, Location: "lib.yml", Blob: "B/g/lib/c0ffee/lib.yml", Raw: "R/g/lib/c0ffee/lib.yml",
			Extra: map[string]string{"project": "g/lib", "ref": "main"}, ContextProject: "g/p", ContextSHA: "abc"},
		{Type: RecordRemote, Location: "https://example.com/r.yml", Raw: "https://example.com/r.yml", Extra: none, ContextProject: "g/p", ContextSHA: "abc"},
	}
	if !reflect.DeepEqual(c.Includes, want) {
		t.Errorf("Includes =\n%+v\nwant\n%+v", c.Includes, want)
	}
	if !c.UsesVariables {
		t.Errorf("UsesVariables = false; want true (include:rules:if)")
	}
	if c.MergedYAML != "" {
		t.Errorf("MergedYAML = %q without Options.Merged; want empty", c.MergedYAML)
	}
}

func TestLoad_usesVariables(t *testing.T) {
	repo := files(map[string]string{
		"a.yml":      "a: {script: [a]}\n",
		"inputs.yml": "spec: {inputs: {p: {default: x}}}\n---\ni: {script: ['$[[ inputs.p | expand_vars ]]']}\n",
		"plain.yml":  "spec: {inputs: {p: {default: x}}}\n---\ni: {script: ['$[[ inputs.p ]]']}\n",
	})
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"no include", "job: {script: [$X]}", false},
		{"plain include", "include: a.yml\njob: {script: [x]}", false},
		{"variable in path", "include: $NAME.yml\njob: {script: [x]}", true},
		{"rules if", "include: [{local: a.yml, rules: [{if: $X}]}]\njob: {script: [x]}", true},
		{"rules when only", "include: [{local: a.yml, rules: [{when: always}]}]\njob: {script: [x]}", false},
		{"expand_vars", "include: inputs.yml\njob: {script: [x]}", true},
		{"inputs without expand_vars", "include: plain.yml\njob: {script: [x]}", false},
	} {
		o := repo
		o.Variables = map[string]string{"NAME": "a", "X": "1"}
		used := false
		o.UsedVariables = &used
		cfg, err := Load([]byte(c.src), o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.UsesVariables != c.want || used != c.want {
			t.Errorf("%s: UsesVariables = %v, UsedVariables = %v; want %v", c.name, cfg.UsesVariables, used, c.want)
		}
	}
}

// TestLoad_usedVariablesOnError: a load that fails after variables
// decided something says so (its error must not be cached by commit).
func TestLoad_usedVariablesOnError(t *testing.T) {
	used := false
	o := files(map[string]string{})
	o.UsedVariables = &used
	if _, err := Load([]byte("include: $NAME.yml\njob: {script: [x]}"), o); err == nil {
		t.Fatal("want an error")
	}
	if !used {
		t.Error("UsedVariables = false; want true")
	}
}

func TestLoad_mergedYAML(t *testing.T) {
	repo := files(map[string]string{"a.yml": ".base: {script: [base], tags: [t]}\nincluded: {extends: .base, when: manual, stage: build}\n"})
	repo.Merged = true
	for _, c := range []struct{ name, src, want string }{
		{"include and extends", "include: a.yml\nstages: [build]\njob:\n  stage: build\n  script: !reference [.base, script]\n  allow_failure: true\n  retry: 2\n  variables: {A: '1'}\n",
			"---\n.base:\n  script:\n  - base\n  tags:\n  - t\nincluded:\n  script:\n  - base\n  tags:\n  - t\n  extends: .base\n  when: manual\n  stage: build\n" +
				"stages:\n- .pre\n- build\n- .post\njob:\n  stage: build\n  script:\n  - base\n  allow_failure: true\n  retry: 2\n  variables:\n    A: \"1\"\n"},
		{"no stages", "job: {script: [x], tags: null}", "---\njob:\n  script:\n  - x\n  tags:\n"},
	} {
		cfg, err := Load([]byte(c.src), repo)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.MergedYAML != c.want {
			t.Errorf("%s: MergedYAML =\n%s\nwant\n%s", c.name, cfg.MergedYAML, c.want)
		}
	}
}
