package memtrim

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestIdleDue(t *testing.T) {
	const quiet = 30 * time.Second
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		name  string
		steps func(c *fakeClock, i *Idle) (trimmed int64)
		want  bool
	}{
		{"just started", func(c *fakeClock, i *Idle) int64 { return 0 }, false},
		{"quiet since the start", func(c *fakeClock, i *Idle) int64 { c.add(quiet); return 0 }, true},
		{"a request a moment ago", func(c *fakeClock, i *Idle) int64 {
			c.add(quiet)
			i.Touch()
			c.add(quiet - time.Second)
			return 0
		}, false},
		{"quiet since the last request", func(c *fakeClock, i *Idle) int64 {
			c.add(time.Second)
			i.Touch()
			c.add(quiet)
			return 0
		}, true},
		{"trimmed a moment ago", func(c *fakeClock, i *Idle) int64 {
			c.add(10 * quiet)
			return c.now().Add(-time.Second).UnixNano()
		}, false},
		{"still idle a quiet time after the trim", func(c *fakeClock, i *Idle) int64 {
			c.add(10 * quiet)
			return c.now().Add(-quiet).UnixNano()
		}, true},
		{"a request after the trim, not yet quiet", func(c *fakeClock, i *Idle) int64 {
			c.add(10 * quiet)
			trimmed := c.now().Add(-quiet).UnixNano()
			i.Touch()
			c.add(quiet / 2)
			return trimmed
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClock{t: start}
			i := NewIdle(c.now)
			trimmed := tc.steps(c, i)
			if got := i.Due(quiet, trimmed); got != tc.want {
				t.Errorf("Due = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestIdleRun: Run trims after a quiet time, again a quiet time later
// while nothing happens, not while requests come, and stops with its
// context.
func TestIdleRun(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	i := NewIdle(c.now)
	trims := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		i.Run(ctx, time.Minute, time.Millisecond, func() { trims <- struct{}{} })
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-trims:
		case <-time.After(10 * time.Second):
			t.Fatalf("no trim %s", what)
		}
	}
	none := func(what string) {
		t.Helper()
		select {
		case <-trims:
			t.Fatalf("a trim %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
	none("before the quiet time")
	c.add(time.Minute)
	wait("after the quiet time")
	none("twice in one quiet time")
	c.add(time.Minute)
	wait("a quiet time after the last trim, still idle")
	i.Touch()
	c.add(30 * time.Second)
	none("half a quiet time after a request")
	c.add(30 * time.Second)
	wait("a quiet time after a request")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}

func TestIdleRun_off(t *testing.T) {
	done := make(chan struct{})
	go func() {
		NewIdle(nil).Run(context.Background(), 0, time.Millisecond, func() { t.Error("trimmed with a quiet time of 0") })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run with a quiet time of 0 did not return")
	}
}
