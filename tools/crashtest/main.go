// Command crashtest shows that Quarry keeps what it acknowledged across
// crashes. It builds the server, starts it on a fresh data folder (and,
// with --database-url, a fresh PostgreSQL schema it drops at the end) with
// the built-in runner, and runs writers of every kind — API commits on
// several branches, the files API, projects, forks, git pushes, merge
// requests and their merges, wiki pages, pipelines — while it kills the
// server with SIGKILL at random moments and starts it again on the same
// data. Then it kills it once more, starts it, lets background work
// settle (bounded) and checks that every write answered with a 2xx is
// there with its content, that every repository passes git fsck --full,
// and that nothing is stuck: no task past its due time, no fork still
// copying, no pipeline or job still waiting or running, no merge request
// left locked.
//
//	go run ./tools/crashtest [--database-url URL] [--kills N] [--seconds S] [--writers W]
//
// Progress goes to stderr. The last line on stdout is
//
//	crashtest: A acknowledged, L lost, C corrupt, S stuck
//
// after one line per lost, corrupt or stuck item; the exit status is 0
// only when L, C and S are all 0 (1 otherwise, 2 when the round could not
// run). A is the number of writes answered with a 2xx; L, C and S count
// items (a file updated three times is one item, checked against its last
// acknowledged content).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// options are the command line.
type options struct {
	databaseURL string
	kills       int
	seconds     int
	writers     int
	settle      time.Duration
	seed        uint64
	keep        bool
}

func main() {
	var o options
	flag.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL server to run on (postgres://…); a fresh schema is made in it and dropped at the end; empty: SQLite")
	flag.IntVar(&o.kills, "kills", 3, "how many times the server is killed while the writers write")
	flag.IntVar(&o.seconds, "seconds", 30, "how long the writers write")
	flag.IntVar(&o.writers, "writers", 2, "writers of each kind")
	flag.DurationVar(&o.settle, "settle", 2*time.Minute, "longest wait for background work after the last restart")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the kill moments and the writers' choices (0: random; the seed used is printed)")
	flag.BoolVar(&o.keep, "keep", false, "keep the data folder, the server log and the PostgreSQL schema")
	flag.Parse()
	if flag.NArg() > 0 || o.kills < 0 || o.seconds < 1 || o.writers < 1 || o.settle <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	if o.seed == 0 {
		o.seed = rand.Uint64()
	}
	os.Exit(run(o, os.Stdout, os.Stderr))
}

// progress prints timestamped progress lines.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "crashtest %6.1fs: %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// minUptime is the least time the server runs between a start and the
// next kill.
const minUptime = time.Second

// finalGrace is how long past its due time (or its lease) a task may
// wait in the final check before it counts as stuck.
const finalGrace = 10 * time.Second

// killSchedule returns n moments within total, at which to kill the
// server: one at random in each of n equal slots, so kills spread over
// the round and never bunch up.
func killSchedule(n int, total time.Duration, rnd *rand.Rand) []time.Duration {
	if n <= 0 || total <= 0 {
		return nil
	}
	slot := total / time.Duration(n)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i)*slot + time.Duration(rnd.Int64N(int64(max(slot, 1))))
	}
	return out
}

// run is one round; it returns the exit status.
func run(o options, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first interrupt winds the round down; a second one, with
		// the default handling back, ends the tool at once (the server
		// dies with it).
		<-ctx.Done()
		stop()
	}()
	p := &progress{w: stderr, start: time.Now()}
	fail := func(err error) int {
		p.printf("error: %v", err)
		return 2
	}
	db := "SQLite"
	if o.databaseURL != "" {
		db = "PostgreSQL"
	}
	p.printf("%s, %d kills in %ds, %d writers of each kind, seed %d", db, o.kills, o.seconds, o.writers, o.seed)

	root, err := moduleRoot(ctx)
	if err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp("", "crashtest-")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if o.keep {
			p.printf("kept %s (data/, server.log)", tmp)
			return
		}
		if err := os.RemoveAll(tmp); err != nil {
			p.printf("remove %s: %v", tmp, err)
		}
	}()
	bin := filepath.Join(tmp, "quarry")
	p.printf("building the server from %s", root)
	if err := build(ctx, root, bin); err != nil {
		return fail(err)
	}
	databaseURL := ""
	if o.databaseURL != "" {
		var drop func() error
		databaseURL, drop, err = newSchema(ctx, o.databaseURL)
		if err != nil {
			return fail(err)
		}
		defer func() {
			if o.keep {
				p.printf("kept the database %s", redact(databaseURL))
				return
			}
			if err := drop(); err != nil {
				p.printf("%v", err)
			}
		}()
	}
	addr, err := freeAddr()
	if err != nil {
		return fail(err)
	}
	srv := &server{bin: bin, dataDir: filepath.Join(tmp, "data"), databaseURL: databaseURL, addr: addr,
		logPath: filepath.Join(tmp, "server.log")}
	defer srv.kill() // before the schema and the folder go
	t := time.Now()
	if err := srv.start(ctx); err != nil {
		return fail(err)
	}
	p.printf("server %d ready at %s in %s", srv.pid(), srv.url(), time.Since(t).Round(time.Millisecond))
	token, err := os.ReadFile(filepath.Join(srv.dataDir, "initial_root_token"))
	if err != nil {
		return fail(err)
	}
	api := newClient(srv.url(), strings.TrimSpace(string(token)), 8*o.writers+8)
	l := newLedger()
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o750); err != nil {
		return fail(err)
	}
	ws := &writers{api: api, l: l, tmp: tmp, gitEnv: gitEnv(home), seed: o.seed, logf: p.printf}
	if err := ws.setup(o.writers); err != nil {
		return fail(fmt.Errorf("setup: %w", err))
	}

	// The writers write while the server is killed and started again.
	rnd := rand.New(rand.NewPCG(o.seed, 0))
	begin := time.Now()
	ws.start(o.writers)
	p.printf("writers started")
	killErr := make(chan error, 1)
	go func() {
		killErr <- killLoop(ctx, srv, l, p, begin, killSchedule(o.kills, time.Duration(o.seconds)*time.Second, rnd))
	}()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	end := time.After(time.Duration(o.seconds) * time.Second)
	var restartErr error
	killsDone, timeUp := false, false
	for !killsDone || !timeUp {
		select {
		case <-ctx.Done():
			ws.halt()
			return fail(ctx.Err())
		case restartErr = <-killErr:
			killsDone = true
			if restartErr != nil {
				timeUp = true
			}
		case <-end:
			timeUp = true
		case <-tick.C:
			p.printf("acknowledged: %s", l.progress())
		}
	}
	ws.halt()
	p.printf("writers stopped: %d writes acknowledged", l.acknowledged())

	if restartErr == nil {
		// One more crash, so the last writes too must survive one.
		pid := srv.pid()
		if restartErr = srv.kill(); restartErr == nil {
			p.printf("final kill: SIGKILL to %d", pid)
			t := time.Now()
			if restartErr = srv.start(ctx); restartErr == nil {
				p.printf("server %d ready again in %s", srv.pid(), time.Since(t).Round(time.Millisecond))
			}
		}
	}
	v := newVerdict(l.acknowledged())
	if restartErr != nil {
		// Nothing can be read: every acknowledged write is out of reach.
		p.printf("the server did not come back: %v", restartErr)
		for i, what := range l.items() {
			v.add(lost, fmt.Sprint(i), "%s (the server did not start again)", what)
		}
		report(p, l, v, stdout)
		return 1
	}

	sdb, err := openDB(srv.dataDir, databaseURL)
	if err != nil {
		return fail(err)
	}
	defer sdb.Close()
	settle(ctx, sdb, o.settle, p)
	p.printf("checking %d acknowledged writes", l.acknowledged())
	chk := &checker{api: api, l: l, v: v}
	chk.run(ctx)
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	p.printf("acknowledged pipelines and their jobs ended: %s", chk.pipelineStatuses())
	fs, err := unmoved(ctx, sdb, time.Now(), finalGrace)
	if err != nil {
		return fail(err)
	}
	locked, err := lockedMergeRequests(ctx, sdb)
	if err != nil {
		return fail(err)
	}
	for _, f := range append(fs, locked...) {
		v.add(f.class, f.key, "%s", f.what)
	}
	failed, err := failedTasks(ctx, sdb)
	if err != nil {
		return fail(err)
	}
	for _, f := range failed {
		p.printf("note: %s", f)
	}
	sdb.Close()
	if err := srv.stop(); err != nil {
		p.printf("stop: %v", err)
	}

	// The stored data, at rest.
	reposDir := filepath.Join(srv.dataDir, "repositories")
	if err := checkProjectRepos(ctx, reposDir, srv.dataDir, databaseURL, v, p); err != nil {
		return fail(err)
	}
	repos, err := repositories(reposDir)
	if err != nil {
		return fail(err)
	}
	p.printf("git fsck --full of %d repositories", len(repos))
	for _, dir := range repos {
		rel, _ := filepath.Rel(srv.dataDir, dir)
		if err := fsck(ctx, dir, ws.gitEnv); err != nil {
			v.add(corrupt, "fsck "+rel, "repository %s: git fsck --full: %v", rel, err)
		}
		locks, err := staleLocks(dir)
		if err != nil {
			return fail(err)
		}
		for _, lock := range locks {
			v.add(stuck, "lock "+rel+" "+lock, "repository %s: %s left behind (updates of what it locks fail)", rel, lock)
		}
	}
	if databaseURL == "" {
		bad, err := sqliteIntegrity(ctx, srv.dataDir)
		if err != nil {
			return fail(err)
		}
		for i, s := range bad {
			v.add(corrupt, fmt.Sprintf("sqlite %d", i), "quarry.db: integrity_check: %s", s)
		}
	}
	report(p, l, v, stdout)
	if !v.ok() {
		if !o.keep {
			p.printf("run again with --keep --seed %d to keep the data folder and the server log", o.seed)
		}
		return 1
	}
	return 0
}

// checkProjectRepos checks that every project the database holds has its
// repository (a fork once its copy finished), whether or not its creation
// was acknowledged: a project whose repository a crash left unmade is one
// nobody can use. It notes folders of repositories left half-made aside.
func checkProjectRepos(ctx context.Context, reposDir, dataDir, databaseURL string, v *verdict, p *progress) error {
	db, err := openDB(dataDir, databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	projects, err := projectRepos(ctx, db)
	if err != nil {
		return err
	}
	for _, pr := range projects {
		if pr.storage != "default" || pr.importStatus == "scheduled" || pr.importStatus == "started" || pr.importStatus == "failed" {
			continue // stuck and failed forks are reported as such
		}
		if _, err := os.Stat(filepath.Join(reposDir, filepath.FromSlash(pr.disk), "HEAD")); err != nil {
			v.add(corrupt, fmt.Sprintf("repository of project %d", pr.id), "project %d %q: its repository %s is missing", pr.id, pr.path, pr.disk)
		}
	}
	leftovers, err := filepath.Glob(filepath.Join(reposDir, "@*", "*", "*", "*.creating-*"))
	if err != nil {
		return err
	}
	for _, dir := range leftovers {
		rel, _ := filepath.Rel(dataDir, dir)
		p.printf("note: %s, a repository built aside, was left behind", rel)
	}
	return nil
}

// killLoop kills the server at each moment of sched (after begin; never
// sooner than minUptime after it became ready) and starts it again.
func killLoop(ctx context.Context, srv *server, l *ledger, p *progress, begin time.Time, sched []time.Duration) error {
	ready := time.Now()
	for i, at := range sched {
		when := begin.Add(at)
		if earliest := ready.Add(minUptime); when.Before(earliest) {
			when = earliest
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(when)):
		}
		pid := srv.pid()
		if err := srv.kill(); err != nil {
			return err
		}
		p.printf("kill %d/%d: SIGKILL to %d (%d writes acknowledged so far)", i+1, len(sched), pid, l.acknowledged())
		t := time.Now()
		if err := srv.start(ctx); err != nil {
			return fmt.Errorf("start after kill %d: %w", i+1, err)
		}
		ready = time.Now()
		p.printf("kill %d/%d: server %d ready again in %s", i+1, len(sched), srv.pid(), ready.Sub(t).Round(time.Millisecond))
	}
	return nil
}

// settle waits, at most limit, until the database shows no work moving:
// no task due or running, no fork copying, no pipeline or job active, no
// merge request locked.
func settle(ctx context.Context, db *sql.DB, limit time.Duration, p *progress) {
	start := time.Now()
	deadline := start.Add(limit)
	lastPrint := start
	for {
		fs, err := unmoved(ctx, db, time.Now(), 0)
		if err == nil {
			var locked []finding
			locked, err = lockedMergeRequests(ctx, db)
			fs = append(fs, locked...)
		}
		switch {
		case err == nil && len(fs) == 0:
			p.printf("settled in %s", time.Since(start).Round(100*time.Millisecond))
			return
		case time.Now().After(deadline):
			p.printf("not settled after %s: %s", limit, moving(fs, err))
			return
		case time.Since(lastPrint) >= 10*time.Second:
			lastPrint = time.Now()
			p.printf("settling: %s", moving(fs, err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// moving says what settle still waits for.
func moving(fs []finding, err error) string {
	if err != nil {
		return "the database cannot be read: " + err.Error()
	}
	return fmt.Sprintf("%d items moving; first: %s", len(fs), fs[0].what)
}

// report prints the writes by kind to stderr (p) and the verdict to
// stdout.
func report(p *progress, l *ledger, v *verdict, stdout io.Writer) {
	for _, line := range l.summary() {
		p.printf("%s", line)
	}
	v.write(stdout)
}

// redact removes a password from a database URL.
func redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.Index(s[i+3:], "@"); j >= 0 {
			if k := strings.Index(s[i+3:i+3+j], ":"); k >= 0 {
				return s[:i+3+k] + ":xxx" + s[i+3+j:]
			}
		}
	}
	return s
}
