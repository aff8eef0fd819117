// Package config holds Quarry's settings and reads them from defaults, an
// optional TOML file, QUARRY_* environment variables and command-line flags,
// in that order of increasing precedence.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is every setting of a Quarry process.
type Config struct {
	Listen      string `toml:"listen"`
	DataDir     string `toml:"data_dir"`
	DatabaseURL string `toml:"database_url"`
	ExternalURL string `toml:"external_url"`
	ConfigFile  string `toml:"-"`

	// SecretsKeyFile is the key file that seals the secrets kept in the
	// database (CI/CD variable values, registration tokens); empty is
	// <data-dir>/secrets/encryption-keys.json, made on first start.
	// Processes sharing one database must share the file.
	SecretsKeyFile string `toml:"secrets_key_file"`

	// TokenPrefix starts every personal access token issued.
	TokenPrefix string `toml:"token_prefix"`
	// PasswordCost is the bcrypt cost for stored passwords.
	PasswordCost int `toml:"password_cost"`
	// RootPassword and RootToken preset the administrator's password and
	// first token on first start (for automation).
	RootPassword string `toml:"root_password"`
	RootToken    string `toml:"root_token"`

	LogLevel  string `toml:"log_level"`
	LogFormat string `toml:"log_format"`

	// Storages names extra repository storages: "name=/path,name2=/path2".
	// The "default" storage is <data-dir>/repositories unless named here.
	Storages string `toml:"storages"`
	// DefaultBranch is the branch of new repositories.
	DefaultBranch string `toml:"default_branch"`
	// GitMaxProcesses bounds the warm git processes (cat-file and the
	// like) kept at once across all repositories; at least 1.
	GitMaxProcesses int `toml:"git_max_processes"`
	// GitIdleTimeout is how long a warm git process stays unused before it
	// is ended; more than 0.
	GitIdleTimeout time.Duration `toml:"git_idle_timeout"`
	// DeletionDelay is how long deleted projects and groups stay marked
	// for deletion (restorable) before they are removed; 0, the default
	// (GitLab's delayed_project_deletion: false), removes at once.
	DeletionDelay time.Duration `toml:"deletion_delay"`
	// TaskWorkers bounds the background tasks running at once; 0 runs none
	// in this process (an API-only process beside workers elsewhere).
	TaskWorkers int `toml:"task_workers"`
	// TaskLease is how long a claimed task stays with its worker without
	// renewal: after a crash, the task runs again once it has passed.
	TaskLease time.Duration `toml:"task_lease"`
	// StorageMoveConcurrency bounds the repository storage moves this
	// process runs at once (beside TaskWorkers; 0 runs none here).
	StorageMoveConcurrency int `toml:"storage_move_concurrency"`
	// StorageMoveWriteWait bounds how long a move waits for writes in
	// flight (pushes, API commits) once the container is read-only.
	StorageMoveWriteWait time.Duration `toml:"storage_move_write_wait"`
	// StorageMoveCleanupDelay is how long a move keeps the source copies
	// after the switch, for reads that opened them.
	StorageMoveCleanupDelay time.Duration `toml:"storage_move_cleanup_delay"`
	// HousekeepingConcurrency bounds the repository housekeepings this
	// process runs at once (beside TaskWorkers; 0 runs none here).
	HousekeepingConcurrency int `toml:"housekeeping_concurrency"`
	// HousekeepingPruneGrace is how old an unreachable object must be
	// before housekeeping prunes it (GitLab's two weeks): younger ones
	// may belong to a push or a commit whose ref is not moved yet.
	HousekeepingPruneGrace time.Duration `toml:"housekeeping_prune_grace"`
	// GroupExportTTL is how long a finished group export stays
	// downloadable.
	GroupExportTTL time.Duration `toml:"group_export_ttl"`

	// UserCap, when positive, is how many users a top-level group takes
	// before new members wait for an owner's approval.
	UserCap int `toml:"user_cap"`

	// ArchiveRateLimit is how many repository archives one user (or one
	// client address, for anonymous callers) may request per minute; 0
	// removes the limit.
	ArchiveRateLimit int `toml:"archive_rate_limit"`
	// ArchiveCacheBytes bounds the built archives kept under
	// <data-dir>/cache/archives; 0 keeps none.
	ArchiveCacheBytes int64 `toml:"archive_cache_bytes"`
	// PackObjectsCacheBytes bounds the answers of clones and fetches kept
	// under <data-dir>/cache/pack-objects for identical requests (0: no
	// cache); each is kept PackObjectsCacheTTL after it was built.
	PackObjectsCacheBytes int64         `toml:"pack_objects_cache_bytes"`
	PackObjectsCacheTTL   time.Duration `toml:"pack_objects_cache_ttl"`
	// EntityCacheBytes bounds the encoded entities (projects, users,
	// merge requests) kept in memory by their rows' versions; 0 keeps
	// none.
	EntityCacheBytes int64 `toml:"entity_cache_bytes"`
	// PageCacheBytes bounds what the web pages keep rendered
	// (highlighted files, READMEs, folders' listings, projects' heads,
	// merge requests' diffs); 0 keeps nothing.
	PageCacheBytes int64 `toml:"page_cache_bytes"`

	// RunnerLongPoll is how long a runner's request for a job waits for
	// one before the server answers that there is none.
	RunnerLongPoll time.Duration `toml:"runner_long_poll"`
	// StuckJobsInterval is how often running and pending jobs are checked
	// for timeouts and silent runners; RunnerSilence is how long a running
	// job may go without word from its runner before it is failed.
	StuckJobsInterval time.Duration `toml:"stuck_jobs_interval"`
	RunnerSilence     time.Duration `toml:"runner_silence"`
	// MaxJobLogBytes bounds a job's log (more fails the job:
	// trace_size_exceeded).
	MaxJobLogBytes int64 `toml:"max_job_log_bytes"`
	// WithRunner starts a runner inside the server taking this many jobs
	// at once (0: none), for a set-up with nothing else installed.
	WithRunner int `toml:"with_runner"`

	ShutdownTimeout time.Duration `toml:"shutdown_timeout"`
	// MaxParsedBodyBytes bounds a parsed request body (JSON, a form, a
	// multipart form) read from a known caller; rows carrying file
	// content take MaxFileBytes instead, wiki pages and attachments their
	// instance settings.
	MaxParsedBodyBytes int64 `toml:"max_parsed_body_bytes"`
	// MaxFileBytes bounds the content of the files and commits APIs.
	MaxFileBytes int64 `toml:"max_file_bytes"`
	// MemoryLimit is the process's soft memory limit (Go's
	// debug.SetMemoryLimit): past it the collector works harder and gives
	// memory back. 0 derives it from the machine; -1 sets none.
	MemoryLimit int64 `toml:"memory_limit"`
	// IdleTrim is how long the server goes without a request before it
	// gives memory back (the executable's pages requests brought back,
	// the collector's spare heap); 0 never does.
	IdleTrim time.Duration `toml:"idle_trim"`
	// MaxConnections bounds the connections served at once; a connection
	// past it is answered 503 and closed.
	MaxConnections int `toml:"max_connections"`
	// BodyStallTimeout is how long a request body may send nothing;
	// BodyMinRate is the slowest it may arrive (bytes a second) once
	// BodyGrace has passed. A body past either is cut off (408).
	BodyStallTimeout time.Duration `toml:"body_stall_timeout"`
	BodyMinRate      int64         `toml:"body_min_rate"`
	BodyGrace        time.Duration `toml:"body_grace"`

	// GeoNodeName names the geo node this process is (GitLab's
	// geo_node_name). Naming a node that is not the primary makes the
	// process a read-only secondary that pushes its status to the primary
	// every GeoStatusInterval; empty, the process is the primary, and the
	// node at its external URL is the current one.
	GeoNodeName       string        `toml:"geo_node_name"`
	GeoStatusInterval time.Duration `toml:"geo_status_interval"`

	// PprofListen is a loopback address serving net/http/pprof
	// (/debug/pprof/) on its own listener; empty, the default, serves
	// none. Profiles reveal the process's memory and code paths, so any
	// address but a loopback one is refused at start.
	PprofListen string `toml:"pprof_listen"`

	// SSHListen is where the built-in SSH server (git over SSH) listens;
	// empty serves none. SSHExternalHost and SSHExternalPort are what
	// ssh_url_to_repo shows (default: the external URL's host and the
	// port of SSHListen).
	SSHListen       string `toml:"ssh_listen"`
	SSHExternalHost string `toml:"ssh_external_host"`
	SSHExternalPort int    `toml:"ssh_external_port"`

	// Clock, when set, is the time of the whole process: services, store
	// writes, background work and rendered entities (tests set it; nil is
	// the wall clock). It has no flag.
	Clock func() time.Time `toml:"-"`
}

// DefaultSSHListen is where the built-in SSH server listens unless told
// otherwise.
const DefaultSSHListen = "127.0.0.1:2222"

// Default returns the settings of a server started with no configuration.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:8080",
		SSHListen:       DefaultSSHListen,
		DataDir:         "./quarry-data",
		TokenPrefix:     "glpat-",
		PasswordCost:    10,
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: 30 * time.Second,
		DefaultBranch:   "main",
		DeletionDelay:   0, // remove at once
		GitMaxProcesses: 128,
		GitIdleTimeout:  time.Minute,
		TaskWorkers:     2,
		TaskLease:       time.Minute,

		StorageMoveConcurrency:  2,
		StorageMoveWriteWait:    30 * time.Second,
		StorageMoveCleanupDelay: time.Minute,
		HousekeepingConcurrency: 1,
		HousekeepingPruneGrace:  14 * 24 * time.Hour,
		GroupExportTTL:          24 * time.Hour,
		MaxParsedBodyBytes:      10 << 20,
		MaxFileBytes:            100 << 20,
		MaxConnections:          4096,
		IdleTrim:                30 * time.Second,
		BodyStallTimeout:        30 * time.Second,
		BodyMinRate:             1024,
		BodyGrace:               10 * time.Second,

		ArchiveRateLimit:  5,
		ArchiveCacheBytes: 1 << 30,

		PackObjectsCacheBytes: 1 << 30,
		PackObjectsCacheTTL:   5 * time.Minute,
		EntityCacheBytes:      32 << 20,
		PageCacheBytes:        32 << 20,

		RunnerLongPoll:    50 * time.Second,
		StuckJobsInterval: time.Minute,
		RunnerSilence:     time.Hour,
		MaxJobLogBytes:    100 << 20,

		GeoStatusInterval: 10 * time.Second,
	}
}

// Group names a set of settings. A command binds the groups it reads (see
// Bind); the settings of the other groups keep their defaults in its Config,
// whatever the environment or the file say, and its --help does not list them.
type Group string

// The groups of settings.
const (
	// Storage is where the data lives: --data-dir and --database-url.
	Storage Group = "storage"
	// Accounts are the settings of users and tokens: the token prefix, the
	// password cost and the presets of root created on first start.
	Accounts Group = "accounts"
	// Secrets is the key file that seals secrets at rest.
	Secrets Group = "secrets"
	// Log is --log-level and --log-format.
	Log Group = "log"
	// Server is everything only a serving process reads: the listener,
	// repositories, background tasks and limits.
	Server Group = "server"
)

// AllGroups is every setting: what "quarry serve" binds.
var AllGroups = []Group{Storage, Secrets, Accounts, Log, Server}

// option binds one setting to its group, flag, environment variable and
// field.
type option struct {
	group            Group
	flag, env, usage string
	ptr              any // *string, *int, *int64 or *time.Duration
}

// options lists every setting but ConfigFile; each field with a toml key
// has a row here (a test checks).
func (c *Config) options() []option {
	return []option{
		{Storage, "data-dir", "QUARRY_DATA_DIR", "folder for the database, repositories and uploads", &c.DataDir},
		{Storage, "database-url", "QUARRY_DATABASE_URL", "postgres://… to use PostgreSQL; empty for the embedded SQLite database", &c.DatabaseURL},
		{Secrets, "secrets-key-file", "QUARRY_SECRETS_KEY_FILE", "key file sealing CI/CD variables and registration tokens in the database (default: <data-dir>/secrets/encryption-keys.json, made on first start; processes sharing a database share it)", &c.SecretsKeyFile},
		{Accounts, "token-prefix", "QUARRY_TOKEN_PREFIX", "a new instance's first personal_access_token_prefix (application settings)", &c.TokenPrefix},
		{Accounts, "password-cost", "QUARRY_PASSWORD_COST", "bcrypt cost of stored passwords (4-31)", &c.PasswordCost},
		{Accounts, "root-password", "QUARRY_ROOT_PASSWORD", "password of the root user created on first start (default: random, written to <data-dir>/initial_root_password)", &c.RootPassword},
		{Accounts, "root-token", "QUARRY_ROOT_TOKEN", "first personal access token of root, created on first start", &c.RootToken},
		{Log, "log-level", "QUARRY_LOG_LEVEL", "debug, info, warn or error", &c.LogLevel},
		{Log, "log-format", "QUARRY_LOG_FORMAT", "text or json", &c.LogFormat},
		{Server, "listen", "QUARRY_LISTEN", "address to listen on", &c.Listen},
		{Server, "external-url", "QUARRY_EXTERNAL_URL", "URL clients reach this server at (default: derived from --listen)", &c.ExternalURL},
		{Server, "storages", "QUARRY_STORAGES", "extra repository storages, name=/path,name2=/path2", &c.Storages},
		{Server, "default-branch", "QUARRY_DEFAULT_BRANCH", "branch of new repositories", &c.DefaultBranch},
		{Server, "git-max-processes", "QUARRY_GIT_MAX_PROCESSES", "warm git processes kept at once, in all repositories (at least 1)", &c.GitMaxProcesses},
		{Server, "git-idle-timeout", "QUARRY_GIT_IDLE_TIMEOUT", "how long an unused warm git process lives", &c.GitIdleTimeout},
		{Server, "deletion-delay", "QUARRY_DELETION_DELAY", "a new instance's first deletion delay (application settings delayed_project_deletion and deletion_adjourned_period, in whole days; 0: remove at once)", &c.DeletionDelay},
		{Server, "task-workers", "QUARRY_TASK_WORKERS", "background tasks running at once (0: none in this process)", &c.TaskWorkers},
		{Server, "task-lease", "QUARRY_TASK_LEASE", "how long a crashed worker's task stays claimed", &c.TaskLease},
		{Server, "storage-move-concurrency", "QUARRY_STORAGE_MOVE_CONCURRENCY", "repository storage moves running at once in this process (0: none here)", &c.StorageMoveConcurrency},
		{Server, "storage-move-write-wait", "QUARRY_STORAGE_MOVE_WRITE_WAIT", "how long a storage move waits for pushes and API writes in flight before it fails", &c.StorageMoveWriteWait},
		{Server, "housekeeping-concurrency", "QUARRY_HOUSEKEEPING_CONCURRENCY", "repository housekeepings (repack, prune, commit-graph) running at once in this process (0: none here)", &c.HousekeepingConcurrency},
		{Server, "housekeeping-prune-grace", "QUARRY_HOUSEKEEPING_PRUNE_GRACE", "how old an unreachable object must be before housekeeping prunes it", &c.HousekeepingPruneGrace},
		{Server, "group-export-ttl", "QUARRY_GROUP_EXPORT_TTL", "how long a finished group export stays downloadable before it expires", &c.GroupExportTTL},
		{Server, "storage-move-cleanup-delay", "QUARRY_STORAGE_MOVE_CLEANUP_DELAY", "how long a storage move keeps the source copies after the switch, for reads that opened them", &c.StorageMoveCleanupDelay},
		{Server, "user-cap", "QUARRY_USER_CAP", "users a top-level group takes before new members need approval (0: no cap)", &c.UserCap},
		{Server, "archive-rate-limit", "QUARRY_ARCHIVE_RATE_LIMIT", "repository archives one user may request per minute (0: no limit)", &c.ArchiveRateLimit},
		{Server, "archive-cache-bytes", "QUARRY_ARCHIVE_CACHE_BYTES", "bytes of built archives kept for reuse (0: none)", &c.ArchiveCacheBytes},
		{Server, "pack-objects-cache-bytes", "QUARRY_PACK_OBJECTS_CACHE_BYTES", "bytes of clone and fetch packs kept for identical requests (0: no pack cache)", &c.PackObjectsCacheBytes},
		{Server, "pack-objects-cache-ttl", "QUARRY_PACK_OBJECTS_CACHE_TTL", "how long a cached clone or fetch pack is served after it was built", &c.PackObjectsCacheTTL},
		{Server, "runner-long-poll", "QUARRY_RUNNER_LONG_POLL", "how long a runner's request for a job waits for one", &c.RunnerLongPoll},
		{Server, "stuck-jobs-interval", "QUARRY_STUCK_JOBS_INTERVAL", "how often jobs are checked for timeouts and silent runners", &c.StuckJobsInterval},
		{Server, "runner-silence", "QUARRY_RUNNER_SILENCE", "how long a running job may go without word from its runner", &c.RunnerSilence},
		{Server, "max-job-log-bytes", "QUARRY_MAX_JOB_LOG_BYTES", "largest job log (more fails the job)", &c.MaxJobLogBytes},
		{Server, "with-runner", "QUARRY_WITH_RUNNER", "start a built-in runner taking this many jobs at once (0: none)", &c.WithRunner},
		{Server, "shutdown-timeout", "QUARRY_SHUTDOWN_TIMEOUT", "how long a graceful shutdown waits for requests", &c.ShutdownTimeout},
		{Server, "max-parsed-body-bytes", "QUARRY_MAX_PARSED_BODY_BYTES", "largest parsed request body (JSON, form) of a known caller", &c.MaxParsedBodyBytes},
		{Server, "max-file-bytes", "QUARRY_MAX_FILE_BYTES", "largest file content the files and commits APIs take", &c.MaxFileBytes},
		{Server, "memory-limit", "QUARRY_MEMORY_LIMIT", "soft memory limit in bytes (0: half the machine's memory; -1: none)", &c.MemoryLimit},
		{Server, "idle-trim", "QUARRY_IDLE_TRIM", "give memory back after this long without a request (0: never)", &c.IdleTrim},
		{Server, "max-connections", "QUARRY_MAX_CONNECTIONS", "connections served at once (more are answered 503)", &c.MaxConnections},
		{Server, "body-stall-timeout", "QUARRY_BODY_STALL_TIMEOUT", "how long a request body may send nothing before it is cut off", &c.BodyStallTimeout},
		{Server, "body-min-rate", "QUARRY_BODY_MIN_RATE", "slowest a request body may arrive after the grace, in bytes a second", &c.BodyMinRate},
		{Server, "body-grace", "QUARRY_BODY_GRACE", "how long a request body may arrive slower than the minimum rate", &c.BodyGrace},
		{Server, "geo-node-name", "QUARRY_GEO_NODE_NAME", "the geo node this process is; a secondary's name makes it read-only (empty: the primary)", &c.GeoNodeName},
		{Server, "geo-status-interval", "QUARRY_GEO_STATUS_INTERVAL", "how often a secondary geo node pushes its status to the primary", &c.GeoStatusInterval},
		{Server, "entity-cache-bytes", "QUARRY_ENTITY_CACHE_BYTES", "bytes of encoded projects, users and merge requests kept in memory by their rows' versions (0: none)", &c.EntityCacheBytes},
		{Server, "page-cache-bytes", "QUARRY_PAGE_CACHE_BYTES", "bytes of rendered web page parts (highlighted files, READMEs, listings, diffs) kept in memory (0: none)", &c.PageCacheBytes},
		{Server, "ssh-listen", "QUARRY_SSH_LISTEN", "address the built-in SSH server (git over SSH) listens on (empty: off)", &c.SSHListen},
		{Server, "ssh-external-host", "QUARRY_SSH_EXTERNAL_HOST", "host of SSH clone URLs (default: the external URL's host)", &c.SSHExternalHost},
		{Server, "ssh-external-port", "QUARRY_SSH_EXTERNAL_PORT", "port of SSH clone URLs (default: the port of --ssh-listen)", &c.SSHExternalPort},
		{Server, "pprof-listen", "QUARRY_PPROF_LISTEN", "loopback address serving net/http/pprof at /debug/pprof/ (empty: off; any other address is refused)", &c.PprofListen},
	}
}

// Flags is the configuration of one command: the settings of the groups it
// binds, read from flags, the environment and the file.
type Flags struct {
	fs      *flag.FlagSet
	groups  []Group
	flagged Config // the values the flags parse into
}

// Bind registers --config and the flags of the settings in groups on fs.
// Call Load after fs.Parse.
func Bind(fs *flag.FlagSet, groups ...Group) *Flags {
	f := &Flags{fs: fs, groups: groups, flagged: Default()}
	fs.StringVar(&f.flagged.ConfigFile, "config", "", "TOML configuration file (env QUARRY_CONFIG)")
	for _, o := range f.flagged.options() {
		if !f.binds(o.group) {
			continue
		}
		usage := fmt.Sprintf("%s (env %s)", o.usage, o.env)
		switch p := o.ptr.(type) {
		case *string:
			fs.StringVar(p, o.flag, *p, usage)
		case *int:
			fs.IntVar(p, o.flag, *p, usage)
		case *int64:
			fs.Int64Var(p, o.flag, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, o.flag, *p, usage)
		}
	}
	return f
}

func (f *Flags) binds(g Group) bool { return slices.Contains(f.groups, g) }

// Load returns the configuration of the command: for the settings of the
// bound groups, the flags parsed win over the environment, the environment
// over the file, the file over the defaults; every other setting keeps its
// default. The file is shared by all commands: a key of any group is
// accepted, an unknown key is an error. getenv is os.Getenv outside tests.
func (f *Flags) Load(getenv func(string) string) (Config, error) {
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	c := Default()
	fromFile := Default()
	file := f.flagged.ConfigFile
	if file == "" {
		file = getenv("QUARRY_CONFIG")
	}
	if file != "" {
		if err := decodeFile(file, &fromFile); err != nil {
			return c, err
		}
		c.ConfigFile = file
	}
	opts, fileOpts, flagOpts := c.options(), fromFile.options(), f.flagged.options()
	for i, o := range opts {
		if !f.binds(o.group) {
			continue
		}
		copyValue(o.ptr, fileOpts[i].ptr)
		if v := getenv(o.env); v != "" {
			if err := setValue(o.ptr, v); err != nil {
				return c, fmt.Errorf("%s: %w", o.env, err)
			}
		}
		if set[o.flag] {
			copyValue(o.ptr, flagOpts[i].ptr)
		}
	}
	return c, c.finish()
}

// decodeFile reads the TOML file into c; a key that names no setting is an
// error, so a typo does not fall back to a default unnoticed.
func decodeFile(file string, c *Config) error {
	md, err := toml.DecodeFile(file, c)
	if err != nil {
		return fmt.Errorf("read config file %q: %w", file, err)
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		// Name an unknown table once, not again for each key in it.
		if len(unknown) > 0 && strings.HasPrefix(k.String(), unknown[len(unknown)-1]+".") {
			continue
		}
		unknown = append(unknown, k.String())
	}
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("config %s: unknown key %q", file, unknown[0])
	}
	quoted := make([]string, len(unknown))
	for i, k := range unknown {
		quoted[i] = strconv.Quote(k)
	}
	return fmt.Errorf("config %s: unknown keys %s", file, strings.Join(quoted, ", "))
}

func setValue(ptr any, v string) error {
	switch p := ptr.(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("not a duration: %q", v)
		}
		*p = d
	}
	return nil
}

func copyValue(dst, src any) {
	switch p := dst.(type) {
	case *string:
		*p = *src.(*string)
	case *int:
		*p = *src.(*int)
	case *int64:
		*p = *src.(*int64)
	case *time.Duration:
		*p = *src.(*time.Duration)
	}
}

// finish validates the settings and fills in the derived ones.
func (c *Config) finish() error {
	if c.DataDir == "" {
		return errors.New("data dir must not be empty")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	c.DataDir = abs
	if c.SecretsKeyFile != "" {
		if c.SecretsKeyFile, err = filepath.Abs(c.SecretsKeyFile); err != nil {
			return fmt.Errorf("secrets key file: %w", err)
		}
	}
	if c.DatabaseURL != "" && !IsPostgresURL(c.DatabaseURL) {
		return fmt.Errorf("database url must start with postgres:// or postgresql://")
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		return fmt.Errorf("password cost %d out of range 4-31", c.PasswordCost)
	}
	if c.ExternalURL == "" {
		c.ExternalURL = ExternalURLFor(c.Listen)
	}
	c.ExternalURL = strings.TrimRight(c.ExternalURL, "/")
	if _, err := c.RepositoryStorages(); err != nil {
		return err
	}
	if c.TaskWorkers < 0 {
		return fmt.Errorf("task workers must not be negative")
	}
	if c.HousekeepingConcurrency < 0 || c.HousekeepingPruneGrace < time.Hour {
		return fmt.Errorf("housekeeping concurrency %d, prune grace %s: want no negative concurrency and a grace of at least an hour",
			c.HousekeepingConcurrency, c.HousekeepingPruneGrace)
	}
	if c.GroupExportTTL <= 0 {
		return fmt.Errorf("--group-export-ttl must be positive (got %s)", c.GroupExportTTL)
	}
	if c.StorageMoveConcurrency < 0 || c.StorageMoveWriteWait <= 0 || c.StorageMoveCleanupDelay < 0 {
		return fmt.Errorf("storage move concurrency %d, write wait %s, cleanup delay %s: want no negative concurrency or delay and a positive wait",
			c.StorageMoveConcurrency, c.StorageMoveWriteWait, c.StorageMoveCleanupDelay)
	}
	if c.DeletionDelay < 0 {
		return fmt.Errorf("deletion delay must not be negative")
	}
	if c.PageCacheBytes < 0 {
		return fmt.Errorf("page cache bytes %d: want no negative bound", c.PageCacheBytes)
	}
	if c.EntityCacheBytes < 0 {
		return fmt.Errorf("entity cache bytes %d: want no negative bound", c.EntityCacheBytes)
	}
	if c.PackObjectsCacheBytes < 0 || c.PackObjectsCacheTTL <= 0 {
		return fmt.Errorf("pack objects cache bytes %d, ttl %s: want no negative bound and a positive ttl", c.PackObjectsCacheBytes, c.PackObjectsCacheTTL)
	}
	if c.GitMaxProcesses < 1 {
		return fmt.Errorf("git max processes %d: want at least 1", c.GitMaxProcesses)
	}
	if c.GitIdleTimeout <= 0 {
		return fmt.Errorf("git idle timeout %s: want more than 0", c.GitIdleTimeout)
	}
	if c.MaxParsedBodyBytes < 1<<10 || c.MaxFileBytes < 1 {
		return fmt.Errorf("max parsed body bytes %d, max file bytes %d: want at least 1 KiB and 1", c.MaxParsedBodyBytes, c.MaxFileBytes)
	}
	if c.MaxConnections < 1 {
		return fmt.Errorf("max connections %d: want at least 1", c.MaxConnections)
	}
	if c.MemoryLimit < -1 {
		return fmt.Errorf("memory limit %d: want bytes, 0 (derived) or -1 (none)", c.MemoryLimit)
	}
	if c.IdleTrim < 0 {
		return fmt.Errorf("idle trim %s: want a duration, or 0 for never", c.IdleTrim)
	}
	if c.BodyStallTimeout <= 0 || c.BodyGrace < 0 || c.BodyMinRate < 0 {
		return fmt.Errorf("body stall timeout %s, grace %s, min rate %d: want a positive timeout, no negative grace or rate",
			c.BodyStallTimeout, c.BodyGrace, c.BodyMinRate)
	}
	if c.GeoStatusInterval <= 0 {
		return fmt.Errorf("geo status interval %s: want more than 0", c.GeoStatusInterval)
	}
	c.GeoNodeName = strings.TrimSpace(c.GeoNodeName)
	if len(c.GeoNodeName) > 255 {
		return fmt.Errorf("geo node name: want at most 255 characters")
	}
	if c.SSHExternalPort < 0 || c.SSHExternalPort > 65535 {
		return fmt.Errorf("ssh external port %d: want 1-65535 (0: the port of --ssh-listen)", c.SSHExternalPort)
	}
	if c.SSHListen != "" {
		if _, _, err := net.SplitHostPort(c.SSHListen); err != nil {
			return fmt.Errorf("ssh listen %q: %w", c.SSHListen, err)
		}
	}
	if c.PprofListen != "" {
		if err := LoopbackAddr(c.PprofListen); err != nil {
			return fmt.Errorf("pprof listen: %w", err)
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	return nil
}

// LoopbackAddr checks that addr is host:port on a loopback interface:
// "localhost" or a loopback IP (127.0.0.0/8, ::1); an empty host listens
// on every interface and is refused.
func LoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q is not a loopback address (want 127.0.0.1:port, [::1]:port or localhost:port)", addr)
}

// SSHClone is the host and port SSH clone URLs show: the external SSH
// host and port when set, else the external URL's host and the port the
// SSH server listens on (22 when it listens nowhere).
func (c Config) SSHClone() (host string, port int) {
	host, port = c.SSHExternalHost, c.SSHExternalPort
	if host == "" {
		if u, err := url.Parse(c.ExternalURL); err == nil {
			host = u.Hostname()
		}
	}
	if port == 0 {
		port = 22
		if _, p, err := net.SplitHostPort(c.SSHListen); err == nil {
			if n, err := strconv.Atoi(p); err == nil && n > 0 {
				port = n
			}
		}
	}
	return host, port
}

// ExternalURLFor derives the URL clients use from a listen address.
func ExternalURLFor(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// IsPostgresURL reports whether u selects PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// RepositoryStorages maps storage names to folders.
func (c *Config) RepositoryStorages() (map[string]string, error) {
	out := map[string]string{"default": c.RepositoriesDir()}
	for _, part := range strings.Split(c.Storages, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, dir, ok := strings.Cut(part, "=")
		if !ok || name == "" || dir == "" {
			return nil, fmt.Errorf("storage %q: want name=/path", part)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		out[name] = abs
	}
	return out, nil
}

// SQLitePath is where the embedded database lives.
func (c *Config) SQLitePath() string { return filepath.Join(c.DataDir, "quarry.db") }

// SecretsKeyPath is the key file that seals secrets at rest: the
// configured one, else <data-dir>/secrets/encryption-keys.json.
func (c *Config) SecretsKeyPath() string {
	if c.SecretsKeyFile != "" {
		return c.SecretsKeyFile
	}
	return filepath.Join(c.DataDir, "secrets", "encryption-keys.json")
}

// UploadsDir is where uploaded files (avatars, attachments) live.
func (c *Config) UploadsDir() string { return filepath.Join(c.DataDir, "uploads") }

// JobFilesDir is where CI job logs and artifacts live.
func (c *Config) JobFilesDir() string { return filepath.Join(c.DataDir, "jobs") }

// RepositoriesDir is the default repository storage.
func (c *Config) RepositoriesDir() string { return filepath.Join(c.DataDir, "repositories") }

// InitialRootTokenPath is the file that receives root's first token.
func (c *Config) InitialRootTokenPath() string { return filepath.Join(c.DataDir, "initial_root_token") }

// InitialRootPasswordPath is the file that receives root's generated
// password (a preset password is never written).
func (c *Config) InitialRootPasswordPath() string {
	return filepath.Join(c.DataDir, "initial_root_password")
}

// Getenv is os.Getenv; a variable so commands can share it.
var Getenv = os.Getenv
