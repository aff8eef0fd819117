package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quarry/internal/storetest"
)

func TestRun_versionAndHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"version"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "quarry ") {
		t.Errorf("version output %q", out.String())
	}
	out.Reset()
	if err := run([]string{"--help"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "migrate") {
		t.Errorf("help: %v %q", err, out.String())
	}
	if err := run([]string{"bogus"}, io.Discard, io.Discard); err == nil {
		t.Error("unknown command accepted")
	}
	if err := run([]string{"serve", "--no-such-flag"}, io.Discard, io.Discard); err == nil {
		t.Error("unknown flag accepted")
	}
}

// Each command's --help lists the flags it reads and no others; serve
// reads everything.
func TestRun_commandHelp(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"migrate", "--help"}, []string{"config", "data-dir", "database-url"},
			[]string{"listen", "external-url", "task-workers", "log-level", "token-prefix", "storages", "git-max-processes", "secrets-key-file"}},
		{[]string{"admin", "create-user", "--help"},
			[]string{"username", "email", "name", "password", "admin", "config", "data-dir", "database-url",
				"password-cost", "token-prefix", "root-password", "root-token"},
			[]string{"listen", "task-workers", "log-format", "deletion-delay", "git-idle-timeout"}},
		{[]string{"admin", "create-token", "--help"},
			[]string{"user", "name", "scopes", "expires-at", "config", "data-dir", "database-url", "token-prefix", "secrets-key-file"},
			[]string{"listen", "task-workers", "log-level", "max-parsed-body-bytes"}},
		{[]string{"admin", "rotate-secrets-key", "--help"},
			[]string{"config", "data-dir", "database-url", "secrets-key-file"},
			[]string{"listen", "task-workers", "log-level", "token-prefix", "root-password"}},
		{[]string{"serve", "--help"},
			[]string{"config", "listen", "data-dir", "database-url", "external-url", "token-prefix", "password-cost",
				"root-password", "root-token", "log-level", "log-format", "storages", "default-branch",
				"git-max-processes", "git-idle-timeout", "deletion-delay", "task-workers", "task-lease", "user-cap", "secrets-key-file",
				"archive-rate-limit", "archive-cache-bytes", "shutdown-timeout", "max-parsed-body-bytes"}, nil},
	} {
		name := strings.Join(tc.args, " ")
		var help bytes.Buffer
		if err := run(tc.args, io.Discard, &help); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v; want flag.ErrHelp", name, err)
		}
		for _, f := range tc.want {
			if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `( |$)`).MatchString(help.String()) {
				t.Errorf("%s does not list --%s:\n%s", name, f, help.String())
			}
		}
		for _, f := range tc.not {
			if strings.Contains(help.String(), f) {
				t.Errorf("%s mentions %s:\n%s", name, f, help.String())
			}
		}
	}
}

// A command reads only its settings: migrate ignores a server setting the
// environment gets wrong, but not a storage setting; a typo in the file
// stops every command.
func TestRun_migrateSettings(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("QUARRY_TASK_WORKERS", "-1")
	t.Setenv("QUARRY_LOG_FORMAT", "xml")
	if err := run([]string{"migrate", "--data-dir", dir}, io.Discard, io.Discard); err != nil {
		t.Errorf("migrate with bad server settings in the environment: %v", err)
	}
	if err := run([]string{"serve", "--data-dir", dir}, io.Discard, io.Discard); err == nil {
		t.Error("serve accepted the bad settings")
	}
	t.Setenv("QUARRY_DATABASE_URL", "mysql://x")
	if err := run([]string{"migrate", "--data-dir", dir}, io.Discard, io.Discard); err == nil {
		t.Error("migrate accepted a bad database url from the environment")
	}
	t.Setenv("QUARRY_DATABASE_URL", "")
	file := filepath.Join(dir, "quarry.toml")
	if err := os.WriteFile(file, []byte("listne = \"127.0.0.1:1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"migrate", "serve"} {
		err := run([]string{cmd, "--data-dir", dir, "--config", file}, io.Discard, io.Discard)
		if want := fmt.Sprintf("config %s: unknown key %q", file, "listne"); err == nil || err.Error() != want {
			t.Errorf("%s: %v; want %s", cmd, err, want)
		}
	}
}

// On the first start of an empty database (here by an admin command), a
// generated root password is written once to the data folder for its owner
// only; an existing file is never replaced; a preset password is never
// written.
func TestRun_rootPasswordFile(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		t.Setenv("QUARRY_ROOT_PASSWORD", "")
		// freshDatabase returns a data folder and the flags selecting it
		// and an empty database.
		freshDatabase := func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			base := []string{"--data-dir", dir, "--password-cost", "4"}
			if target.DatabaseURL != "" {
				base = append(base, "--database-url", storetest.NewPostgresSchema(t))
			}
			return dir, base
		}
		createUser := func(t *testing.T, base []string, username string) string {
			t.Helper()
			args := append([]string{"admin", "create-user"}, base...)
			args = append(args, "--username", username, "--email", username+"@example.com", "--name", username)
			var log bytes.Buffer
			if err := run(args, io.Discard, &log); err != nil {
				t.Fatalf("create-user: %v\n%s", err, log.String())
			}
			return log.String()
		}

		dir, base := freshDatabase(t)
		file := filepath.Join(dir, "initial_root_password")
		log := createUser(t, base, "first")
		st, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("password file mode %v; want 0600", st.Mode().Perm())
		}
		b, _ := os.ReadFile(file)
		password := strings.TrimSpace(string(b))
		if len(password) < 16 || !strings.Contains(log, password) || !strings.Contains(log, "password_file="+file) {
			t.Errorf("password %q; log does not announce it and its file:\n%s", password, log)
		}
		if log := createUser(t, base, "second"); strings.Contains(log, password) {
			t.Errorf("second start announced the password again:\n%s", log)
		}
		if b2, _ := os.ReadFile(file); string(b2) != string(b) {
			t.Error("second start rewrote the password file")
		}

		// A file left by an earlier database stays as it is.
		dir, base = freshDatabase(t)
		file = filepath.Join(dir, "initial_root_password")
		if err := os.WriteFile(file, []byte("earlier\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		log = createUser(t, base, "third")
		if b, _ := os.ReadFile(file); string(b) != "earlier\n" {
			t.Errorf("existing password file replaced by %q", b)
		}
		if !strings.Contains(log, "not replacing an existing password file") {
			t.Errorf("log does not say the file was kept:\n%s", log)
		}

		// A preset password stays off the disk and out of the log.
		dir, base = freshDatabase(t)
		t.Setenv("QUARRY_ROOT_PASSWORD", "preset-root-password")
		log = createUser(t, base, "fourth")
		if _, err := os.Stat(filepath.Join(dir, "initial_root_password")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("preset password written: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "initial_root_token")); err != nil {
			t.Errorf("no token file: %v", err)
		}
		if strings.Contains(log, "preset-root-password") {
			t.Errorf("preset password logged:\n%s", log)
		}
	})
}

// The admin commands and migrate work on a data folder, on every database.
func TestRun_migrateAndAdmin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		dir := t.TempDir()
		base := []string{"--data-dir", dir}
		if target.DatabaseURL != "" {
			base = append(base, "--database-url", target.DatabaseURL)
		}
		var out bytes.Buffer
		if err := run(append([]string{"migrate"}, base...), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "schema version") {
			t.Errorf("migrate output %q", out.String())
		}
		out.Reset()
		args := append([]string{"admin", "create-user"}, base...)
		args = append(args, "--username", "ops", "--email", "ops@example.com", "--name", "Ops")
		if err := run(args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "created user ops") {
			t.Errorf("create-user output %q", out.String())
		}
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Error("duplicate user accepted")
		}
		out.Reset()
		args = append([]string{"admin", "create-token"}, base...)
		if err := run(append(args, "--user", "ops", "--name", "ci", "--scopes", "api,read_user"), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if tok := strings.TrimSpace(out.String()); !strings.HasPrefix(tok, "glpat-") {
			t.Errorf("token %q", tok)
		}
		if err := run(append(args, "--user", "ops", "--name", "ci", "--scopes", "everything"), io.Discard, io.Discard); err == nil {
			t.Error("unknown scope accepted")
		}
		if err := run(append(args, "--user", "nobody", "--name", "ci"), io.Discard, io.Discard); err == nil {
			t.Error("token for a missing user")
		}

		// A rotation adds a current key to the key file, which keeps the
		// old one; the data stays usable.
		keyFile := filepath.Join(dir, "secrets", "encryption-keys.json")
		before, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatalf("key file after the first start: %v", err)
		}
		out.Reset()
		if err := run(append([]string{"admin", "rotate-secrets-key"}, base...), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "secrets key rotated") {
			t.Errorf("rotate-secrets-key output %q", out.String())
		}
		// The OIDC signing key: made on first use, sealed with the
		// current secrets key; each rotation names a new kid.
		kids := map[string]bool{}
		for range 2 {
			out.Reset()
			if err := run(append([]string{"admin", "rotate-oidc-key"}, base...), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(out.String())
			if len(f) < 5 || !strings.HasPrefix(out.String(), "oidc signing key rotated: ") || kids[f[4]] {
				t.Errorf("rotate-oidc-key output %q", out.String())
			} else {
				kids[f[4]] = true
			}
		}
		var file struct {
			Current string
			Keys    []struct{ ID string }
		}
		after, err := os.ReadFile(keyFile)
		if err != nil || json.Unmarshal(after, &file) != nil || len(file.Keys) != 2 || file.Current != file.Keys[1].ID ||
			!strings.Contains(string(after), file.Keys[0].ID) || !strings.Contains(string(before), file.Keys[0].ID) {
			t.Errorf("key file after rotation:\n%s\nbefore:\n%s", after, before)
		}
		if err := run(append(args, "--user", "ops", "--name", "after rotation"), io.Discard, io.Discard); err != nil {
			t.Errorf("admin command after rotation: %v", err)
		}
	})
}

// buildBinary builds quarry once per test.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quarry")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// startBinary runs "quarry serve" in work with extra environment and
// returns once it listens.
func startBinary(t *testing.T, bin, work string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	return startBinaryOn(t, bin, work, "127.0.0.1:0", env...)
}

// startBinaryOn is startBinary listening on addr.
func startBinaryOn(t *testing.T, bin, work, addr string, env ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", addr)
	cmd.Dir = work
	cmd.Env = append(append(os.Environ(), "QUARRY_LOG_FORMAT=text", "QUARRY_PASSWORD_COST=4"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	log := &syncBuffer{}
	addrRe := regexp.MustCompile(`addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	addr = ""
	deadline := time.After(30 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server exited:\n%s", log.String())
			}
			log.WriteString(l + "\n")
			if m := addrRe.FindStringSubmatch(l); m != nil && strings.Contains(l, "listening") {
				addr = m[1]
			}
		case <-deadline:
			t.Fatalf("server did not start:\n%s", log.String())
		}
	}
	go func() {
		for l := range lines {
			log.WriteString(l + "\n")
		}
	}()
	return cmd, "http://" + addr, log
}

// stopBinary sends SIGTERM and expects a clean exit.
func stopBinary(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit after SIGTERM")
	}
}

// call sends a JSON request with a token and decodes the JSON answer.
func call(t *testing.T, method, url, token string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	req.Header.Set("PRIVATE-TOKEN", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// The built binary starts on empty defaults, writes root's token once,
// answers, and stops cleanly on SIGTERM; a second start keeps the token.
func TestBinary_firstStartAndShutdown(t *testing.T) {
	bin := buildBinary(t)
	work := t.TempDir()
	cmd, url, log := startBinary(t, bin, work)
	tokenFile := filepath.Join(work, "quarry-data", "initial_root_token")
	st, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v; want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(b))
	if !strings.Contains(log.String(), token) {
		t.Errorf("first start did not announce the token:\n%s", log.String())
	}
	if status, _ := call(t, "GET", url+"/api/v4/user", token, ""); status != 200 {
		t.Errorf("GET /user with the first token: %d", status)
	}
	passwordFile := filepath.Join(work, "quarry-data", "initial_root_password")
	if st, err := os.Stat(passwordFile); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("password file mode %v; want 0600", st.Mode().Perm())
	}
	pw, _ := os.ReadFile(passwordFile)
	if password := strings.TrimSpace(string(pw)); password == "" || !strings.Contains(log.String(), password) ||
		!strings.Contains(log.String(), passwordFile) {
		t.Errorf("first start did not announce the password %q and its file:\n%s", password, log.String())
	}
	stopBinary(t, cmd)

	cmd, _, log = startBinary(t, bin, work)
	stopBinary(t, cmd)
	if strings.Contains(log.String(), token) {
		t.Error("second start printed the token again")
	}
	b2, _ := os.ReadFile(tokenFile)
	if string(b2) != string(b) {
		t.Error("second start rewrote the token file")
	}
	if pw2, _ := os.ReadFile(passwordFile); string(pw2) != string(pw) {
		t.Error("second start rewrote the password file")
	}
}

// A server killed right after accepting a fork finishes it after restart:
// the fork never stays scheduled or started.
func TestBinary_forkSurvivesKill(t *testing.T) {
	bin := buildBinary(t)
	work := t.TempDir()
	env := []string{"QUARRY_TASK_LEASE=2s"}
	cmd, url, _ := startBinary(t, bin, work, env...)
	b, _ := os.ReadFile(filepath.Join(work, "quarry-data", "initial_root_token"))
	token := strings.TrimSpace(string(b))
	status, src := call(t, "POST", url+"/api/v4/projects", token, `{"name":"src","initialize_with_readme":true}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, src)
	}
	status, fork := call(t, "POST", url+"/api/v4/projects/"+fmt.Sprint(src["id"])+"/fork", token, `{"path":"copy","name":"copy"}`)
	if status != 201 {
		t.Fatalf("fork: %d %v", status, fork)
	}
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()

	cmd, url, _ = startBinary(t, bin, work, env...)
	defer stopBinary(t, cmd)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, p := call(t, "GET", url+"/api/v4/projects/"+fmt.Sprint(fork["id"]), token, "")
		if p["import_status"] == "finished" {
			if p["empty_repo"] != false {
				t.Error("fork finished empty")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fork stuck at %v (%v)", p["import_status"], p["import_error"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// quarry serve --with-runner runs a pipeline with nothing else installed:
// the built-in runner registers itself on first start and takes the jobs.
func TestBinary_withRunner(t *testing.T) {
	bin := buildBinary(t)
	work := t.TempDir()
	// A fixed port: the jobs clone from the external URL the listen
	// address gives.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd, url, log := startBinaryOn(t, bin, work, addr, "QUARRY_WITH_RUNNER=2")
	b, _ := os.ReadFile(filepath.Join(work, "quarry-data", "initial_root_token"))
	token := strings.TrimSpace(string(b))
	status, p := call(t, "POST", url+"/api/v4/projects", token, `{"name":"laptop","initialize_with_readme":true}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, p)
	}
	id := fmt.Sprint(p["id"])
	ci := `{"branch":"main","commit_message":"ci","actions":[{"action":"create","file_path":".gitlab-ci.yml",` +
		`"content":"stages: [a, b]\nfirst:\n  stage: a\n  script: [echo one > one.txt]\n  artifacts:\n    paths: [one.txt]\n` +
		`second:\n  stage: b\n  script: [cat one.txt]\n"}]}`
	if status, c := call(t, "POST", url+"/api/v4/projects/"+id+"/repository/commits", token, ci); status != 201 {
		t.Fatalf("commit: %d %v", status, c)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest("GET", url+"/api/v4/projects/"+id+"/pipelines", nil)
		req.Header.Set("PRIVATE-TOKEN", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list []map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list) > 0 && list[0]["status"] == "success" {
			break
		}
		if len(list) > 0 && (list[0]["status"] == "failed" || list[0]["status"] == "canceled") || time.Now().After(deadline) {
			t.Fatalf("pipelines %v\n%s", list, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := os.Stat(filepath.Join(work, "quarry-data", "builtin-runner.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("builtin-runner.json: %v %v", st, err)
	}
	stopBinary(t, cmd)
}
