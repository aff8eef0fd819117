// Package gittest builds git repositories for tests with the real git: a
// fixed identity, fixed dates, no system or global configuration, so that
// the same description always gives the same object ids.
//
//	repo := gittest.NewRepo(t)
//	c1 := gittest.Commit(t, repo, gittest.Files{"README.md": "hi\n", "src/a.go": "package a\n"},
//		gittest.Branch("main"), gittest.Message("first"))
//	c2 := gittest.Commit(t, repo, gittest.Files{"src/a.go": "package a // 2\n"},
//		gittest.Branch("main"), gittest.Message("second\n\nChangelog: added"))
//	gittest.Tag(t, repo, "v1.0.0", c2, "release 1.0.0")
//
// Every function fails the test (t.Fatal) on an error, so it must be called
// from the test's goroutine. git runs to completion inside each call; no
// process outlives it.
package gittest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// gitEnv is the environment of every git this package runs: the caller's,
// without configuration from the system or the user, in the C locale,
// never prompting, with the identity of Run.
func gitEnv(extra []string) []string {
	e := append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	return append(e, extra...)
}

// Run runs git in dir and returns its trimmed output, failing the test on
// an error. env adds (or, named again, overrides) environment variables.
func Run(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitError is a failed git with what it said.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	return "git " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.stderr
}

func (e *gitError) Unwrap() error { return e.err }

// run runs git in dir with stdin and returns its standard output untouched.
func run(dir string, extraEnv []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(extraEnv)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &gitError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// exitCode is git's exit status, or -1 when err is not an exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
