package runner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// DefaultConfigFile is where `quarry runner` keeps its configuration when
// --config is not given: in the working folder.
const DefaultConfigFile = "quarry-runner.json"

// Config is one registered runner: what the server gave at registration and
// how this machine runs jobs. It is stored as JSON (SaveConfig, LoadConfig);
// the file holds the runner's secret token.
type Config struct {
	// URL is the server's address as the user gave it ("http://host:8080");
	// the API is under <URL>/api/v4 (a trailing "/" or "/ci" is dropped, as
	// gitlab-runner does).
	URL string `json:"url"`
	// Token is the runner authentication token (glrt-… or the legacy
	// token POST /runners returned).
	Token string `json:"token"`
	// ID is the runner's id on the server (0 when the server did not say).
	ID             int64  `json:"id,omitempty"`
	TokenExpiresAt string `json:"token_expires_at,omitempty"`
	// SystemID names this machine to the server ("s_" and 12 hex digits);
	// it is made once, at the first registration, and kept.
	SystemID    string `json:"system_id"`
	Description string `json:"description,omitempty"`
	// BuildsDir holds one folder per running job, <BuildsDir>/<job id>
	// (and <job id>.tmp for its scripts and file variables), removed when
	// the job ends. Default "builds"; a relative path is taken from the
	// working folder of Run's process.
	BuildsDir string `json:"builds_dir,omitempty"`
	// CacheDir holds the jobs' caches (cache:), one zip per project and
	// key; default <BuildsDir>/cache.
	CacheDir string `json:"cache_dir,omitempty"`
	// Concurrent is how many jobs run at once (default 1).
	Concurrent int `json:"concurrent,omitempty"`

	// Version and Revision are reported to the server in every request's
	// info and to jobs as CI_RUNNER_VERSION and CI_RUNNER_REVISION. They
	// are not stored; the caller sets them (Quarry's build info).
	Version  string `json:"-"`
	Revision string `json:"-"`
	// HTTPClient, when set, makes every request to the server (tests, TLS
	// settings). The default has no overall timeout (jobs/request is
	// long-polled) but a 10-minute response-header timeout, and refuses
	// redirects to another host.
	HTTPClient *http.Client `json:"-"`
}

// NewSystemID returns a fresh runner-manager id: "s_" and 12 random hex
// digits.
func NewSystemID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails: the runtime crashes first (Go 1.24+)
	return "s_" + hex.EncodeToString(b[:])
}

// LoadConfig reads a configuration written by SaveConfig.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("runner config: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("runner config %q: %w", path, err)
	}
	return c, nil
}

// SaveConfig writes c to path as indented JSON with mode 0600 (it holds the
// runner's token), replacing the file in one rename so a reader never sees
// half of it.
func SaveConfig(path string, c Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".quarry-runner-*.json")
	if err != nil {
		return fmt.Errorf("save runner config: %w", err)
	}
	defer os.Remove(f.Name()) // gone after the rename; cleans up on failure
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("save runner config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("save runner config: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save runner config: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("save runner config: %w", err)
	}
	return nil
}

// normalized checks c and fills in the defaults Run works with.
func (c Config) normalized() (Config, error) {
	if c.URL == "" {
		return c, errors.New("runner config: url is missing")
	}
	if c.Token == "" {
		return c, errors.New("runner config: token is missing")
	}
	if c.Concurrent <= 0 {
		c.Concurrent = 1
	}
	if c.BuildsDir == "" {
		c.BuildsDir = "builds"
	}
	abs, err := filepath.Abs(c.BuildsDir)
	if err != nil {
		return c, fmt.Errorf("builds dir: %w", err)
	}
	c.BuildsDir = abs
	if c.CacheDir == "" {
		c.CacheDir = filepath.Join(c.BuildsDir, "cache")
	}
	if c.CacheDir, err = filepath.Abs(c.CacheDir); err != nil {
		return c, fmt.Errorf("cache dir: %w", err)
	}
	if c.SystemID == "" {
		c.SystemID = NewSystemID()
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Revision == "" {
		c.Revision = "unknown"
	}
	return c, nil
}
