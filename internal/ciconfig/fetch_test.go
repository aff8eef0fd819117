package ciconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// world is a set of repositories and remote files for Options.Fetch:
// projects by path ("" is the pipeline's own), each with refs naming a
// commit, and each commit's files.
type world struct {
	refs    map[string]map[string]string            // project → ref → commit
	files   map[string]map[string]map[string]string // project → commit → path → content
	remote  map[string]string                       // URL → content
	denied  map[string]bool                         // projects the user may not read
	fetched []Location
}

func (w *world) fetch(at Location) (Fetched, error) {
	w.fetched = append(w.fetched, at)
	switch at.Kind {
	case IncludeRemote:
		switch at.URL {
		case "https://slow.example/ci.yml":
			return Fetched{}, ErrRemoteTimeout
		case "https://gone.example/ci.yml":
			return Fetched{}, &RemoteStatusError{Code: 404}
		case "http://127.0.0.1/ci.yml":
			return Fetched{}, &RemoteBlockedError{Reason: "Requests to localhost are not allowed"}
		}
		s, ok := w.remote[at.URL]
		if !ok {
			return Fetched{}, ErrRemoteSocket
		}
		return Fetched{Data: []byte(s)}, nil
	case IncludeProject:
		refs, ok := w.refs[at.Project]
		if !ok || w.denied[at.Project] {
			return Fetched{}, ErrProjectNotFound
		}
		ref := at.Ref
		if ref == "HEAD" {
			ref = "main"
		}
		commit, ok := refs[ref]
		if !ok {
			return Fetched{}, ErrRefNotFound
		}
		s, ok := w.files[at.Project][commit][at.Path]
		if !ok {
			return Fetched{}, ErrFileNotFound
		}
		return Fetched{Data: []byte(s), Commit: commit}, nil
	}
	commit := at.Ref
	if at.Project == "" {
		commit = "own"
	}
	s, ok := w.files[at.Project][commit][at.Path]
	if !ok {
		return Fetched{}, ErrFileNotFound
	}
	return Fetched{Data: []byte(s)}, nil
}

func newWorld() *world {
	return &world{
		refs: map[string]map[string]string{
			"g/lib":    {"main": "c1", "v1": "c0"},
			"g/other":  {"main": "o1"},
			"g/secret": {"main": "s1"},
		},
		files: map[string]map[string]map[string]string{
			"": {"own": {
				"local.yml": "own-local: {script: [own]}\n",
			}},
			"g/lib": {
				"c1": {
					"tmpl.yml":      "include: {local: parts/job.yml}\nlib: {script: [lib-main]}\n",
					"parts/job.yml": "lib-part: {script: [part-main]}\n",
					"nested.yml":    "include: {project: g/other, file: o.yml}\n",
					"local.yml":     "lib-local: {script: [lib]}\n",
					"empty.yml":     " \n",
					"inputs.yml":    "spec:\n  inputs:\n    stage: {default: test}\n    name:\n---\n\"$[[ inputs.name ]]-job\":\n  stage: $[[ inputs.stage ]]\n  script: ['echo $[[ inputs.name | truncate(0,3) ]]']\n",
				},
				"c0": {
					"tmpl.yml":      "include: {local: parts/job.yml}\nlib: {script: [lib-v1]}\n",
					"parts/job.yml": "lib-part: {script: [part-v1]}\n",
				},
			},
			"g/other": {"o1": {
				"o.yml":     "include: local.yml\nother: {script: [other]}\n",
				"local.yml": "other-local: {script: [o]}\n",
			}},
			"g/secret": {"s1": {"s.yml": "secret: {script: [s]}\n"}},
		},
		remote: map[string]string{
			"https://example.com/ci.yml":      "remote: {script: [r]}\n",
			"https://example.com/local.yml":   "include: local.yml\n",
			"https://example.com/project.yml": "include: {project: g/lib, file: local.yml}\nr: {script: [r]}\n",
			"https://example.com/inputs.yml":  "spec: {inputs: {n: {type: number}}}\n---\nj:\n  script: [x]\n  parallel: $[[ inputs.n ]]\n",
			"https://example.com/empty.yml":   "",
		},
		denied: map[string]bool{"g/secret": true},
	}
}

func TestLoad_includeKinds(t *testing.T) {
	w := newWorld()
	o := Options{Fetch: w.fetch, Variables: map[string]string{"LIB": "g/lib", "V": "v1"}}
	const job = "\njob: {script: x}"
	runLoadCases(t, []loadCase{
		{name: "project default branch", src: "include: {project: g/lib, file: tmpl.yml}" + job, job: "lib", field: "script", want: `["lib-main"]`},
		{name: "project's local in its project", src: "include: {project: g/lib, file: tmpl.yml}" + job, job: "lib-part", field: "script", want: `["part-main"]`},
		{name: "project at a ref", src: "include: {project: g/lib, ref: v1, file: tmpl.yml}" + job, job: "lib-part", field: "script", want: `["part-v1"]`},
		{name: "project variables", src: "include: {project: $LIB, ref: $V, file: /tmpl.yml}" + job, job: "lib", field: "script", want: `["lib-v1"]`},
		{name: "project case-insensitive", src: "include: {project: G/Lib, file: tmpl.yml}" + job, job: "lib", field: "script", want: `["lib-main"]`},
		{name: "project file list", src: "include: {project: g/lib, file: [tmpl.yml, local.yml]}" + job, job: "lib-local", field: "script", want: `["lib"]`},
		{name: "nested project and its local", src: "include: {project: g/lib, file: nested.yml}" + job, job: "other-local", field: "script", want: `["o"]`},
		{name: "own local untouched", src: "include: [local.yml, {project: g/lib, file: local.yml}]" + job, job: "own-local", field: "script", want: `["own"]`},
		{name: "same file twice", src: "include: [{project: g/lib, file: local.yml}, {project: g/lib, file: local.yml}]" + job, job: "lib-local", field: "script", want: `["lib"]`},
		{name: "project denied", src: "include: {project: g/secret, file: s.yml}" + job, err: "Project `g/secret` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."},
		{name: "project missing", src: "include: {project: g/nope, file: s.yml}" + job, err: "Project `g/nope` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."},
		{name: "project ref missing", src: "include: {project: g/lib, ref: v9, file: tmpl.yml}" + job, err: "Project `g/lib` reference `v9` does not exist!"},
		{name: "project file missing", src: "include: {project: g/lib, file: nope.yml}" + job, err: "Project `g/lib` file `nope.yml` does not exist!"},
		{name: "project file empty", src: "include: {project: g/lib, file: empty.yml}" + job, err: "Project `g/lib` file `empty.yml` is empty!"},
		{name: "project not yaml", src: "include: {project: g/lib, file: a.txt}" + job, err: "Included file `a.txt` does not have YAML extension!"},
		{name: "project without file", src: "include: {project: g/lib}" + job, err: "`{\"project\":\"g/lib\"}` does not have a valid subkey for include. Valid subkeys are: `local`, `project`, `remote`, `template`, `artifact`, `component`"},
		{name: "remote", src: "include: https://example.com/ci.yml" + job, job: "remote", field: "script", want: `["r"]`},
		{name: "remote hash", src: "include: {remote: 'https://example.com/ci.yml'}" + job, job: "remote", field: "script", want: `["r"]`},
		{name: "remote's project include", src: "include: https://example.com/project.yml" + job, job: "lib-local", field: "script", want: `["lib"]`},
		{name: "remote's local", src: "include: https://example.com/local.yml" + job, err: "Local file `local.yml` does not exist!"},
		{name: "remote inputs", src: "include: {remote: 'https://example.com/inputs.yml', inputs: {n: 2}}" + job, job: "j", field: "parallel", want: `{"total":2}`},
		{name: "remote timeout", src: "include: https://slow.example/ci.yml" + job, err: "Remote file `https://slow.example/ci.yml` could not be fetched because of a timeout error!"},
		{name: "remote status", src: "include: https://gone.example/ci.yml" + job, err: "Remote file `https://gone.example/ci.yml` could not be fetched because of HTTP code `404` error!"},
		{name: "remote blocked", src: "include: http://127.0.0.1/ci.yml" + job, err: "Remote file could not be fetched because URL is blocked: Requests to localhost are not allowed!"},
		{name: "remote socket", src: "include: https://nowhere.example/ci.yml" + job, err: "Remote file `https://nowhere.example/ci.yml` could not be fetched because of a socket error!"},
		{name: "remote empty", src: "include: https://example.com/empty.yml" + job, err: "Included file `https://example.com/empty.yml` is empty or does not exist!"},
		{name: "remote bad address", src: "include: {remote: 'ftp://x/ci.yml'}" + job, err: "Remote file `ftp://x/ci.yml` does not have a valid address!"},
		{name: "template", src: "include: {template: Auto-DevOps.gitlab-ci.yml}" + job, err: "Template file `Auto-DevOps.gitlab-ci.yml` could not be fetched because template includes are not supported!"},
		{name: "template bad name", src: "include: {template: Auto-DevOps.yml}" + job, err: "Template file `Auto-DevOps.yml` is not a valid location!"},
		{name: "artifact", src: "include: {artifact: gen.yml, job: gen}" + job, err: "Including configs from artifacts is only allowed when triggering child pipelines"},
		{name: "inputs through project", src: "include: {project: g/lib, file: inputs.yml, inputs: {name: deploy}}" + job, job: "deploy-job", field: "script", want: `["echo dep"]`},
		{name: "inputs default", src: "include: {project: g/lib, file: inputs.yml, inputs: {name: deploy}}" + job, job: "deploy-job", field: "stage", want: `"test"`},
		{name: "inputs required", src: "include: {project: g/lib, file: inputs.yml}" + job, err: "`inputs.yml`: `name` input: required value has not been provided"},
		{name: "inputs unknown", src: "include: {project: g/lib, file: inputs.yml, inputs: {name: a, x: 1, y: 2}}" + job, err: "`inputs.yml`: unknown input arguments: x, y"},
		{name: "inputs without header", src: "include: {project: g/lib, file: local.yml, inputs: {a: 1}}" + job, err: "`local.yml`: Given inputs not defined in the `spec` section of the included configuration file"},
		{name: "inputs not a hash", src: "include: {local: local.yml, inputs: [a]}" + job, err: "`{\"local\":\"local.yml\",\"inputs\":[\"a\"]}`: inputs should be a hash"},
	}, o)

	limited := Options{Fetch: w.fetch, MaxIncludes: 2}
	runLoadCases(t, []loadCase{
		{name: "max includes setting", src: "include: [{project: g/lib, file: tmpl.yml}]" + job, job: "lib", field: "script", want: `["lib-main"]`},
		{name: "max includes setting exceeded", src: "include: [{project: g/lib, file: tmpl.yml}, local.yml]" + job, err: "Maximum of 2 nested includes are allowed!"},
	}, limited)

	fail := Options{Fetch: func(Location) (Fetched, error) { return Fetched{}, errors.New("disk on fire") }}
	if _, err := Load([]byte("include: {project: g/lib, file: a.yml}"+job), fail); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Load with a failing Fetch: got %v; want its error", err)
	}
}

// TestLoad_includeLimits: 150 inclusions are allowed, the 151st is not;
// a cycle between projects ends at the limit; the bytes of all included
// files together are bounded.
func TestLoad_includeLimits(t *testing.T) {
	files := map[string]string{"one.yml": "one: {script: [x]}\n", "a.yml": "include: {project: g/b, file: b.yml}\n", "b.yml": "include: {project: g/a, file: a.yml}\n"}
	fetch := func(at Location) (Fetched, error) {
		s, ok := files[at.Path]
		if !ok {
			return Fetched{}, ErrFileNotFound
		}
		return Fetched{Data: []byte(s), Commit: "c"}, nil
	}
	list := func(n int) string {
		return "include: [" + strings.TrimSuffix(strings.Repeat("one.yml, ", n), ", ") + "]\njob: {script: x}"
	}
	runLoadCases(t, []loadCase{
		{name: "150", src: list(150), job: "one", field: "script", want: `["x"]`},
		{name: "151", src: list(151), err: "Maximum of 150 nested includes are allowed!"},
		{name: "cycle across projects", src: "include: {project: g/a, file: a.yml}\njob: {script: x}", err: "Maximum of 150 nested includes are allowed!"},
	}, Options{Fetch: fetch})

	files["big.yml"] = "big: {script: ['" + strings.Repeat("x", 900) + "']}\n"
	runLoadCases(t, []loadCase{
		{name: "total size", src: "include: [" + strings.TrimSuffix(strings.Repeat("big.yml, ", 12), ", ") + "]\njob: {script: x}", err: msgTotalTooBig},
	}, Options{Fetch: fetch, MaxBytes: 1000})
}

func TestLoad_inputs(t *testing.T) {
	header := func(spec string) string { return "spec:\n  inputs:\n" + spec + "\n---\n" }
	repo := func(m map[string]string) Options { return files(m) }
	const use = "job:\n  script: ['v=$[[ inputs.v ]]']\n  variables:\n    V: $[[ inputs.v ]]\n"
	o := repo(map[string]string{
		"str.yml":     header("    v: {default: a, options: [a, b], description: pick}") + use,
		"num.yml":     header("    v: {type: number, default: 1, options: [1, 2.5]}") + use,
		"bool.yml":    header("    v: {type: boolean, default: false}") + use,
		"arr.yml":     header("    v: {type: array, default: [x, y]}") + "job:\n  script: $[[ inputs.v ]]\n",
		"regex.yml":   header("    v: {regex: '^v\\d+$', default: v1}") + use,
		"badre.yml":   header("    v: {regex: '(', default: v1}") + use,
		"fn.yml":      header("    v: {default: 'hello-$CI_X'}") + "job: {script: ['$[[ inputs.v | expand_vars | truncate(0,8) ]]', '$[[ inputs.v|truncate(2,100) ]]']}\n",
		"fnarr.yml":   header("    v: {type: array, default: [a]}") + "job: {script: ['$[[ inputs.v | truncate(0,1) ]]']}\n",
		"fn4.yml":     header("    v: {default: a}") + "job: {script: ['$[[ inputs.v | expand_vars | expand_vars | expand_vars | expand_vars ]]']}\n",
		"nofn.yml":    header("    v: {default: a}") + "job: {script: ['$[[ inputs.v | upcase ]]']}\n",
		"key.yml":     header("    v: {default: a}") + "job: {script: ['$[[ inputs.w ]]']}\n",
		"access.yml":  header("    v: {default: a}") + "job: {script: ['$[[ inputs ]]']}\n",
		"keys.yml":    header("    v: {default: a, color: red}") + use,
		"type.yml":    header("    v: {type: date}") + use,
		"spec.yml":    "spec: {inputs: {}, component: [name]}\n---\njob: {script: x}\n",
		"optbool.yml": header("    v: {type: boolean, default: true, options: [true]}") + use,
		"nohead.yml":  "job: {script: ['$[[ inputs.v ]]']}\n",
		"three.yml":   "a: 1\n---\nb: 2\n---\nc: 3\n",
	})
	o.Variables = map[string]string{"CI_X": "world"}
	inc := func(file, inputs string) string {
		return "include: {local: " + file + ", inputs: " + inputs + "}\nmain: {script: x}"
	}
	runLoadCases(t, []loadCase{
		{name: "string default", src: inc("str.yml", "{}"), job: "job", field: "script", want: `["v=a"]`},
		{name: "string option", src: inc("str.yml", "{v: b}"), job: "job", field: "variables", want: `[{"key":"V","value":"b"}]`},
		{name: "string not an option", src: inc("str.yml", "{v: c}"), err: "`str.yml`: `v` input: `c` cannot be used because it is not in the list of allowed options"},
		{name: "string not a string", src: inc("str.yml", "{v: 1}"), err: "`str.yml`: `v` input: provided value is not a string, `v` input: `1` cannot be used because it is not in the list of allowed options"},
		{name: "number", src: inc("num.yml", "{v: 2.5}"), job: "job", field: "script", want: `["v=2.5"]`},
		{name: "number not an option", src: inc("num.yml", "{v: 3}"), err: "`num.yml`: `v` input: `3` cannot be used because it is not in the list of the allowed options"},
		{name: "number not a number", src: inc("num.yml", "{v: '1'}"), err: "`num.yml`: `v` input: provided value is not a number, `v` input: `1` cannot be used because it is not in the list of the allowed options"},
		{name: "boolean", src: inc("bool.yml", "{v: true}"), job: "job", field: "variables", want: `[{"key":"V","value":"true"}]`},
		{name: "boolean not a boolean", src: inc("bool.yml", "{v: 'yes'}"), err: "`bool.yml`: `v` input: provided value is not a boolean"},
		{name: "boolean options", src: inc("optbool.yml", "{}"), err: "`optbool.yml`: `v` input: Options can only be used with string and number inputs"},
		{name: "array whole", src: inc("arr.yml", "{}"), job: "job", field: "script", want: `["x","y"]`},
		{name: "array given", src: inc("arr.yml", "{v: [z]}"), job: "job", field: "script", want: `["z"]`},
		{name: "array not an array", src: inc("arr.yml", "{v: z}"), err: "`arr.yml`: `v` input: provided value is not an array"},
		{name: "regex", src: inc("regex.yml", "{v: v22}"), job: "job", field: "script", want: `["v=v22"]`},
		{name: "regex mismatch", src: inc("regex.yml", "{v: x1}"), err: "`regex.yml`: `v` input: provided value does not match required RegEx pattern"},
		{name: "regex invalid", src: inc("badre.yml", "{}"), err: "`badre.yml`: `v` input: invalid regular expression"},
		{name: "functions", src: inc("fn.yml", "{}"), job: "job", field: "script", want: `["hello-wo","llo-$CI_X"]`},
		{name: "function on an array", src: inc("fnarr.yml", "{}"), err: "`fnarr.yml`: error in `truncate` function: invalid input type: truncate can only be used with string inputs"},
		{name: "too many functions", src: inc("fn4.yml", "{}"), err: "`fn4.yml`: too many functions in interpolation block"},
		{name: "unknown function", src: inc("nofn.yml", "{}"), err: "`nofn.yml`: no function matching `upcase`: check that the function name, arguments, and types are correct"},
		{name: "unknown key", src: inc("key.yml", "{}"), err: "`key.yml`: unknown interpolation key: `w`"},
		{name: "access pattern", src: inc("access.yml", "{}"), err: "`access.yml`: invalid interpolation access pattern"},
		{name: "unknown spec key", src: inc("keys.yml", "{}"), err: "`keys.yml`: header:spec:inputs:v config contains unknown keys: color"},
		{name: "unknown type", src: inc("type.yml", "{}"), err: "`type.yml`: header:spec:inputs:v input type unknown value: date"},
		{name: "unknown spec section", src: inc("spec.yml", "{}"), err: "`spec.yml`: header:spec config contains unknown keys: component"},
		{name: "no header left alone", src: "include: nohead.yml\nmain: {script: x}", job: "job", field: "script", want: `["$[[ inputs.v ]]"]`},
		{name: "three documents", src: "include: three.yml\nmain: {script: x}", err: "`three.yml`: The parsed YAML has too many documents"},
	}, o)

	// The project's own file: a header with defaults, or the pipeline's
	// inputs.
	own := "spec:\n  inputs:\n    env: {default: staging, options: [staging, production]}\n---\ndeploy:\n  script: ['deploy $[[ inputs.env ]]']\n  environment: $[[ inputs.env ]]\n"
	cfg, err := Load([]byte(own), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, cfg, "deploy", "script"); got != `["deploy staging"]` {
		t.Errorf("own header default: script = %s", got)
	}
	cfg, err = Load([]byte(own), Options{Inputs: map[string]any{"env": "production"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, cfg, "deploy", "script"); got != `["deploy production"]` {
		t.Errorf("own header input: script = %s", got)
	}
	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"env": "dev"}, "`env` input: `dev` cannot be used because it is not in the list of allowed options"},
		{map[string]any{"x": "1"}, "unknown input arguments: x"},
	} {
		if _, err := Load([]byte(own), Options{Inputs: c.in}); err == nil || err.Error() != c.want {
			t.Errorf("Load with inputs %v: %v; want %q", c.in, err, c.want)
		}
	}
	// A header without its content is not a header: spec: is a job.
	if _, err := Load([]byte("spec: {inputs: {a: {default: 1}}}\n"), Options{}); err == nil || err.Error() != "jobs spec config should implement the script:, run:, or trigger: keyword" {
		t.Errorf("lone spec: %v", err)
	}
}

func TestInterpolate_blocks(t *testing.T) {
	inputs := map[string]any{"s": "text", "n": int64(3), "b": true, "a": []any{"x", int64(1)}}
	for _, c := range []struct{ in, want string }{
		{"$[[ inputs.s ]]", "text"},
		{"pre-$[[ inputs.s ]]-$[[inputs.n]]-$[[ inputs.b ]]", "pre-text-3-true"},
		{"$[[ inputs.a ]] in", `["x", 1] in`},
		{"$[[ inputs.s | truncate(1, 2) ]]", "ex"},
		{"$[[ inputs.s | truncate(10,2) ]]", ""},
		{"$[[ x ]]", "$[[ x ]]"},
		{"$[[ xy ]]", ""},
		{"no block", "no block"},
	} {
		got, errs := interpolate(c.in, inputs, nil)
		if c.in == "$[[ xy ]]" {
			if len(errs) != 1 || errs[0] != "invalid interpolation access pattern" {
				t.Errorf("interpolate(%q): %v, %v", c.in, got, errs)
			}
			continue
		}
		if len(errs) > 0 || fmt.Sprint(got) != c.want {
			t.Errorf("interpolate(%q) = %v, %v; want %q", c.in, got, errs, c.want)
		}
	}
	if got, _ := interpolate("$[[ inputs.n ]]", inputs, nil); got != int64(3) {
		t.Errorf("a whole block keeps its type: got %#v", got)
	}
}
