// Package leaktest fails a test binary that leaves goroutines or git
// processes behind. Use it from TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
//
// After the package's tests, Main waits up to a grace period (5s) for
// everything the tests started to stop, then reports:
//   - goroutines that did not exist before the tests ran, leaving out the
//     runtime's own and the permanent signal-delivery goroutine of
//     os/signal;
//   - git processes (git, git-*: cat-file, http-backend, upload-pack, …)
//     descending from the test process, found in /proc. On Linux the test
//     process becomes a child subreaper, so a git process whose parent
//     died (a server binary killed by a test) is still counted. Exited but
//     unreaped processes (zombies) are not counted.
//
// The report names each group of identical goroutines with one full stack,
// and each process with its pid, parent and command line; the binary then
// exits with status 1 even when every test passed.
package leaktest

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// Option changes what Main checks.
type Option func(*config)

type config struct {
	grace  time.Duration
	ignore []string
	out    io.Writer
	after  []func()
}

// AfterTests runs f once the tests are done, before the check: to stop
// what the package shares across tests on purpose (a benchmark's server
// kept for the whole run), which must go like everything else.
func AfterTests(f func()) Option { return func(c *config) { c.after = append(c.after, f) } }

// Grace sets how long Main waits for goroutines and processes to stop
// after the tests (default 5s).
func Grace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// IgnoreFunc leaves out goroutines with a frame (or a "created by" line) in
// a function whose full name starts with one of prefixes, such as
// "github.com/some/lib.(*pool).worker". Use it only for goroutines a
// library starts once and never stops; a leak of our own is fixed, not
// ignored.
func IgnoreFunc(prefixes ...string) Option {
	return func(c *config) { c.ignore = append(c.ignore, prefixes...) }
}

// alwaysIgnored are goroutines the tests cannot stop: the runtime's signal
// handling, started by the first signal.Notify and running for good.
var alwaysIgnored = []string{
	"os/signal.signal_recv",
	"os/signal.loop",
	"runtime.ensureSigM",
	// The execution tracer, when the binary runs with -test.trace.
	"runtime.ReadTrace",
	"runtime/trace.Start.func1",
}

// Main runs the tests and exits: with the tests' status, or 1 when the
// tests passed but left goroutines or git processes behind.
func Main(m *testing.M, opts ...Option) {
	os.Exit(Run(m, opts...))
}

// Run is Main without the exit: it returns the status to exit with.
func Run(m *testing.M, opts ...Option) int {
	c := config{grace: 5 * time.Second, out: os.Stderr}
	for _, o := range opts {
		o(&c)
	}
	adoptOrphans()
	before := map[int64]bool{}
	for _, g := range Goroutines() {
		before[g.ID] = true
	}
	code := m.Run()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzzing worker is driven and stopped by its coordinator.
		return code
	}
	for _, f := range c.after {
		f()
	}
	if report := c.check(before); report != "" {
		fmt.Fprint(c.out, report)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// check waits up to the grace period for the leaks to go and returns the
// report of those that stayed ("" for none).
func (c *config) check(before map[int64]bool) string {
	deadline := time.Now().Add(c.grace)
	warned := false
	for {
		gs := Leaked(before, c.ignore...)
		ps, err := GitProcesses()
		if err != nil {
			// Without /proc only goroutines can be checked.
			if !warned {
				fmt.Fprintf(c.out, "leaktest: not checking git processes: %v\n", err)
				warned = true
			}
			ps = nil
		}
		if len(gs) == 0 && len(ps) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return report(gs, ps, c.grace)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Leaked returns the goroutines running now that are not in before (by
// id), are not the caller's, and have no frame in an ignored function.
func Leaked(before map[int64]bool, ignore ...string) []Goroutine {
	self := currentID()
	var out []Goroutine
	for _, g := range Goroutines() {
		if before[g.ID] || g.ID == self || g.in(alwaysIgnored) || g.in(ignore) {
			continue
		}
		out = append(out, g)
	}
	return out
}

func report(gs []Goroutine, ps []Process, grace time.Duration) string {
	var b strings.Builder
	if len(gs) > 0 {
		fmt.Fprintf(&b, "\nleaktest: %d goroutine(s) started by the tests still run %v after them:\n", len(gs), grace)
		groups := map[string][]Goroutine{}
		var keys []string
		for _, g := range gs {
			k := g.signature()
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], g)
		}
		sort.Slice(keys, func(i, j int) bool { return len(groups[keys[i]]) > len(groups[keys[j]]) })
		for _, k := range keys {
			g := groups[k]
			fmt.Fprintf(&b, "\n%d × goroutine [%s], for example:\n%s\n", len(g), g[0].State, g[0].Stack)
		}
	}
	if len(ps) > 0 {
		fmt.Fprintf(&b, "\nleaktest: %d git process(es) started by the tests still run %v after them:\n", len(ps), grace)
		for _, p := range ps {
			fmt.Fprintf(&b, "  pid %d (parent %d, state %s): %s\n", p.PID, p.PPID, p.State, p.Cmdline)
		}
	}
	return b.String()
}
