package gencache

import (
	"strconv"
	"testing"
	"time"
)

const ttl = time.Second

type pair struct {
	token, user int64
}

func TestCache(t *testing.T) {
	t0 := time.Unix(1000, 0)
	v := pair{7, 3}
	for _, tc := range []struct {
		name string
		run  func(c *Cache[pair]) (pair, bool)
		want bool
	}{
		{"kept", func(c *Cache[pair]) (pair, bool) {
			c.Put("d", v, c.Generation(), t0)
			return at(c.Get("d", t0.Add(ttl-time.Nanosecond)))
		}, true},
		{"another key", func(c *Cache[pair]) (pair, bool) {
			c.Put("d", v, c.Generation(), t0)
			return at(c.Get("e", t0))
		}, false},
		{"too old", func(c *Cache[pair]) (pair, bool) {
			c.Put("d", v, c.Generation(), t0)
			return at(c.Get("d", t0.Add(ttl)))
		}, false},
		{"a clock gone back", func(c *Cache[pair]) (pair, bool) {
			c.Put("d", v, c.Generation(), t0)
			return at(c.Get("d", t0.Add(-time.Second)))
		}, false},
		{"invalidated after the put", func(c *Cache[pair]) (pair, bool) {
			c.Put("d", v, c.Generation(), t0)
			c.Invalidate()
			return at(c.Get("d", t0))
		}, false},
		{"read before an invalidation, put after it", func(c *Cache[pair]) (pair, bool) {
			gen := c.Generation()
			c.Invalidate() // a write committed while the read ran
			c.Put("d", v, gen, t0)
			return at(c.Get("d", t0))
		}, false},
		{"read again after the invalidation", func(c *Cache[pair]) (pair, bool) {
			c.Invalidate()
			c.Put("d", v, c.Generation(), t0)
			return at(c.Get("d", t0))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.run(New[pair](ttl, 10))
			if ok != tc.want {
				t.Fatalf("found %v; want %v", ok, tc.want)
			}
			if ok && got != v {
				t.Errorf("value %+v; want %+v", got, v)
			}
		})
	}
}

// at drops Get's generation.
func at(v pair, _ uint64, ok bool) (pair, bool) { return v, ok }

// TestCache_off: a nil cache keeps nothing and does not fail.
func TestCache_off(t *testing.T) {
	var c *Cache[pair]
	c.Put("d", pair{}, c.Generation(), time.Now())
	if _, _, ok := c.Get("d", time.Now()); ok {
		t.Error("a nil cache answered")
	}
	c.Invalidate()
}

// TestCache_bound: past its bound the entries start afresh.
func TestCache_bound(t *testing.T) {
	c := New[pair](ttl, 100)
	now := time.Unix(1000, 0)
	for i := range 101 {
		c.Put(strconv.Itoa(i), pair{}, c.Generation(), now)
	}
	if n := len(c.entries); n > 100 || n == 0 {
		t.Errorf("%d entries; want at most 100", n)
	}
}
