// Package catfile keeps `git cat-file --batch-command` processes warm, one
// per repository in use, so that reading an object is a write and a read on
// a pipe instead of a new process.
//
// Contract: Get hands out a process for exclusive use; the caller must
// Release it after reading every object it asked for in full. A process
// whose stream was left mid-object (error, cancelled request) is closed
// instead of going back to the pool.
package catfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"quarry/internal/git"
)

// ErrMissing reports an object or revision that does not exist.
var ErrMissing = errors.New("object missing")

// ObjectInfo describes an object.
type ObjectInfo struct {
	OID  git.ObjectID
	Type string // blob, tree, commit, tag
	Size int64
}

// Pool caches processes by repository. At most max processes of one
// repository serve short reads at once (more callers wait for one), so
// that a burst of requests reuses warm processes instead of starting new
// ones; streams to slow clients may go past the limit. Processes idle for
// longer than idleTimeout are ended.
type Pool struct {
	runner    *git.Runner
	mu        sync.Mutex
	repos     map[string]*repoProcs
	max       int
	closed    bool
	lastSweep time.Time
}

// repoProcs are the processes of one repository.
type repoProcs struct {
	idle  []*Process
	slots chan struct{} // one token per process handed out within max
}

const idleTimeout = time.Minute

// NewPool returns a pool running at most max processes per repository
// for short reads.
func NewPool(runner *git.Runner, max int) *Pool {
	if max < 1 {
		max = 1
	}
	return &Pool{runner: runner, repos: map[string]*repoProcs{}, max: max}
}

// Process is one running cat-file.
type Process struct {
	repo    string
	proc    *git.Process
	r       *bufio.Reader
	cancel  context.CancelFunc
	broken  bool
	slotted bool // holds one of its repository's slots
	lastUse time.Time
}

func (p *Pool) procs(repo string) *repoProcs {
	rp := p.repos[repo]
	if rp == nil {
		rp = &repoProcs{slots: make(chan struct{}, p.max)}
		p.repos[repo] = rp
	}
	return rp
}

// Get returns a process for repo, waiting while max of them are in use.
func (p *Pool) Get(ctx context.Context, repo string) (*Process, error) {
	return p.get(ctx, repo, true)
}

// GetStream returns a process for a long read (streaming an object to a
// client): within the limit when a slot is free, past it otherwise.
func (p *Pool) GetStream(ctx context.Context, repo string) (*Process, error) {
	return p.get(ctx, repo, false)
}

func (p *Pool) get(ctx context.Context, repo string, wait bool) (*Process, error) {
	p.mu.Lock()
	slots := p.procs(repo).slots
	p.mu.Unlock()
	if wait {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else {
		select {
		case slots <- struct{}{}:
		default:
			return p.start(repo)
		}
	}
	proc, err := p.take(repo)
	if err != nil {
		<-slots
		return nil, err
	}
	proc.slotted = true
	return proc, nil
}

// take hands out an idle process or starts one.
func (p *Pool) take(repo string) (*Process, error) {
	p.mu.Lock()
	rp := p.procs(repo)
	if n := len(rp.idle); n > 0 {
		proc := rp.idle[n-1]
		rp.idle = rp.idle[:n-1]
		p.mu.Unlock()
		return proc, nil
	}
	p.mu.Unlock()
	return p.start(repo)
}

func (p *Pool) start(repo string) (*Process, error) {
	// The process outlives the request that started it: it has its own
	// context, ended by Close.
	pctx, cancel := context.WithCancel(context.Background())
	proc, err := p.runner.Start(pctx, repo, git.Command{Name: "cat-file", Flags: []git.Flag{{Name: "--batch-command"}}})
	if err != nil {
		cancel()
		return nil, err
	}
	return &Process{repo: repo, proc: proc, r: bufio.NewReaderSize(proc.Stdout, 64<<10), cancel: cancel}, nil
}

// Release returns a process to the pool, or ends it when it is broken or
// went past the limit.
func (p *Pool) Release(proc *Process) {
	if proc == nil {
		return
	}
	now := time.Now()
	proc.lastUse = now
	p.mu.Lock()
	rp := p.procs(proc.repo)
	keep := !proc.broken && proc.slotted && !p.closed
	if keep {
		rp.idle = append(rp.idle, proc)
	}
	if proc.slotted {
		proc.slotted = false
		<-rp.slots
	}
	var stale []*Process
	if now.Sub(p.lastSweep) > idleTimeout/4 {
		p.lastSweep = now
		stale = p.sweepLocked(now)
	}
	p.mu.Unlock()
	if !keep {
		proc.close()
	}
	for _, s := range stale {
		s.close()
	}
}

// sweepLocked removes processes idle for longer than idleTimeout.
func (p *Pool) sweepLocked(now time.Time) []*Process {
	var stale []*Process
	for repo, rp := range p.repos {
		kept := rp.idle[:0]
		for _, proc := range rp.idle {
			if now.Sub(proc.lastUse) > idleTimeout {
				stale = append(stale, proc)
			} else {
				kept = append(kept, proc)
			}
		}
		rp.idle = kept
		if len(kept) == 0 && len(rp.slots) == 0 {
			delete(p.repos, repo)
		}
	}
	return stale
}

// Evict ends the idle processes of a repository (before it is removed or
// moved).
func (p *Pool) Evict(repo string) {
	p.mu.Lock()
	var list []*Process
	if rp := p.repos[repo]; rp != nil {
		list, rp.idle = rp.idle, nil
	}
	p.mu.Unlock()
	for _, proc := range list {
		proc.close()
	}
}

// Close ends every idle process.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	var all []*Process
	for _, rp := range p.repos {
		all = append(all, rp.idle...)
		rp.idle = nil
	}
	p.mu.Unlock()
	for _, proc := range all {
		proc.close()
	}
}

func (proc *Process) close() {
	proc.proc.Stdin.Close()
	proc.cancel()
	_ = proc.proc.Wait()
}

func (proc *Process) send(cmd, rev string) error {
	if strings.ContainsAny(rev, "\n\x00") {
		return ErrMissing
	}
	if _, err := io.WriteString(proc.proc.Stdin, cmd+" "+rev+"\n"); err != nil {
		proc.broken = true
		return fmt.Errorf("cat-file write: %w", err)
	}
	return nil
}

// header reads "<oid> <type> <size>" or "<rev> missing".
func (proc *Process) header() (ObjectInfo, error) {
	line, err := proc.r.ReadString('\n')
	if err != nil {
		proc.broken = true
		return ObjectInfo{}, fmt.Errorf("cat-file read: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if strings.HasSuffix(line, " missing") || strings.HasSuffix(line, " ambiguous") {
		return ObjectInfo{}, ErrMissing
	}
	f := strings.Fields(line)
	if len(f) != 3 {
		proc.broken = true
		return ObjectInfo{}, fmt.Errorf("cat-file: unexpected header %q", line)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		proc.broken = true
		return ObjectInfo{}, fmt.Errorf("cat-file: bad size in %q", line)
	}
	return ObjectInfo{OID: git.ObjectID(f[0]), Type: f[1], Size: n}, nil
}

// Info describes the object a revision names ("main", "<sha>",
// "<commit>:<path>", "<ref>^{commit}").
func (proc *Process) Info(rev string) (ObjectInfo, error) {
	if err := proc.send("info", rev); err != nil {
		return ObjectInfo{}, err
	}
	return proc.header()
}

// Contents reads a whole object (use Stream for large ones).
func (proc *Process) Contents(rev string) (ObjectInfo, []byte, error) {
	info, rd, err := proc.Stream(rev)
	if err != nil {
		return info, nil, err
	}
	b := make([]byte, info.Size)
	if _, err := io.ReadFull(rd, b); err != nil {
		proc.broken = true
		return info, nil, err
	}
	return info, b, rd.Close()
}

// Stream starts reading an object; the returned reader must be read to EOF
// (or closed, which drains it) before the process is used again.
func (proc *Process) Stream(rev string) (ObjectInfo, io.ReadCloser, error) {
	if err := proc.send("contents", rev); err != nil {
		return ObjectInfo{}, nil, err
	}
	info, err := proc.header()
	if err != nil {
		return info, nil, err
	}
	return info, &objectReader{proc: proc, left: info.Size}, nil
}

// objectReader yields one object's bytes and then consumes the trailing
// newline.
type objectReader struct {
	proc *Process
	left int64
	done bool
}

func (o *objectReader) Read(b []byte) (int, error) {
	if o.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > o.left {
		b = b[:o.left]
	}
	n, err := o.proc.r.Read(b)
	o.left -= int64(n)
	if err != nil {
		o.proc.broken = true
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	return n, nil
}

// Close drains what is left and the separator newline.
func (o *objectReader) Close() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.left > 0 {
		if _, err := io.CopyN(io.Discard, o.proc.r, o.left); err != nil {
			o.proc.broken = true
			return err
		}
		o.left = 0
	}
	if c, err := o.proc.r.ReadByte(); err != nil || c != '\n' {
		o.proc.broken = true
		if err == nil {
			err = fmt.Errorf("cat-file: missing separator")
		}
		return err
	}
	return nil
}

// Abandon marks the process unusable (the caller stopped mid-object).
func (proc *Process) Abandon() { proc.broken = true }
