package bytelru

import (
	"fmt"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	type step struct {
		put   string // key to put ("" for none)
		size  int64
		get   string // key to read after the put ("" for none)
		found bool
	}
	for _, tc := range []struct {
		name        string
		max         int64
		steps       []step
		wantEntries int
		wantBytes   int64
	}{
		{"within the bound", 100, []step{{put: "a", size: 40, get: "a", found: true}, {put: "b", size: 60, get: "a", found: true}}, 2, 100},
		{"the least recently used goes", 100, []step{
			{put: "a", size: 40}, {put: "b", size: 40, get: "a", found: true}, // a used last
			{put: "c", size: 40, get: "b", found: false}}, 2, 80},
		{"larger than the bound: not kept", 100, []step{{put: "a", size: 10}, {put: "big", size: 101, get: "big", found: false}}, 1, 10},
		{"exactly the bound", 100, []step{{put: "a", size: 100, get: "a", found: true}}, 1, 100},
		{"a put again recounts its size", 100, []step{{put: "a", size: 10}, {put: "b", size: 10}, {put: "a", size: 90, get: "b", found: true}}, 2, 100},
		{"a grown entry pushes the others out", 100, []step{{put: "a", size: 10}, {put: "b", size: 10}, {put: "b", size: 95, get: "a", found: false}}, 1, 95},
		{"missing", 100, []step{{get: "x", found: false}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New[string, int](tc.max)
			for i, s := range tc.steps {
				if s.put != "" {
					c.Put(s.put, i, s.size)
				}
				if s.get != "" {
					if _, ok := c.Get(s.get); ok != s.found {
						t.Fatalf("step %d: Get(%q) found %v; want %v", i, s.get, ok, s.found)
					}
				}
			}
			if n, b := c.Stats(); n != tc.wantEntries || b != tc.wantBytes {
				t.Errorf("Stats() = %d entries, %d bytes; want %d, %d", n, b, tc.wantEntries, tc.wantBytes)
			}
		})
	}
}

func TestCache_off(t *testing.T) {
	for _, max := range []int64{0, -1} {
		c := New[string, string](max)
		if c != nil {
			t.Fatalf("New(%d) = %v; want nil (off)", max, c)
		}
		c.Put("a", "b", 1)
		if v, ok := c.Get("a"); ok || v != "" {
			t.Errorf("an off cache returned %q, %v", v, ok)
		}
		if n, b := c.Stats(); n != 0 || b != 0 {
			t.Errorf("an off cache's stats %d, %d", n, b)
		}
	}
}

// TestCache_concurrent: many writers and readers keep the bound (run
// with -race).
func TestCache_concurrent(t *testing.T) {
	c := New[string, []byte](1000)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := fmt.Sprint((w*7 + i) % 60)
				if v, ok := c.Get(k); ok && len(v) != 25 {
					t.Errorf("value of %d bytes", len(v))
				}
				c.Put(k, make([]byte, 25), 25)
			}
		}()
	}
	wg.Wait()
	if n, b := c.Stats(); b > 1000 || int64(n)*25 != b {
		t.Errorf("%d entries counting %d bytes; want at most 1000, 25 each", n, b)
	}
}
