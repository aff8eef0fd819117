package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	return loadGroups(t, AllGroups, args, env)
}

// loadGroups loads the configuration of a command binding groups.
func loadGroups(t *testing.T, groups []Group, args []string, env map[string]string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Bind(fs, groups...)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Load(func(k string) string { return env[k] })
}

// writeFile writes a configuration file and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "quarry.toml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestLoad_precedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "quarry.toml")
	if err := os.WriteFile(file, []byte("listen = \"127.0.0.1:1111\"\ntoken_prefix = \"file-\"\nlog_level = \"warn\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, []string{"--config", file, "--listen", "127.0.0.1:3333"},
		map[string]string{"QUARRY_LISTEN": "127.0.0.1:2222", "QUARRY_TOKEN_PREFIX": "env-"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:3333" {
		t.Errorf("listen = %q; want the flag's value", c.Listen)
	}
	if c.TokenPrefix != "env-" {
		t.Errorf("token prefix = %q; want the environment's value", c.TokenPrefix)
	}
	if c.LogLevel != "warn" {
		t.Errorf("log level = %q; want the file's value", c.LogLevel)
	}
	if c.ExternalURL != "http://127.0.0.1:3333" {
		t.Errorf("external url = %q", c.ExternalURL)
	}
}

func TestLoad_defaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.ExternalURL != "http://127.0.0.1:8080" || c.TokenPrefix != "glpat-" {
		t.Errorf("defaults = %+v", c)
	}
	if !filepath.IsAbs(c.DataDir) || filepath.Base(c.DataDir) != "quarry-data" {
		t.Errorf("data dir = %q", c.DataDir)
	}
	if c.DeletionDelay != 0 {
		t.Errorf("deletion delay = %s; want 0 (delayed_project_deletion: false)", c.DeletionDelay)
	}
	if c.GitMaxProcesses != 128 || c.GitIdleTimeout != time.Minute {
		t.Errorf("git max processes %d, idle timeout %s; want 128, 1m", c.GitMaxProcesses, c.GitIdleTimeout)
	}
}

// The warm git process settings come from the file, the environment and
// the flags, in the usual order.
func TestLoad_gitProcesses(t *testing.T) {
	file := writeFile(t, "git_max_processes = 16\ngit_idle_timeout = \"30s\"\n")
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		procs int
		idle  time.Duration
	}{
		{"file", nil, nil, 16, 30 * time.Second},
		{"env", nil, map[string]string{"QUARRY_GIT_MAX_PROCESSES": "8", "QUARRY_GIT_IDLE_TIMEOUT": "10s"}, 8, 10 * time.Second},
		{"flag", []string{"--git-max-processes", "4", "--git-idle-timeout", "5s"},
			map[string]string{"QUARRY_GIT_MAX_PROCESSES": "8", "QUARRY_GIT_IDLE_TIMEOUT": "10s"}, 4, 5 * time.Second},
		{"mixed", []string{"--git-idle-timeout", "5s"}, map[string]string{"QUARRY_GIT_MAX_PROCESSES": "8"}, 8, 5 * time.Second},
	} {
		c, err := load(t, append([]string{"--config", file}, tc.args...), tc.env)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.GitMaxProcesses != tc.procs || c.GitIdleTimeout != tc.idle {
			t.Errorf("%s: got %d, %s; want %d, %s", tc.name, c.GitMaxProcesses, c.GitIdleTimeout, tc.procs, tc.idle)
		}
	}
}

func TestLoad_bad(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"database":   {"QUARRY_DATABASE_URL": "mysql://x"},
		"cost":       {"QUARRY_PASSWORD_COST": "99"},
		"cost-type":  {"QUARRY_PASSWORD_COST": "x"},
		"log-format": {"QUARRY_LOG_FORMAT": "xml"},
		"file":       {"QUARRY_CONFIG": "/nonexistent/quarry.toml"},
		"git-procs":  {"QUARRY_GIT_MAX_PROCESSES": "0"},
		"git-type":   {"QUARRY_GIT_MAX_PROCESSES": "many"},
		"git-idle":   {"QUARRY_GIT_IDLE_TIMEOUT": "0s"},
		"git-idle-":  {"QUARRY_GIT_IDLE_TIMEOUT": "-1s"},
		"deletion":   {"QUARRY_DELETION_DELAY": "-1h"},
		"geo-push":   {"QUARRY_GEO_STATUS_INTERVAL": "0s"},
		"geo-name":   {"QUARRY_GEO_NODE_NAME": strings.Repeat("n", 256)},
	} {
		if _, err := load(t, nil, env); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A key of the file that names no setting is an error naming the key and
// the file, not a silent fallback to the default.
func TestLoad_unknownKey(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"top", "listne = \"127.0.0.1:1\"\n", `unknown key "listne"`},
		{"table", "listen = \"127.0.0.1:1\"\n[server]\nlisten = \"127.0.0.1:2\"\nworkers = 3\n", `unknown key "server"`},
		{"dotted", "git.max_processes = 3\n", `unknown key "git.max_processes"`},
		{"several", "listne = \"x\"\ndata_dri = \"y\"\n", `unknown keys "listne", "data_dri"`},
		{"no-flag-only", "config = \"other.toml\"\n", `unknown key "config"`},
	} {
		file := writeFile(t, tc.text)
		_, err := load(t, []string{"--config", file}, nil)
		if want := "config " + file + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("%s: error %v; want %s", tc.name, err, want)
		}
	}
	// Every command reads the same file: a key of a group the command does
	// not bind is known all the same.
	file := writeFile(t, "listen = \"127.0.0.1:1\"\ntask_workers = 9\n")
	if _, err := loadGroups(t, []Group{Storage}, []string{"--config", file}, nil); err != nil {
		t.Errorf("server keys in a storage-only command: %v", err)
	}
}

// A command binding some groups gets flags for those only; the other
// settings keep their defaults whatever the environment and file say.
func TestBind_groups(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Bind(fs, Storage)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if want := []string{"config", "data-dir", "database-url"}; !slices.Equal(names, want) {
		t.Errorf("storage flags = %v; want %v", names, want)
	}

	dir := t.TempDir()
	file := writeFile(t, "listen = \"127.0.0.1:1\"\nlog_format = \"xml\"\ndata_dir = \"/from/file\"\n")
	c, err := loadGroups(t, []Group{Storage}, []string{"--config", file},
		map[string]string{"QUARRY_TASK_WORKERS": "-1", "QUARRY_DATA_DIR": dir})
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != dir {
		t.Errorf("data dir = %q; want the environment's %q", c.DataDir, dir)
	}
	if c.Listen != "127.0.0.1:8080" || c.LogFormat != "text" || c.TaskWorkers != 2 {
		t.Errorf("unbound settings = %q, %q, %d; want the defaults", c.Listen, c.LogFormat, c.TaskWorkers)
	}
	if _, err := loadGroups(t, []Group{Storage, Log}, []string{"--config", file}, nil); err == nil {
		t.Error("bad log format accepted by a command that logs")
	}
}

// Every key of the file has a flag and an environment variable named
// after it (the command line's contract), and belongs to a group.
func TestOptions_everyKey(t *testing.T) {
	var c Config
	byPtr := map[any]option{}
	for _, o := range c.options() {
		byPtr[o.ptr] = o
	}
	v := reflect.ValueOf(&c).Elem()
	for i := 0; i < v.NumField(); i++ {
		key := v.Type().Field(i).Tag.Get("toml")
		if key == "-" {
			continue
		}
		o, ok := byPtr[v.Field(i).Addr().Interface()]
		if !ok {
			t.Errorf("key %q has no option", key)
			continue
		}
		if o.flag != strings.ReplaceAll(key, "_", "-") || o.env != "QUARRY_"+strings.ToUpper(key) {
			t.Errorf("key %q: flag %q, env %q", key, o.flag, o.env)
		}
		if !slices.Contains(AllGroups, o.group) {
			t.Errorf("key %q: group %q", key, o.group)
		}
	}
}

func TestExternalURLFor(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		":9000":          "http://localhost:9000",
		"0.0.0.0:80":     "http://localhost:80",
	} {
		if got := ExternalURLFor(in); got != want {
			t.Errorf("ExternalURLFor(%q) = %q; want %q", in, got, want)
		}
	}
}

// The secrets key file lies in the data folder unless configured; a
// configured path is made absolute, and commands that do not bind the
// setting keep the default.
func TestSecretsKeyPath(t *testing.T) {
	dir := t.TempDir()
	c, err := load(t, []string{"--data-dir", dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "secrets", "encryption-keys.json"); c.SecretsKeyPath() != want {
		t.Errorf("default key file %q; want %q", c.SecretsKeyPath(), want)
	}
	c, err = load(t, []string{"--data-dir", dir}, map[string]string{"QUARRY_SECRETS_KEY_FILE": "shared/keys.json"})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.SecretsKeyPath(); !filepath.IsAbs(p) || !strings.HasSuffix(p, filepath.Join("shared", "keys.json")) {
		t.Errorf("configured key file %q; want it absolute", p)
	}
	c, err = loadGroups(t, []Group{Storage}, []string{"--data-dir", dir}, map[string]string{"QUARRY_SECRETS_KEY_FILE": "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SecretsKeyFile != "" {
		t.Errorf("a command without the secrets group read %q", c.SecretsKeyFile)
	}
}

// The geo node name comes from the flag, the environment or the file,
// trimmed; without one the process is the primary, pushing nothing.
func TestLoad_geo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "quarry.toml")
	if err := os.WriteFile(file, []byte("geo_node_name = \"from-file\"\ngeo_status_interval = \"30s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		want     string
		interval time.Duration
	}{
		{"default", nil, nil, "", 10 * time.Second},
		{"file", []string{"--config", file}, nil, "from-file", 30 * time.Second},
		{"env", []string{"--config", file}, map[string]string{"QUARRY_GEO_NODE_NAME": " eu-copy "}, "eu-copy", 30 * time.Second},
		{"flag", []string{"--config", file, "--geo-node-name", "us", "--geo-status-interval", "1s"},
			map[string]string{"QUARRY_GEO_NODE_NAME": "eu"}, "us", time.Second},
	} {
		c, err := load(t, tc.args, tc.env)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.GeoNodeName != tc.want || c.GeoStatusInterval != tc.interval {
			t.Errorf("%s: %q, %s; want %q, %s", tc.name, c.GeoNodeName, c.GeoStatusInterval, tc.want, tc.interval)
		}
	}
}

// --pprof-listen takes loopback addresses only, from a flag, the
// environment or the file.
func TestPprofListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"", true},
		{"127.0.0.1:6060", true},
		{"127.8.9.10:0", true},
		{"[::1]:6060", true},
		{"localhost:6060", true},
		{":6060", false},
		{"0.0.0.0:6060", false},
		{"[::]:6060", false},
		{"10.0.0.1:6060", false},
		{"example.com:6060", false},
		{"127.0.0.1", false},
	} {
		c, err := load(t, []string{"--pprof-listen", tc.addr}, nil)
		if tc.ok && (err != nil || c.PprofListen != tc.addr) {
			t.Errorf("--pprof-listen %q: %v, %q; want it taken", tc.addr, err, c.PprofListen)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "pprof listen")) {
			t.Errorf("--pprof-listen %q: error %v; want a pprof listen error", tc.addr, err)
		}
	}
	if _, err := load(t, nil, map[string]string{"QUARRY_PPROF_LISTEN": "0.0.0.0:1"}); err == nil {
		t.Error("QUARRY_PPROF_LISTEN=0.0.0.0:1 accepted")
	}
	file := writeFile(t, "pprof_listen = \"127.0.0.1:1\"\n")
	if c, err := load(t, []string{"--config", file}, nil); err != nil || c.PprofListen != "127.0.0.1:1" {
		t.Errorf("pprof_listen in the file: %v, %q", err, c.PprofListen)
	}
}
