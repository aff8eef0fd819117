package gittest

import (
	"path/filepath"
	"strings"
	"testing"
)

// NewRepo creates an empty bare repository in a fresh t.TempDir() and
// returns its path. HEAD names refs/heads/main; objects use SHA-1.
func NewRepo(t testing.TB) string {
	t.Helper()
	return InitRepo(t, filepath.Join(t.TempDir(), "repo.git"))
}

// InitRepo creates an empty bare repository at path (its parent folders
// too), for tests that need it at a given place such as a storage's hashed
// path, and returns path. HEAD names refs/heads/main.
func InitRepo(t testing.TB, path string) string {
	t.Helper()
	if _, err := run("", nil, nil, "init", "--bare", "--quiet", "--initial-branch=main", "--", path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Ref returns the object id a ref (or any revision) names in repo, or ""
// when it names nothing.
func Ref(t testing.TB, repo, rev string) string {
	t.Helper()
	out, err := run(repo, nil, nil, "--git-dir="+repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev)
	if exitCode(err) == 1 {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// UpdateRef points ref (a full name: "refs/heads/dev") at rev, whatever it
// pointed at before, and returns the id it now holds.
func UpdateRef(t testing.TB, repo, ref, rev string) string {
	t.Helper()
	id := mustResolve(t, repo, rev+"^{object}")
	if _, err := run(repo, nil, nil, "--git-dir="+repo, "update-ref", "--end-of-options", ref, id); err != nil {
		t.Fatal(err)
	}
	return id
}

// DeleteRef removes ref (a full name); it fails the test when ref does not
// exist.
func DeleteRef(t testing.TB, repo, ref string) {
	t.Helper()
	id := mustResolve(t, repo, ref)
	if _, err := run(repo, nil, nil, "--git-dir="+repo, "update-ref", "-d", "--end-of-options", ref, id); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path at rev, byte for byte.
func ReadFile(t testing.TB, repo, rev, path string) string {
	t.Helper()
	out, err := run(repo, nil, nil, "--git-dir="+repo, "cat-file", "blob", rev+":"+path)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// mustResolve is Ref that fails the test when rev names nothing.
func mustResolve(t testing.TB, repo, rev string) string {
	t.Helper()
	id := Ref(t, repo, rev)
	if id == "" {
		t.Fatalf("gittest: %q names nothing in %s", rev, repo)
	}
	return id
}
