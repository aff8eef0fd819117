package alerts

import (
	"testing"
	"time"
)

func TestTargetCache(t *testing.T) {
	var c targetCache
	now := time.Unix(1000, 0)
	k := targetKey{path: "g/p", route: ByIdentifier, identifier: "abc"}
	if _, ok := c.get(k, now); ok {
		t.Fatal("empty cache answered")
	}
	gen := c.generation()
	c.put(k, target{projectID: 7, until: now.Add(IntakeCacheTTL)}, gen)
	if got, ok := c.get(k, now); !ok || got.projectID != 7 {
		t.Fatalf("got %+v %v", got, ok)
	}
	if _, ok := c.get(k, now.Add(IntakeCacheTTL+time.Nanosecond)); ok {
		t.Error("expired entry answered")
	}
	// A lookup that began before a change is not kept.
	gen = c.generation()
	c.clear()
	c.put(k, target{projectID: 8, until: now.Add(IntakeCacheTTL)}, gen)
	if _, ok := c.get(k, now); ok {
		t.Error("a lookup older than the change was kept")
	}
	// The cache empties itself when full.
	gen = c.generation()
	for i := 0; i <= intakeCacheLimit; i++ {
		c.put(targetKey{path: "g/p", identifier: string(rune('a'+i%26)) + string(rune(i))}, target{until: now.Add(time.Second)}, gen)
	}
	if n := len(c.m); n > intakeCacheLimit {
		t.Errorf("%d entries; limit %d", n, intakeCacheLimit)
	}
}
