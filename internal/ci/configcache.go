package ci

import "quarry/internal/ciconfig"

// configKey names a configuration by what fixes it: a commit never
// changes, so neither does the configuration read from it. The engine
// keeps the most recently used configurations (an LRU of 512): creating
// many pipelines at one commit (a busy branch, triggers, retries of a
// parent) loads its YAML once. Configurations are read-only once loaded.
type configKey struct{ repo, commit, path, include string }

// cachedConfig is a loaded configuration or the error loading it gave.
type cachedConfig struct {
	cfg *ciconfig.Config
	err error
}
