package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B_2": "beta", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$A", "alpha"},
		{"${A}", "alpha"},
		{"x$A-y", "xalpha-y"},
		{"$A$B_2", "alphabeta"},
		{"${A}_suffix", "alpha_suffix"},
		{"$A_suffix", ""}, // the name runs on
		{"$UNKNOWN!", "!"},
		{"${UNKNOWN}", ""},
		{"$$A", "$A"},
		{"$$$A", "$alpha"},
		{"cost $5", "cost $5"},
		{"$", "$"},
		{"a$", "a$"},
		{"${", "${"},
		{"${A", "${A"},
		{"${not valid}", "${not valid}"},
		{"${}", "${}"},
		{"$EMPTY|", "|"},
		{"$-x $? $*", "$-x $? $*"},
	} {
		if got := expand(tc.in, lookup); got != tc.want {
			t.Errorf("expand(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzExpand(f *testing.F) {
	f.Add("a $B ${C} $$ ${ $")
	f.Fuzz(func(t *testing.T, s string) {
		got := expand(s, func(string) (string, bool) { return "", false })
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("expand(%q) = %q without a $", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("expand(%q) = %q grew with empty variables", s, got)
		}
	})
}

func TestResolveVariables(t *testing.T) {
	dir := t.TempDir()
	env, err := resolveVariables([]variable{
		{Key: "BASE", Value: "one"},
		{Key: "DERIVED", Value: "$BASE/${BASE}"},
		{Key: "RAW", Value: "$BASE", Raw: true},
		{Key: "FILE", Value: "content $BASE", File: true},
		{Key: "RAWFILE", Value: "content $BASE", File: true, Raw: true},
		{Key: "USES_FILE", Value: "path=$FILE"},
		{Key: "BASE", Value: "two"},
		{Key: "LATER", Value: "$BASE"},
		{Key: "FORWARD", Value: "$NOT_YET"},
		{Key: "NOT_YET", Value: "x"},
		{Key: "BAD=KEY", Value: "dropped"},
		{Key: "", Value: "dropped"},
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	filePath := filepath.Join(dir, "FILE")
	want := []string{
		"BASE=two", "DERIVED=one/one", "RAW=$BASE", "FILE=" + filePath, "RAWFILE=" + filepath.Join(dir, "RAWFILE"),
		"USES_FILE=path=" + filePath, "LATER=two", "FORWARD=", "NOT_YET=x",
	}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("env\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
	for name, content := range map[string]string{"FILE": "content one", "RAWFILE": "content $BASE"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != content {
			t.Errorf("file of %s: %q, %v; want %q", name, b, err, content)
		}
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o600 {
			t.Errorf("file of %s has mode %v", name, fi.Mode())
		}
	}
}

func TestFileVarName(t *testing.T) {
	for in, want := range map[string]string{"KUBECONFIG": "KUBECONFIG", "a/b": "a_b", "..": "_..", ".": "_.", "x.y-z": "x.y-z"} {
		if got := fileVarName(in); got != want {
			t.Errorf("fileVarName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestInheritedEnv(t *testing.T) {
	t.Setenv("QUARRY_ROOT_PASSWORD", "secret")
	t.Setenv("GIT_DIR", "/somewhere")
	t.Setenv("RUNNER_TEST_KEEP", "kept")
	env := strings.Join(inheritedEnv(), "\n")
	if strings.Contains(env, "QUARRY_ROOT_PASSWORD") || strings.Contains(env, "GIT_DIR=") || !strings.Contains(env, "RUNNER_TEST_KEEP=kept") {
		t.Errorf("inherited environment:\n%s", env)
	}
}
