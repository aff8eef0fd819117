package ci

import (
	"container/list"
	"sync"

	"quarry/internal/ciconfig"
)

// configKey names a configuration by what fixes it: a commit never
// changes, so neither does the configuration read from it.
type configKey struct{ repo, commit, path, include string }

// cachedConfig is a loaded configuration or the error loading it gave.
type cachedConfig struct {
	cfg *ciconfig.Config
	err error
}

// configCache keeps the most recently used configurations: creating many
// pipelines at one commit (a busy branch, triggers, retries of a parent)
// loads its YAML once. Configurations are read-only once loaded.
type configCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recent
	items map[configKey]*list.Element
}

type configEntry struct {
	key configKey
	val cachedConfig
}

func newConfigCache(max int) *configCache {
	return &configCache{max: max, order: list.New(), items: map[configKey]*list.Element{}}
}

func (c *configCache) get(k configKey) (cachedConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return cachedConfig{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*configEntry).val, true
}

func (c *configCache) put(k configKey, v cachedConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*configEntry).val = v
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&configEntry{key: k, val: v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*configEntry).key)
	}
}
