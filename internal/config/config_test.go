package config

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

func load(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c := Default()
	c.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	err := Load(fs, &c, func(k string) string { return env[k] })
	return c, err
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
}

func TestLoad_bad(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"database":   {"QUARRY_DATABASE_URL": "mysql://x"},
		"cost":       {"QUARRY_PASSWORD_COST": "99"},
		"cost-type":  {"QUARRY_PASSWORD_COST": "x"},
		"log-format": {"QUARRY_LOG_FORMAT": "xml"},
		"file":       {"QUARRY_CONFIG": "/nonexistent/quarry.toml"},
	} {
		if _, err := load(t, nil, env); err == nil {
			t.Errorf("%s: no error", name)
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
