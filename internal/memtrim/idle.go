package memtrim

import (
	"context"
	"sync/atomic"
	"time"
)

// Idle gives memory back once the server has been idle for a while: a
// request brings back pages of the executable, heap the collector keeps
// for the next burst and caches' working memory, and a server that then
// sits idle (a laptop's, a small team's between pushes) holds them for
// nothing. Touch marks activity; Run calls trim after a quiet time, and
// again every quiet time while the server stays idle. A request after the trim pays a few minor
// faults (pages come back from the page cache) and the heap's growth.
type Idle struct {
	last atomic.Int64 // unix nanoseconds of the last Touch
	now  func() time.Time
}

// NewIdle returns an Idle whose quiet time starts now.
func NewIdle(now func() time.Time) *Idle {
	if now == nil {
		now = time.Now
	}
	i := &Idle{now: now}
	i.last.Store(now().UnixNano())
	return i
}

// Touch records activity: a request began.
func (i *Idle) Touch() { i.last.Store(i.now().UnixNano()) }

// Run calls trim when nothing touched i for quiet, and again every quiet
// while nothing does (the server's own background work — sweeps, the
// task queue, closing idle connections — brings pages back), checking
// every tick, until ctx ends. A quiet time of 0 or less runs nothing.
func (i *Idle) Run(ctx context.Context, quiet, tick time.Duration, trim func()) {
	if quiet <= 0 {
		return
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var trimmed int64 // when trim last ran (unix nanoseconds)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// The trim counts from the moment it was found due, not from
		// when it returned: what happens while it runs (a request, the
		// clock moving) must not push the next one later.
		if now := i.now().UnixNano(); i.dueAt(now, quiet, trimmed) {
			trim()
			trimmed = now
		}
	}
}

// Due reports whether a trim is due: the last activity and the last trim
// (unix nanoseconds; 0 for none) are both at least quiet ago.
func (i *Idle) Due(quiet time.Duration, trimmed int64) bool {
	return i.dueAt(i.now().UnixNano(), quiet, trimmed)
}

func (i *Idle) dueAt(now int64, quiet time.Duration, trimmed int64) bool {
	return now-i.last.Load() >= int64(quiet) && now-trimmed >= int64(quiet)
}
