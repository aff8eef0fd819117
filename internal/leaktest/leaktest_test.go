package leaktest_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"quarry/internal/leaktest"
)

// demoEnv makes TestLeakDemo leak; the binary then runs as a child of
// TestMain_reportsLeaks.
const demoEnv = "LEAKTEST_DEMO"

func TestMain(m *testing.M) {
	if os.Getenv(demoEnv) != "" {
		leaktest.Main(m, leaktest.Grace(300*time.Millisecond))
	}
	leaktest.Main(m)
}

// TestLeakDemo leaks a goroutine and a git process when asked to.
func TestLeakDemo(t *testing.T) {
	switch os.Getenv(demoEnv) {
	case "":
		t.Skip("runs only as the child of TestMain_reportsLeaks")
	case "clean":
		done := make(chan struct{})
		go func() { close(done) }()
		<-done
	case "leak":
		go leakyWorker(make(chan struct{}))
		httptest.NewServer(http.NotFoundHandler()) // never closed
		cmd := exec.Command("git", "cat-file", "--batch-check")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		heldOpen = in // never closed: git waits for input forever
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
}

func leakyWorker(never chan struct{}) { <-never }

// heldOpen keeps the leaked git's input from being closed by the garbage
// collector.
var heldOpen any

func runDemo(t *testing.T, mode string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeakDemo$", "-test.count=1")
	cmd.Env = append(os.Environ(), demoEnv+"="+mode)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// A binary whose tests leak exits 1 with a readable report, though every
// test passed; a clean one exits 0.
func TestMain_reportsLeaks(t *testing.T) {
	code, out := runDemo(t, "leak")
	if code != 1 {
		t.Errorf("exit %d; want 1\n%s", code, out)
	}
	for _, want := range []string{"PASS", "goroutine(s) started by the tests still run 300ms after them", "leaktest_test.leakyWorker",
		"[chan receive]", "net/http.(*Server).Serve", "1 git process(es)", "git cat-file --batch-check"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	code, out = runDemo(t, "clean")
	if code != 0 || strings.Contains(out, "leaktest:") {
		t.Errorf("clean run: exit %d\n%s", code, out)
	}
}

func TestLeaked_findsNewGoroutinesOnly(t *testing.T) {
	before := map[int64]bool{}
	for _, g := range leaktest.Goroutines() {
		before[g.ID] = true
	}
	stop := make(chan struct{})
	started := make(chan struct{})
	go func() {
		close(started)
		leakyWorker(stop)
	}()
	<-started
	waitFor(t, func() bool { return len(leaktest.Leaked(before)) == 1 })
	g := leaktest.Leaked(before)[0]
	if g.State != "chan receive" || !strings.Contains(strings.Join(g.Funcs, " "), "leaktest_test.leakyWorker") ||
		!strings.HasPrefix(g.CreatedBy, "quarry/internal/leaktest_test.TestLeaked_findsNewGoroutinesOnly") {
		t.Errorf("leaked %+v", g)
	}
	if got := leaktest.Leaked(before, "quarry/internal/leaktest_test.leakyWorker"); len(got) != 0 {
		t.Errorf("ignored function still reported: %+v", got)
	}
	close(stop)
	waitFor(t, func() bool { return len(leaktest.Leaked(before)) == 0 })
}

func TestGitProcesses_childrenAndOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	running := func(pid int) bool {
		ps, err := leaktest.GitProcesses()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.PID == pid {
				return true
			}
		}
		return false
	}

	// A child: found while it runs, gone once it has exited.
	cmd := exec.Command("git", "cat-file", "--batch-check")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !running(cmd.Process.Pid) {
		t.Error("running git child not found")
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if running(cmd.Process.Pid) {
		t.Error("exited git child still reported")
	}

	// An orphan: its shell parent exits at once; TestMain made this
	// process its reaper, so it is still ours.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", "git cat-file --batch-check <&3 >/dev/null 2>&1 & echo $!")
	sh.ExtraFiles = []*os.File{r}
	out, err := sh.Output()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("shell said %q", out)
	}
	waitFor(t, func() bool { return running(pid) })
	w.Close() // the orphan reads end of input and exits
	waitFor(t, func() bool { return !running(pid) })
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, 0, nil) // reap the adopted zombie
}

func TestGoroutines_parsesDump(t *testing.T) {
	for _, g := range leaktest.Goroutines() {
		if g.ID == 0 || g.State == "" || len(g.Funcs) == 0 || g.Stack == "" {
			t.Errorf("parsed %+v", g)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
