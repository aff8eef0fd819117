package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Writing a commit takes a handful of objects and a ref update. Starting
// a git process for each costs more than the work, so each repository
// being written keeps a few plumbing processes running, each answering a
// line per request:
//
//	hash-object -w --stdin-paths --no-filters   blobs (from temporary files)
//	hash-object -w -t commit --stdin-paths      commit objects
//	mktree --batch -z --missing                  trees
//	update-ref --stdin                           compare-and-swap ref updates
//
// A process that fails or answers out of turn is ended and started afresh
// on the next request. Each running writer holds a catfile.Lease of the
// storages' budget, shared with the cat-file processes: it is busy during
// an exchange and idle between them, when the budget may end it (to make
// room for another process, least recently used first, or after the idle
// timeout). A writer started while every warm process is busy ends after
// its exchange. A writer never waits for a place, so a commit that holds a
// cat-file process while it writes objects cannot deadlock.

// warmProc is one long-running plumbing process.
type warmProc struct {
	mu     sync.Mutex
	cmd    git.Command
	rw     *repoWriters
	proc   *git.Process
	out    *bufio.Reader
	cancel context.CancelFunc
	lease  *catfile.Lease // busy during an exchange, idle between them
}

// exchange writes input and reads n lines of answer, starting the process
// when needed. Any failure ends the process.
func (w *warmProc) exchange(runner *git.Runner, repo string, input string, n int) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc != nil && !w.lease.Reuse() {
		w.forgetLocked() // the budget ended it
	}
	if w.proc == nil {
		if err := w.startLocked(runner, repo); err != nil {
			return nil, err
		}
	}
	if _, err := io.WriteString(w.proc.Stdin, input); err != nil {
		return nil, w.exitError(err)
	}
	lines := make([]string, 0, n)
	for len(lines) < n {
		line, err := w.out.ReadString('\n')
		if err != nil {
			return nil, w.exitError(err)
		}
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	if !w.lease.Idle() {
		w.endLocked()
	}
	return lines, nil
}

// startLocked starts the process with a busy lease of the budget.
func (w *warmProc) startLocked(runner *git.Runner, repo string) error {
	rw := w.rw
	ws := rw.set
	// The budget ends the process only while it is idle, through these
	// values: never through w, whose lock an exchange may hold.
	var p *git.Process
	var cancel context.CancelFunc
	lease := ws.budget.Admit(repo, func() {
		stopProcess(p, cancel)
		ws.ended(rw)
	})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := runner.Start(ctx, repo, w.cmd)
	if err != nil {
		cancel()
		lease.Done()
		ws.tidy(rw)
		return err
	}
	ws.started(rw)
	w.proc, w.out, w.cancel, w.lease = p, bufio.NewReader(p.Stdout), cancel, lease
	return nil
}

// stopProcess ends a process: end of input, then a kill of its group.
func stopProcess(p *git.Process, cancel context.CancelFunc) {
	p.Stdin.Close()
	cancel()
	_ = p.Wait()
}

// exitError ends the process and returns its failure (with git's message)
// in place of the pipe error that revealed it.
func (w *warmProc) exitError(pipeErr error) error {
	w.proc.Stdin.Close()
	err := w.proc.Wait()
	w.cancel()
	w.doneLocked()
	if err != nil {
		return err
	}
	return pipeErr
}

// endLocked ends the process while its lease is busy.
func (w *warmProc) endLocked() {
	stopProcess(w.proc, w.cancel)
	w.doneLocked()
}

// doneLocked frees the place of a process its owner ended.
func (w *warmProc) doneLocked() {
	w.lease.Done()
	w.rw.set.ended(w.rw)
	w.forgetLocked()
}

// forgetLocked drops the process (ended elsewhere).
func (w *warmProc) forgetLocked() {
	w.proc, w.out, w.cancel, w.lease = nil, nil, nil, nil
}

// stopLocked ends the process between exchanges, unless the budget has
// ended it already.
func (w *warmProc) stopLocked() {
	if w.proc == nil {
		return
	}
	if w.lease.Reuse() {
		w.endLocked()
		return
	}
	w.forgetLocked()
}

// repoWriters are the warm writers of one repository.
type repoWriters struct {
	set                         *writerSet
	repo                        string
	live                        int // running processes, guarded by set.mu
	blobs, commits, trees, refs warmProc
}

func newRepoWriters(ws *writerSet, repo string) *repoWriters {
	rw := &repoWriters{
		set:     ws,
		repo:    repo,
		blobs:   warmProc{cmd: git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-w"}, {Name: "--stdin-paths"}, {Name: "--no-filters"}}}},
		commits: warmProc{cmd: git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-w"}, {Name: "-t", Value: "commit"}, {Name: "--stdin-paths"}}}},
		// --missing: entries come from trees just read or objects just
		// written; a long-running mktree would not see them once
		// housekeeping moves them into a new pack.
		trees: warmProc{cmd: git.Command{Name: "mktree", Flags: []git.Flag{{Name: "--batch"}, {Name: "-z"}, {Name: "--missing"}}}},
		refs:  warmProc{cmd: git.Command{Name: "update-ref", Flags: []git.Flag{{Name: "--stdin"}}}},
	}
	for _, w := range rw.procs() {
		w.rw = rw
	}
	return rw
}

func (rw *repoWriters) procs() []*warmProc {
	return []*warmProc{&rw.blobs, &rw.commits, &rw.trees, &rw.refs}
}

// writerSet holds the warm writers of the repositories being written: a
// repository is in it while one of its writers runs. Budget, not the set,
// decides how many run and for how long.
type writerSet struct {
	budget *catfile.Budget
	mu     sync.Mutex
	repos  map[string]*repoWriters
}

func newWriterSet(budget *catfile.Budget) *writerSet {
	return &writerSet{budget: budget, repos: map[string]*repoWriters{}}
}

// get returns the writers of repo.
func (ws *writerSet) get(repo string) *repoWriters {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	rw := ws.repos[repo]
	if rw == nil {
		rw = newRepoWriters(ws, repo)
		ws.repos[repo] = rw
	}
	return rw
}

// started counts a process of rw. A caller may still hold writers the set
// forgot when their last process ended: they come back, unless others
// took their place meanwhile (then both serve the repository, and the
// budget bounds their processes all the same).
func (ws *writerSet) started(rw *repoWriters) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	rw.live++
	if ws.repos[rw.repo] == nil {
		ws.repos[rw.repo] = rw
	}
}

// ended counts a process of rw out and forgets rw when none is left.
func (ws *writerSet) ended(rw *repoWriters) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	rw.live--
	ws.tidyLocked(rw)
}

// tidy forgets rw when none of its processes runs (a start failed).
func (ws *writerSet) tidy(rw *repoWriters) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.tidyLocked(rw)
}

func (ws *writerSet) tidyLocked(rw *repoWriters) {
	if rw.live == 0 && ws.repos[rw.repo] == rw {
		delete(ws.repos, rw.repo)
	}
}

// evict ends the writers of a repository (before it is removed or moved),
// waiting for those busy now; the budget ends any other process it holds
// for the repository.
func (ws *writerSet) evict(repo string) {
	ws.mu.Lock()
	rw := ws.repos[repo]
	ws.mu.Unlock()
	if rw != nil {
		rw.stop()
	}
	ws.budget.Evict(repo)
}

// closeAll ends every writer, waiting for those busy now; later writes
// run processes that end after each exchange (the budget is closed).
func (ws *writerSet) closeAll() {
	ws.mu.Lock()
	all := make([]*repoWriters, 0, len(ws.repos))
	for _, rw := range ws.repos {
		all = append(all, rw)
	}
	ws.mu.Unlock()
	for _, rw := range all {
		rw.stop()
	}
}

func (rw *repoWriters) stop() {
	for _, w := range rw.procs() {
		w.mu.Lock()
		w.stopLocked()
		w.mu.Unlock()
	}
}

// oneID checks a single object id answer.
func oneID(lines []string, err error) (git.ObjectID, error) {
	if err != nil {
		return "", err
	}
	id := lines[0]
	if len(id) != 40 && len(id) != 64 || !isHex(id) {
		return "", fmt.Errorf("unexpected answer %q", id)
	}
	return git.ObjectID(id), nil
}

// errUnexpected is an answer the protocol does not allow.
var errUnexpected = errors.New("unexpected answer from git")
