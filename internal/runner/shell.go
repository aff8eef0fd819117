package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ANSI styles of the lines the runner writes into job logs, as
// gitlab-runner colours them.
const (
	ansiReset     = "\x1b[0;m"
	ansiBoldGreen = "\x1b[32;1m"
	ansiBoldRed   = "\x1b[31;1m"
	ansiBoldCyan  = "\x1b[36;1m"
	ansiYellow    = "\x1b[0;33m"
	ansiClearLine = "\x1b[0K"
)

// stepScript is the bash program of one step: errexit and pipefail, then
// each script line echoed in green behind "$ " (a multi-line entry shows
// its first line and "# collapsed multi-line command") and run, in one
// shell, as gitlab-runner does.
func stepScript(lines []string) string {
	var b strings.Builder
	b.WriteString("set -eo pipefail\nset +o noclobber\n")
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		shown := l
		if first, _, multi := strings.Cut(strings.TrimSpace(l), "\n"); multi {
			shown = first + " # collapsed multi-line command"
		}
		b.WriteString("printf '%s\\n' ")
		b.WriteString(shellQuote(ansiBoldGreen + "$ " + shown + ansiReset))
		b.WriteByte('\n')
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// scriptError is a script that ran and exited with a non-zero status.
type scriptError struct{ Code int }

func (e *scriptError) Error() string { return "exit code " + strconv.Itoa(e.Code) }

// runScript runs `bash <path>` in dir with env, its output (stdout and
// stderr together) written to out as it comes. The shell leads its own
// process group: when ctx is done the whole group is killed, and when the
// shell exits, whatever it left running in its group is killed too (a
// background process would otherwise hold the log open). A non-zero exit
// is a *scriptError; a killed script returns ctx's error.
func runScript(ctx context.Context, bash, path, dir string, env []string, out io.Writer) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(bash, path)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	pw.Close() // the children hold the write end now
	pgid := cmd.Process.Pid
	kill := func() { syscall.Kill(-pgid, syscall.SIGKILL) }

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(out, pr)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		kill()
		werr = <-waited
	}
	kill() // the shell is gone; so is the rest of its group
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		// Something outside the group (setsid) holds the pipe: stop
		// reading.
	}
	pr.Close()
	<-copied

	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return &scriptError{Code: code}
		}
		return werr // killed by a signal from outside
	}
	return werr
}
