// Package ratelimit counts requests per key in fixed windows, in memory.
//
// A limit is per process: behind a load balancer each Quarry process
// allows the limit on its own, which bounds abuse without a shared store.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows Max events per key in each Window.
type Limiter struct {
	Max    int
	Window time.Duration
	Now    func() time.Time // time.Now when nil

	mu      sync.Mutex
	windows map[string]window
	swept   time.Time
}

type window struct {
	start time.Time
	count int
}

// New returns a limiter of max events per window; max ≤ 0 allows all.
func New(max int, per time.Duration) *Limiter {
	return &Limiter{Max: max, Window: per}
}

// Allow counts one event for key and reports whether it is within the limit.
func (l *Limiter) Allow(key string) bool {
	if l == nil {
		return true
	}
	return l.AllowMax(key, l.Max)
}

// AllowMax is Allow with a limit of max events per window (a limit an
// administrator may change at any time); max ≤ 0 allows all.
func (l *Limiter) AllowMax(key string, max int) bool {
	if l == nil || max <= 0 {
		return true
	}
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.windows == nil {
		l.windows = map[string]window{}
	}
	// Forget finished windows now and then so idle keys do not pile up.
	if now.Sub(l.swept) > l.Window {
		for k, w := range l.windows {
			if now.Sub(w.start) >= l.Window {
				delete(l.windows, k)
			}
		}
		l.swept = now
	}
	w, ok := l.windows[key]
	if !ok || now.Sub(w.start) >= l.Window {
		w = window{start: now}
	}
	if w.count >= max {
		return false
	}
	w.count++
	l.windows[key] = w
	return true
}
