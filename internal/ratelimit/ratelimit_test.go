package ratelimit

import (
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(3, time.Minute)
	l.Now = func() time.Time { return now }
	steps := []struct {
		advance time.Duration
		key     string
		want    bool
	}{
		{0, "a", true}, {0, "a", true}, {0, "a", true},
		{0, "a", false},                // fourth in the window
		{0, "b", true},                 // other keys are counted apart
		{59 * time.Second, "a", false}, // same window
		{time.Second, "a", true},       // a new window starts
		{0, "a", true}, {0, "a", true}, {0, "a", false},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := l.Allow(s.key); got != s.want {
			t.Fatalf("step %d (%s): Allow = %v, want %v", i, s.key, got, s.want)
		}
	}
	if len(l.windows) > 2 {
		t.Errorf("windows kept: %d", len(l.windows))
	}
}

func TestLimiterUnlimited(t *testing.T) {
	var nilL *Limiter
	for i := 0; i < 100; i++ {
		if !New(0, time.Minute).Allow("x") || !nilL.Allow("x") {
			t.Fatal("a limit of 0 or a nil limiter must allow everything")
		}
	}
}
