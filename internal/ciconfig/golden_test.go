package ciconfig

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from what Load and Seed answer")

// goldenInput is a golden file's Input, written in its "# input: " line;
// Exists lists the commit's files (matched with MatchGlob).
type goldenInput struct {
	Source       string            `json:"source"`
	Ref          string            `json:"ref"`
	Tag          bool              `json:"tag"`
	ProjectPath  string            `json:"project_path"`
	Variables    map[string]string `json:"variables"`
	Changes      []string          `json:"changes"`
	ChangesKnown bool              `json:"changes_known"`
	Exists       []string          `json:"exists"`
}

// goldenResult is a golden file's expected plan.
type goldenResult struct {
	LoadError *Error    `json:"load_error,omitempty"`
	Config    *Config   `json:"config,omitempty"`
	SeedError *Error    `json:"seed_error,omitempty"`
	Pipeline  *Pipeline `json:"pipeline,omitempty"`
}

// TestGolden loads each testdata/golden/*.yml (its included files in the
// directory of the same name), seeds it for the Input of its header,
// and compares the configuration and the plan with the .json beside it.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.yml")
	if err != nil || len(paths) < 10 {
		t.Fatalf("golden files: %v, %v", paths, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := marshalGolden(t, goldenRun(t, src, strings.TrimSuffix(path, ".yml")))
			want := strings.TrimSuffix(path, ".yml") + ".json"
			if *update {
				if err := os.WriteFile(want, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			expected, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, expected) {
				t.Errorf("%s differs from what Load and Seed answer (run with -update to see how)", want)
			}
		})
	}
}

func goldenRun(t *testing.T, src []byte, dir string) goldenResult {
	var in goldenInput
	for _, line := range strings.Split(string(src), "\n") {
		if s, ok := strings.CutPrefix(line, "# input: "); ok {
			if err := json.Unmarshal([]byte(s), &in); err != nil {
				t.Fatalf("input line: %v", err)
			}
		}
	}
	// Local files are in dir; a project's files in dir/projects/<path>
	// (read at commit "<path>@<ref>"), its local includes there too.
	opts := Options{Variables: in.Variables, Fetch: func(at Location) (Fetched, error) {
		p, commit := filepath.Join(dir, filepath.FromSlash(at.Path)), ""
		switch {
		case at.Kind == IncludeProject:
			p, commit = filepath.Join(dir, "projects", filepath.FromSlash(at.Project), filepath.FromSlash(at.Path)), at.Project+"@"+at.Ref
		case at.Kind == IncludeLocal && at.Project != "":
			p = filepath.Join(dir, "projects", filepath.FromSlash(at.Project), filepath.FromSlash(at.Path))
		case at.Kind == IncludeRemote:
			return Fetched{}, ErrRemoteSocket
		}
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return Fetched{}, ErrFileNotFound
		}
		return Fetched{Data: data, Commit: commit}, err
	}}
	var r goldenResult
	c, err := Load(src, opts)
	if err != nil {
		r.LoadError = asError(t, err)
		return r
	}
	r.Config = c
	input := Input{Source: in.Source, Ref: in.Ref, Tag: in.Tag, ProjectPath: in.ProjectPath, Variables: in.Variables,
		Changes: in.Changes, ChangesKnown: in.ChangesKnown, Exists: func(glob string) bool {
			for _, f := range in.Exists {
				if MatchGlob(glob, f) {
					return true
				}
			}
			return false
		}}
	p, err := c.Seed(input)
	if err != nil {
		r.SeedError = asError(t, err)
		return r
	}
	r.Pipeline = &p
	return r
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	ce, ok := err.(*Error)
	if !ok {
		t.Fatalf("not an *Error: %v", err)
	}
	return ce
}

func marshalGolden(t *testing.T, r goldenResult) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
