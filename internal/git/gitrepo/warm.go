package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"quarry/internal/git"
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
// on the next request; idle ones end after warmIdle.

const warmIdle = time.Minute

// warmProc is one long-running plumbing process.
type warmProc struct {
	mu      sync.Mutex
	cmd     git.Command
	proc    *git.Process
	out     *bufio.Reader
	cancel  context.CancelFunc
	lastUse time.Time
}

// exchange writes input and reads n lines of answer, starting the process
// when needed. Any failure ends the process.
func (w *warmProc) exchange(runner *git.Runner, repo string, input string, n int) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p, err := runner.Start(ctx, repo, w.cmd)
		if err != nil {
			cancel()
			return nil, err
		}
		w.proc, w.out, w.cancel = p, bufio.NewReader(p.Stdout), cancel
	}
	w.lastUse = time.Now()
	fail := func(err error) ([]string, error) {
		w.stopLocked()
		return nil, err
	}
	if _, err := io.WriteString(w.proc.Stdin, input); err != nil {
		return fail(w.exitError(err))
	}
	lines := make([]string, 0, n)
	for len(lines) < n {
		line, err := w.out.ReadString('\n')
		if err != nil {
			return fail(w.exitError(err))
		}
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	return lines, nil
}

// exitError ends the process and returns its failure (with git's message)
// in place of the pipe error that revealed it.
func (w *warmProc) exitError(pipeErr error) error {
	w.proc.Stdin.Close()
	err := w.proc.Wait()
	w.cancel()
	w.proc = nil
	if err != nil {
		return err
	}
	return pipeErr
}

func (w *warmProc) stopLocked() {
	if w.proc == nil {
		return
	}
	w.proc.Stdin.Close()
	w.cancel()
	_ = w.proc.Wait()
	w.proc = nil
}

// repoWriters are the warm writers of one repository.
type repoWriters struct {
	blobs, commits, trees, refs warmProc
}

func newRepoWriters() *repoWriters {
	return &repoWriters{
		blobs:   warmProc{cmd: git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-w"}, {Name: "--stdin-paths"}, {Name: "--no-filters"}}}},
		commits: warmProc{cmd: git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-w"}, {Name: "-t", Value: "commit"}, {Name: "--stdin-paths"}}}},
		// --missing: entries come from trees just read or objects just
		// written; a long-running mktree would not see them once
		// housekeeping moves them into a new pack.
		trees: warmProc{cmd: git.Command{Name: "mktree", Flags: []git.Flag{{Name: "--batch"}, {Name: "-z"}, {Name: "--missing"}}}},
		refs:  warmProc{cmd: git.Command{Name: "update-ref", Flags: []git.Flag{{Name: "--stdin"}}}},
	}
}

func (rw *repoWriters) procs() []*warmProc {
	return []*warmProc{&rw.blobs, &rw.commits, &rw.trees, &rw.refs}
}

// writerSet holds the warm writers of every repository being written.
type writerSet struct {
	mu        sync.Mutex
	repos     map[string]*repoWriters
	lastSweep time.Time
}

func (ws *writerSet) get(repo string) *repoWriters {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.repos == nil {
		ws.repos = map[string]*repoWriters{}
	}
	now := time.Now()
	if now.Sub(ws.lastSweep) > warmIdle/4 {
		ws.lastSweep = now
		for path, rw := range ws.repos {
			if path != repo && rw.idleSince(now) > warmIdle {
				rw.stop()
				delete(ws.repos, path)
			}
		}
	}
	rw := ws.repos[repo]
	if rw == nil {
		rw = newRepoWriters()
		ws.repos[repo] = rw
	}
	return rw
}

// evict ends the writers of a repository (before it is removed or moved).
func (ws *writerSet) evict(repo string) {
	ws.mu.Lock()
	rw := ws.repos[repo]
	delete(ws.repos, repo)
	ws.mu.Unlock()
	if rw != nil {
		rw.stop()
	}
}

func (ws *writerSet) closeAll() {
	ws.mu.Lock()
	all := ws.repos
	ws.repos = nil
	ws.mu.Unlock()
	for _, rw := range all {
		rw.stop()
	}
}

// idleSince is how long no writer of the repository has been used.
func (rw *repoWriters) idleSince(now time.Time) time.Duration {
	latest := time.Time{}
	for _, w := range rw.procs() {
		if !w.mu.TryLock() {
			return 0 // busy now
		}
		if w.lastUse.After(latest) {
			latest = w.lastUse
		}
		w.mu.Unlock()
	}
	return now.Sub(latest)
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
