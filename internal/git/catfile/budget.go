package catfile

import (
	"container/list"
	"sync"
	"time"
)

// Defaults of a Budget.
const (
	DefaultMaxProcesses = 128
	DefaultIdleTimeout  = time.Minute
)

// Budget bounds the warm git processes of every repository together: the
// cat-file processes of the pools and the plumbing writers of gitrepo that
// share it. At most max of them are warm (kept running between uses); the
// idle ones sit in a least-recently-used list.
//
// A process about to start is admitted with Admit. When max warm
// processes are alive, Admit ends the least recently used idle one,
// whichever repository it serves, and the new process takes its place.
// When every warm process is busy, Admit never waits (a request may hold a
// cat-file process while it needs a writer): the new process runs outside
// the bound and ends when its owner is done with it, unless a place has
// freed by then. So the warm processes alive while nothing is busy never
// exceed max; busy ones past it are at most the requests in flight.
//
// A goroutine started by NewBudget ends processes idle for longer than the
// idle timeout, checking every quarter of it, so that a server without
// traffic falls to no git process at all. Close stops it.
type Budget struct {
	max         int
	idleTimeout time.Duration

	mu      sync.Mutex
	warm    int                 // leases counted against max
	idle    *list.List          // of *Lease, most recently used first
	ending  int                 // taken from idle, their processes being ended
	all     map[*Lease]struct{} // leases whose process may still run, for Evict
	closed  bool
	evicted uint64
	reaped  uint64

	stop chan struct{}
	done chan struct{}
}

// NewBudget returns a budget of max warm processes ending those idle for
// longer than idleTimeout; zero or negative values select
// DefaultMaxProcesses and DefaultIdleTimeout. Close must be called.
func NewBudget(max int, idleTimeout time.Duration) *Budget {
	if max <= 0 {
		max = DefaultMaxProcesses
	}
	if idleTimeout <= 0 {
		idleTimeout = DefaultIdleTimeout
	}
	b := &Budget{max: max, idleTimeout: idleTimeout, idle: list.New(), all: map[*Lease]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{})}
	every := idleTimeout / 4
	if every < time.Millisecond {
		every = time.Millisecond
	}
	go b.reap(every)
	return b
}

// Max is the number of warm processes the budget keeps at most.
func (b *Budget) Max() int { return b.max }

// IdleTimeout is how long a process stays warm without use.
func (b *Budget) IdleTimeout() time.Duration { return b.idleTimeout }

// leaseState is where a lease stands.
type leaseState uint8

const (
	leaseBusy leaseState = iota // its owner uses the process
	leaseIdle                   // in the LRU list; the budget may end it
	leaseGone                   // ended, or being ended by the budget
)

// Lease is one process's place in a Budget. It is busy when Admit returns
// it; its owner alternates Idle (the process is free) and Reuse (the owner
// takes it back), and calls Done after ending the process itself. While a
// lease is idle the budget may end the process at any time by calling the
// end function given to Admit; Reuse then reports false and the owner must
// forget the process without touching it.
type Lease struct {
	b       *Budget
	key     string
	end     func()
	state   leaseState
	warm    bool // counted against max
	doomed  bool // its repository was evicted: not kept once idle
	lastUse time.Time
	elem    *list.Element
}

// Admit reserves a place for a process about to start for key (a
// repository path). When max processes are warm it ends the least
// recently used idle one first (synchronously, so the new process never
// joins while the old one still runs); when all are busy the lease is not
// warm and its process will end on Idle. end ends the process; the budget
// calls it, without holding any lock of its own, only while the lease is
// idle, and at most once.
func (b *Budget) Admit(key string, end func()) *Lease {
	l := &Lease{b: b, key: key, end: end}
	b.mu.Lock()
	var victim *Lease
	if !b.closed {
		switch {
		case b.warm < b.max:
			l.warm = true
			b.warm++
		case b.idle.Len() > 0:
			// The new process takes the place of the least recently
			// used, which ends before Admit returns.
			victim = b.idle.Remove(b.idle.Back()).(*Lease)
			victim.state, victim.elem, victim.warm = leaseGone, nil, false
			delete(b.all, victim)
			l.warm = true
			b.evicted++
		}
	}
	b.all[l] = struct{}{}
	b.mu.Unlock()
	if victim != nil {
		victim.end()
	}
	return l
}

// takeLocked takes l, removed from the idle list, to end its process.
// Its place stays counted until the process has ended, so that no new
// process joins while the old one still runs.
func (b *Budget) takeLocked(l *Lease) {
	l.state, l.elem = leaseGone, nil
	b.ending++
}

// endTaken ends the processes of taken leases and frees their places.
func (b *Budget) endTaken(ls []*Lease) {
	for _, l := range ls {
		l.end()
		b.mu.Lock()
		b.ending--
		b.freeLocked(l)
		b.mu.Unlock()
	}
}

// freeLocked frees the place of a lease whose process has ended.
func (b *Budget) freeLocked(l *Lease) {
	if l.warm {
		l.warm = false
		b.warm--
	}
	delete(b.all, l)
}

// Reuse takes an idle process back for its owner. False means the budget
// has ended it or is ending it: forget the process and start another.
func (l *Lease) Reuse() bool {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.state != leaseIdle {
		return false
	}
	b.idle.Remove(l.elem)
	l.elem = nil
	l.state = leaseBusy
	return true
}

// Idle reports that the owner is done with the process for now. True: the
// process stays warm (and the budget may end it from now on). False: the
// budget does not keep it (no place is free, the budget is closed or the
// repository was evicted); the owner must end the process and call Done.
func (l *Lease) Idle() bool {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.state != leaseBusy || b.closed || l.doomed {
		return false
	}
	if !l.warm {
		if b.warm >= b.max {
			return false
		}
		l.warm = true
		b.warm++
	}
	l.state = leaseIdle
	l.lastUse = time.Now()
	l.elem = b.idle.PushFront(l)
	return true
}

// Done reports that the owner ended the process (or failed to start it);
// its place is free. Done after the budget ended the process does nothing.
func (l *Lease) Done() {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch l.state {
	case leaseGone:
		return
	case leaseIdle:
		b.idle.Remove(l.elem)
	}
	l.state, l.elem = leaseGone, nil
	b.freeLocked(l)
}

// Evict ends the idle processes of key (a repository about to be removed
// or moved) and keeps its busy ones from going back to idle: they end when
// their owners are done.
func (b *Budget) Evict(key string) {
	b.mu.Lock()
	var ends []*Lease
	for l := range b.all {
		if l.key != key {
			continue
		}
		l.doomed = true
		if l.state == leaseIdle {
			b.idle.Remove(l.elem)
			b.takeLocked(l)
			ends = append(ends, l)
		}
	}
	b.mu.Unlock()
	b.endTaken(ends)
}

// reap ends the processes idle for longer than the idle timeout until
// Close.
func (b *Budget) reap(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.endIdle(time.Now())
		}
	}
}

// endIdle ends the processes idle since before now minus the idle timeout.
func (b *Budget) endIdle(now time.Time) {
	b.mu.Lock()
	var ends []*Lease
	for e := b.idle.Back(); e != nil; {
		l := e.Value.(*Lease)
		if now.Sub(l.lastUse) <= b.idleTimeout {
			break // the rest were used more recently
		}
		prev := e.Prev()
		b.idle.Remove(e)
		b.takeLocked(l)
		b.reaped++
		ends = append(ends, l)
		e = prev
	}
	b.mu.Unlock()
	b.endTaken(ends)
}

// Close stops the reaper, ends every idle process and makes every busy one
// end when its owner is done with it; processes admitted afterwards are
// never kept. It returns once the idle processes have ended.
func (b *Budget) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		<-b.done
		return
	}
	b.closed = true
	close(b.stop)
	var ends []*Lease
	for e := b.idle.Front(); e != nil; e = e.Next() {
		ends = append(ends, e.Value.(*Lease))
	}
	b.idle.Init()
	for _, l := range ends {
		b.takeLocked(l)
	}
	b.mu.Unlock()
	b.endTaken(ends)
	<-b.done
}

// BudgetStats is a snapshot of a budget.
type BudgetStats struct {
	Warm    int    // processes counted against the maximum
	Idle    int    // of which idle
	Busy    int    // processes in use, warm or past the maximum
	Ending  int    // idle processes being ended, still counted in Warm
	Evicted uint64 // idle processes ended to make room, since the start
	Reaped  uint64 // idle processes ended by the idle timeout, since the start
}

// Stats reports the budget's counts.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Warm: b.warm, Idle: b.idle.Len(), Busy: len(b.all) - b.idle.Len() - b.ending, Ending: b.ending,
		Evicted: b.evicted, Reaped: b.reaped}
}
