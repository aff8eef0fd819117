package tokens

import (
	"testing"
	"time"

	"quarry/internal/model"
)

func TestAuthCache(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tok := model.PersonalAccessToken{ID: 7}
	user := model.User{ID: 3, Username: "u"}
	for _, tc := range []struct {
		name string
		run  func(c *authCache) (authEntry, bool)
		want bool
	}{
		{"kept", func(c *authCache) (authEntry, bool) {
			c.put("d", tok, user, c.generation(), t0)
			return c.get("d", t0.Add(authCacheFor-time.Nanosecond))
		}, true},
		{"another token", func(c *authCache) (authEntry, bool) {
			c.put("d", tok, user, c.generation(), t0)
			return c.get("e", t0)
		}, false},
		{"too old", func(c *authCache) (authEntry, bool) {
			c.put("d", tok, user, c.generation(), t0)
			return c.get("d", t0.Add(authCacheFor))
		}, false},
		{"a clock gone back", func(c *authCache) (authEntry, bool) {
			c.put("d", tok, user, c.generation(), t0)
			return c.get("d", t0.Add(-time.Second))
		}, false},
		{"invalidated after the put", func(c *authCache) (authEntry, bool) {
			c.put("d", tok, user, c.generation(), t0)
			c.invalidate()
			return c.get("d", t0)
		}, false},
		{"read before an invalidation, put after it", func(c *authCache) (authEntry, bool) {
			gen := c.generation()
			c.invalidate() // a write committed while the read ran
			c.put("d", tok, user, gen, t0)
			return c.get("d", t0)
		}, false},
		{"read again after the invalidation", func(c *authCache) (authEntry, bool) {
			c.invalidate()
			c.put("d", tok, user, c.generation(), t0)
			return c.get("d", t0)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := tc.run(newAuthCache())
			if ok != tc.want {
				t.Fatalf("found %v; want %v", ok, tc.want)
			}
			if ok && (e.t.ID != tok.ID || e.u.Username != user.Username) {
				t.Errorf("entry %+v", e)
			}
		})
	}
}

// TestAuthCache_off: a nil cache (PostgreSQL) keeps nothing and does not
// fail.
func TestAuthCache_off(t *testing.T) {
	var c *authCache
	c.put("d", model.PersonalAccessToken{}, model.User{}, c.generation(), time.Now())
	if _, ok := c.get("d", time.Now()); ok {
		t.Error("a nil cache answered")
	}
	c.invalidate()
}

// TestAuthCache_bound: past maxCachedTokens the entries start afresh.
func TestAuthCache_bound(t *testing.T) {
	c := newAuthCache()
	now := time.Unix(1000, 0)
	for i := range maxCachedTokens + 1 {
		c.put(string(rune(i+1))+"x", model.PersonalAccessToken{}, model.User{}, c.generation(), now)
	}
	if n := len(c.entries); n > maxCachedTokens || n == 0 {
		t.Errorf("%d entries; want at most %d", n, maxCachedTokens)
	}
}
