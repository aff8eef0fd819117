package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
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
	addr := ""
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
