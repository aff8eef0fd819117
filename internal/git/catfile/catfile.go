// Package catfile keeps `git cat-file --batch-command` processes warm, so
// that reading an object is a write and a read on a pipe instead of a new
// process.
//
// Contract: Get hands out a process for exclusive use; the caller must
// Release it after reading every object it asked for in full. A process
// whose stream was left mid-object (error, cancelled request) is closed
// instead of going back to the pool.
//
// Bounds: a Pool runs at most max processes of one repository for short
// reads (more callers wait for one); streams to slow clients may go past
// that and end when released. Every warm process counts against a Budget
// shared by all repositories (and by gitrepo's warm writers): past its
// maximum the least recently used idle process anywhere is ended to make
// room, a process started while all are busy ends when released, and
// processes idle for longer than the budget's idle timeout are ended by a
// timer, so an idle server runs no git process at all.
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
// ones; streams to slow clients may go past the limit. Which idle
// processes stay warm, and for how long, is up to the pool's Budget.
type Pool struct {
	runner    *git.Runner
	budget    *Budget
	ownBudget bool // Close closes the budget
	max       int

	mu     sync.Mutex
	repos  map[string]*repoProcs
	closed bool
}

// repoProcs are the processes of one repository. The entry lives while
// it has idle processes or users, so that every user of a slot gives it
// back to the same channel.
type repoProcs struct {
	idle  []*Process    // most recently released last
	slots chan struct{} // one token per process handed out within max
	users int           // callers waiting for a slot or holding one
}

// NewPool returns a pool running at most max processes per repository for
// short reads, with a budget of its own (DefaultMaxProcesses,
// DefaultIdleTimeout) that Close closes.
func NewPool(runner *git.Runner, max int) *Pool {
	p := NewPoolWithBudget(runner, max, NewBudget(0, 0))
	p.ownBudget = true
	return p
}

// NewPoolWithBudget returns a pool running at most max processes per
// repository for short reads, whose warm processes count against budget.
// The caller closes the budget after the pool.
func NewPoolWithBudget(runner *git.Runner, max int, budget *Budget) *Pool {
	if max < 1 {
		max = 1
	}
	return &Pool{runner: runner, budget: budget, repos: map[string]*repoProcs{}, max: max}
}

// Budget is the budget the pool's warm processes count against.
func (p *Pool) Budget() *Budget { return p.budget }

// Process is one running cat-file.
type Process struct {
	repo    string
	rp      *repoProcs // nil for a stream past the limit
	lease   *Lease     // nil for a stream past the limit
	proc    *git.Process
	r       *bufio.Reader
	cancel  context.CancelFunc
	broken  bool
	slotted bool // holds one of its repository's slots
}

// enterLocked returns the entry of repo for one more user.
func (p *Pool) enterLocked(repo string) *repoProcs {
	rp := p.repos[repo]
	if rp == nil {
		rp = &repoProcs{slots: make(chan struct{}, p.max)}
		p.repos[repo] = rp
	}
	rp.users++
	return rp
}

// leaveLocked drops a user of rp and forgets the entry once unused.
func (p *Pool) leaveLocked(repo string, rp *repoProcs) {
	rp.users--
	p.tidyLocked(repo, rp)
}

func (p *Pool) tidyLocked(repo string, rp *repoProcs) {
	if rp.users == 0 && len(rp.idle) == 0 && p.repos[repo] == rp {
		delete(p.repos, repo)
	}
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
	rp := p.enterLocked(repo)
	p.mu.Unlock()
	leave := func() {
		p.mu.Lock()
		p.leaveLocked(repo, rp)
		p.mu.Unlock()
	}
	if wait {
		select {
		case rp.slots <- struct{}{}:
		case <-ctx.Done():
			leave()
			return nil, ctx.Err()
		}
	} else {
		select {
		case rp.slots <- struct{}{}:
		default:
			// Past the limit: a process of its own, never kept.
			leave()
			return p.start(repo, nil)
		}
	}
	proc, err := p.take(repo, rp)
	if err != nil {
		<-rp.slots
		leave()
		return nil, err
	}
	proc.slotted = true
	return proc, nil
}

// take hands out an idle process of rp or starts one.
func (p *Pool) take(repo string, rp *repoProcs) (*Process, error) {
	p.mu.Lock()
	for n := len(rp.idle); n > 0; n = len(rp.idle) {
		proc := rp.idle[n-1]
		rp.idle = rp.idle[:n-1]
		if proc.lease.Reuse() {
			p.mu.Unlock()
			return proc, nil
		}
		// The budget is ending it.
	}
	p.mu.Unlock()
	return p.start(repo, rp)
}

// start starts a process; within the limit (rp set) it joins the budget.
func (p *Pool) start(repo string, rp *repoProcs) (*Process, error) {
	proc := &Process{repo: repo, rp: rp}
	if rp != nil {
		proc.lease = p.budget.Admit(repo, func() { p.ended(proc) })
	}
	// The process outlives the request that started it: it has its own
	// context, ended by Close or the budget.
	pctx, cancel := context.WithCancel(context.Background())
	gp, err := p.runner.Start(pctx, repo, git.Command{Name: "cat-file", Flags: []git.Flag{{Name: "--batch-command"}}})
	if err != nil {
		cancel()
		if proc.lease != nil {
			proc.lease.Done()
		}
		return nil, err
	}
	proc.proc, proc.r, proc.cancel = gp, bufio.NewReaderSize(gp.Stdout, 64<<10), cancel
	return proc, nil
}

// ended is how the budget ends an idle process.
func (p *Pool) ended(proc *Process) {
	p.mu.Lock()
	rp := proc.rp
	for i, q := range rp.idle {
		if q == proc {
			rp.idle = append(rp.idle[:i], rp.idle[i+1:]...)
			break
		}
	}
	p.tidyLocked(proc.repo, rp)
	p.mu.Unlock()
	proc.close()
}

// Release returns a process to the pool, or ends it when it is broken,
// went past the limit or the budget does not keep it.
func (p *Pool) Release(proc *Process) {
	if proc == nil {
		return
	}
	p.mu.Lock()
	keep := false
	if proc.slotted {
		rp := proc.rp
		// Idle makes the process the budget's to end; ended waits for
		// p.mu, so it finds the process in rp.idle.
		keep = !proc.broken && !p.closed && proc.lease.Idle()
		if keep {
			rp.idle = append(rp.idle, proc)
		}
		proc.slotted = false
		<-rp.slots
		p.leaveLocked(proc.repo, rp)
	}
	p.mu.Unlock()
	if !keep {
		proc.close()
		if proc.lease != nil {
			proc.lease.Done()
		}
	}
}

// Evict ends the idle processes of a repository (before it is removed or
// moved) — every one the budget holds for it, the warm writers of the
// same budget included — and ends its busy ones when released.
func (p *Pool) Evict(repo string) {
	p.budget.Evict(repo)
}

// Close ends every idle process of the pool; busy ones end when released.
// A pool made by NewPool closes its budget too.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	var all []*Process
	for repo, rp := range p.repos {
		for _, proc := range rp.idle {
			if proc.lease.Reuse() {
				all = append(all, proc)
			}
		}
		rp.idle = nil
		p.tidyLocked(repo, rp)
	}
	p.mu.Unlock()
	for _, proc := range all {
		proc.close()
		proc.lease.Done()
	}
	if p.ownBudget {
		p.budget.Close()
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
