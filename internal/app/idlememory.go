package app

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// idleAllocations is how little the process may allocate in one
// idleCheck to count as idle.
const (
	idleCheck       = time.Minute
	idleAllocations = 1 << 20
)

// releaseWhenIdle gives the heap's free pages back to the system once the
// process goes idle: Go's scavenger returns them slowly, and a server that
// served a burst and then waits for hours need not hold the burst's
// memory. A process that allocated less than idleAllocations over the
// last idleCheck is idle; it is released once per idle spell.
func releaseWhenIdle(ctx context.Context) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	last, released := allocated(), false
	tick := time.NewTicker(idleCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := allocated()
		idle := now-last < idleAllocations
		if idle && !released {
			debug.FreeOSMemory()
			now = allocated()
		}
		released = idle
		last = now
	}
}
