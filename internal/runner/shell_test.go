package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestStepScript(t *testing.T) {
	got := stepScript([]string{"echo 'hi'", "  ", "make test", "if true; then\n  echo yes\nfi"})
	want := "set -eo pipefail\nset +o noclobber\n" +
		"printf '%s\\n' '\x1b[32;1m$ echo '\"'\"'hi'\"'\"'\x1b[0;m'\necho 'hi'\n" +
		"printf '%s\\n' '\x1b[32;1m$ make test\x1b[0;m'\nmake test\n" +
		"printf '%s\\n' '\x1b[32;1m$ if true; then # collapsed multi-line command\x1b[0;m'\nif true; then\n  echo yes\nfi\n"
	if got != want {
		t.Errorf("script\n%q\nwant\n%q", got, want)
	}
}

// syncBuffer is a bytes.Buffer safe for the copying goroutine and the
// test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runLines(t *testing.T, ctx context.Context, env []string, lines ...string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(file, []byte(stepScript(lines)), 0o700); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	err = runScript(ctx, bash, file, dir, env, &out)
	return out.String(), err
}

func TestRunScript(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
		code  int
	}{
		{"echo and output", []string{"echo one", "echo two >&2"}, "\x1b[32;1m$ echo one\x1b[0;m\none\n\x1b[32;1m$ echo two >&2\x1b[0;m\ntwo\n", 0},
		{"stops at the first failure", []string{"echo a", "false", "echo never"}, "\x1b[32;1m$ echo a\x1b[0;m\na\n\x1b[32;1m$ false\x1b[0;m\n", 1},
		{"exit code", []string{"exit 42"}, "\x1b[32;1m$ exit 42\x1b[0;m\n", 42},
		{"pipefail", []string{"false | cat"}, "\x1b[32;1m$ false | cat\x1b[0;m\n", 1},
		{"one shell", []string{"X=kept", "echo $X"}, "\x1b[32;1m$ X=kept\x1b[0;m\n\x1b[32;1m$ echo $X\x1b[0;m\nkept\n", 0},
		{"environment", []string{"echo $JOB_VAR"}, "\x1b[32;1m$ echo $JOB_VAR\x1b[0;m\nfrom env\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runLines(t, ctx, []string{"PATH=" + os.Getenv("PATH"), "JOB_VAR=from env"}, tc.lines...)
			code := 0
			var se *scriptError
			if errors.As(err, &se) {
				code = se.Code
			} else if err != nil {
				t.Fatal(err)
			}
			if out != tc.want || code != tc.code {
				t.Errorf("got %q, exit %d; want %q, exit %d", out, code, tc.want, tc.code)
			}
		})
	}
}

// gone waits (at most 10 s) for the killed process pid to end. Under
// leaktest this process is a subreaper, so the orphan is its child: it is
// reaped here.
func gone(pid int) bool {
	done := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		done <- err
	}()
	select {
	case err := <-done:
		return err == nil || !alive(pid) // ECHILD: not ours to wait for
	case <-time.After(10 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		<-done
		return false
	}
}

// alive reports whether pid runs (a zombie is dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// watchWriter collects output and closes seen once it holds marker.
type watchWriter struct {
	syncBuffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.marker) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// Canceling the context kills the whole process group, a background
// child included, and returns at once.
func TestRunScript_cancelKillsTheGroup(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(file, []byte(stepScript([]string{"sleep 300 &", "echo pid=$!.", "wait"})), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &watchWriter{marker: ".\n", seen: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- runScript(ctx, bash, file, dir, []string{"PATH=" + os.Getenv("PATH")}, out) }()
	select {
	case <-out.seen:
	case <-time.After(20 * time.Second):
		t.Fatalf("the script did not start: %q", out.String())
	}
	_, rest, _ := strings.Cut(out.String(), "\npid=")
	rest, _, _ = strings.Cut(rest, ".")
	pid, _ := strconv.Atoi(rest)
	cancel()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("runScript did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v; want context.Canceled", err)
	}
	if pid <= 0 {
		t.Fatalf("no pid in %q", out.String())
	}
	if !gone(pid) {
		t.Errorf("background process %d survived the cancel (output %q)", pid, out.String())
	}
}

// A background process left behind by a finished script is killed, and
// does not hold the step open.
func TestRunScript_killsLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	out, err := runLines(t, context.Background(), []string{"PATH=" + os.Getenv("PATH")},
		"sleep 300 &", "echo $! > "+shellQuote(pidFile), "echo done")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "done\n") {
		t.Errorf("output %q", out)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("step took %v: the leftover held it", d)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 {
		t.Fatalf("no pid in %q", b)
	}
	if !gone(pid) {
		t.Errorf("leftover process %d still ran", pid)
	}
}
