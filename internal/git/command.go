// Package git runs the git binary safely: commands are values checked
// against an allow-list of subcommands, user input goes only after
// --end-of-options or "--", the environment is fixed (no system or global
// configuration, no prompts, C locale) and every process dies with its
// context.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Flag is one command-line option: "--name=value" for long options, "-n
// value" (two words) for short ones, or just the name when Value is empty.
// Flag names come from code, never from users.
type Flag struct {
	Name  string
	Value string
}

func (f Flag) String() string {
	if f.Value == "" {
		return f.Name
	}
	return f.Name + "=" + f.Value
}

// Command is one git invocation.
type Command struct {
	Name string // subcommand, must be in the allow-list
	// Sub is the subcommand's own verb ("write" of commit-graph), placed
	// before the flags.
	Sub   string
	Flags []Flag
	// Args are positional arguments (revisions, ref names). They may come
	// from users and are placed after --end-of-options where the
	// subcommand supports it, and must not start with "-" otherwise.
	Args []string
	// PathArgs follow a "--" separator.
	PathArgs []string
	// Env adds variables (e.g. GIT_INDEX_FILE, author identity).
	Env []string
}

// description says how a subcommand treats its arguments.
type description struct {
	// endOfOptions: the subcommand understands --end-of-options.
	endOfOptions bool
}

// allowed lists the subcommands Quarry runs.
var allowed = map[string]description{
	"init":          {},
	"cat-file":      {endOfOptions: true},
	"commit-tree":   {endOfOptions: true},
	"count-objects": {},
	"fetch":         {endOfOptions: true},
	"for-each-ref":  {endOfOptions: true},
	"hash-object":   {endOfOptions: true},
	"ls-tree":       {endOfOptions: true},
	"mktree":        {},
	"read-tree":     {endOfOptions: true},
	"rev-list":      {endOfOptions: true},
	"rev-parse":     {endOfOptions: true},
	"symbolic-ref":  {},
	"update-index":  {},
	"update-ref":    {endOfOptions: true},
	"write-tree":    {},
	"config":        {},
	"archive":       {},
	"blame":         {}, // git 2.39 blame rejects --end-of-options; its one arg is a commit id
	"diff-tree":     {endOfOptions: true},
	"merge-base":    {endOfOptions: true},
	"merge-tree":    {endOfOptions: true}, // --write-tree only: writes objects, never refs
	"log":           {endOfOptions: true},
	"show-ref":      {},
	"upload-pack":   {},
	"receive-pack":  {},
	"shortlog":      {},
	"tag":           {},
	"http-backend":  {},
	"commit-graph":  {},
	"pack-refs":     {},
	"gc":            {},
	"clean":         {}, // the runner's reused work trees (pathspec :/ only)
	"ls-files":      {}, // the runner's untracked artifacts (pathspec :/ only)
	"repack":        {},
	"version":       {}, // part of the pack cache's keys
	"fsck":          {}, // a storage move's check of its copy
	"prune":         {}, // housekeeping: --expire=<date> only, never "now"
	"bundle":        {}, // group export and import: a wiki as one file (create --all, list-heads of our own file)
	// checkout: the CI runner's work tree (GIT_WORK_TREE); git 2.39
	// checkout rejects --end-of-options, its one arg is a commit id.
	"checkout": {},

	// git over SSH: `git archive --remote`.
	"upload-archive": {},
}

// CommandLine renders the command line (without "git"), refusing subcommands
// off the allow-list and option-like arguments where git cannot be told
// where options end.
func (c Command) CommandLine() ([]string, error) {
	desc, ok := allowed[c.Name]
	if !ok {
		return nil, fmt.Errorf("git %s is not allowed", c.Name)
	}
	out := []string{c.Name}
	if c.Sub != "" {
		if strings.HasPrefix(c.Sub, "-") {
			return nil, fmt.Errorf("git %s: verb %q looks like an option", c.Name, c.Sub)
		}
		out = append(out, c.Sub)
	}
	for _, f := range c.Flags {
		if !strings.HasPrefix(f.Name, "-") {
			return nil, fmt.Errorf("git %s: flag %q must start with -", c.Name, f.Name)
		}
		if f.Value != "" && !strings.HasPrefix(f.Name, "--") {
			out = append(out, f.Name, f.Value)
			continue
		}
		out = append(out, f.String())
	}
	if len(c.Args) > 0 {
		if desc.endOfOptions {
			out = append(out, "--end-of-options")
		} else {
			for _, a := range c.Args {
				if strings.HasPrefix(a, "-") {
					return nil, fmt.Errorf("git %s: argument %q looks like an option", c.Name, a)
				}
			}
		}
		out = append(out, c.Args...)
	}
	if len(c.PathArgs) > 0 {
		out = append(out, "--")
		out = append(out, c.PathArgs...)
	}
	return out, nil
}

// Runner starts git processes with a fixed environment.
type Runner struct {
	bin  string
	env  []string
	home string
	// observer, when set, sees every process started (Observe).
	observer atomic.Pointer[func(gitDir, name string)]
}

// Observe calls fn with the git directory and subcommand of every process
// the runner starts from now on (nil stops it); fn must be quick and safe
// for concurrent use. Tests count processes with it.
func (r *Runner) Observe(fn func(gitDir, name string)) {
	if fn == nil {
		r.observer.Store(nil)
		return
	}
	r.observer.Store(&fn)
}

// NewRunner returns a runner for the git on PATH (or bin when set).
// scratch is a folder for git's HOME.
func NewRunner(bin, scratch string) (*Runner, error) {
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("git"); err != nil {
			return nil, fmt.Errorf("git binary: %w", err)
		}
	}
	if err := os.MkdirAll(scratch, 0o750); err != nil {
		return nil, fmt.Errorf("git home: %w", err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + scratch,
		"LC_ALL=C",
		"LANG=C",
		"TZ=UTC",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ASKPASS=/bin/true",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_AUTO_GC=0",
	}
	return &Runner{bin: bin, env: env, home: scratch}, nil
}

// Error is a failed git command with what it printed on stderr.
type Error struct {
	Args   []string
	Code   int
	Stderr string
	err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.err, strings.TrimSpace(e.Stderr))
}

func (e *Error) Unwrap() error { return e.err }

// Options are the per-call inputs of a command.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer // default: returned by Run
}

// Run runs c in the repository at gitDir ("" for none) and returns its
// stdout. A non-zero exit is an *Error.
func (r *Runner) Run(ctx context.Context, gitDir string, c Command, o Options) ([]byte, error) {
	args, err := c.CommandLine()
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := r.command(ctx, gitDir, c, args)
	cmd.Stdin = o.Stdin
	cmd.Stdout = &stdout
	if o.Stdout != nil {
		cmd.Stdout = o.Stdout
	}
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 64 << 10}
	if err := cmd.Run(); err != nil {
		ge := &Error{Args: args, Stderr: stderr.String(), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.Code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			ge.err = ctx.Err()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// Start starts c with pipes the caller drives; Wait must be called.
func (r *Runner) Start(ctx context.Context, gitDir string, c Command) (*Process, error) {
	args, err := c.CommandLine()
	if err != nil {
		return nil, err
	}
	cmd := r.command(ctx, gitDir, c, args)
	p := &Process{cmd: cmd, args: args}
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.Stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	cmd.Stderr = &limitedBuffer{b: &p.stderr, max: 64 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start git %s: %w", c.Name, err)
	}
	return p, nil
}

func (r *Runner) command(ctx context.Context, gitDir string, c Command, args []string) *exec.Cmd {
	if fn := r.observer.Load(); fn != nil {
		(*fn)(gitDir, c.Name)
	}
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Env = append(append([]string{}, r.env...), c.Env...)
	if gitDir != "" {
		cmd.Env = append(cmd.Env, "GIT_DIR="+gitDir)
		cmd.Dir = gitDir
	} else {
		cmd.Dir = r.home
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Process is a running git command.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	cmd    *exec.Cmd
	args   []string
	stderr bytes.Buffer
}

// Wait waits for the process and reports a failure as *Error.
func (p *Process) Wait() error {
	if err := p.cmd.Wait(); err != nil {
		ge := &Error{Args: p.args, Stderr: p.stderr.String(), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.Code = ee.ExitCode()
		}
		return ge
	}
	return nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

// ObjectID is a hex object name.
type ObjectID string

// ZeroOID is the all-zero object name git uses for "no object".
const ZeroOID ObjectID = "0000000000000000000000000000000000000000"

// ValidRefName reports whether name is safe to hand to git as a branch or
// tag name: git's own rules plus no leading "-".
func ValidRefName(name string) bool {
	if name == "" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") ||
		strings.Contains(name, "//") || strings.Contains(name, "@{") || name == "@" {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}
