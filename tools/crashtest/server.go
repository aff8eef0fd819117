package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver the server uses
)

const (
	// buildTimeout bounds the build of the server.
	buildTimeout = 15 * time.Minute
	// startTimeout bounds a start: from exec to /-/readiness answering 200.
	startTimeout = 90 * time.Second
	// stopTimeout bounds a graceful stop before the process is killed.
	stopTimeout = 45 * time.Second
	// killTimeout bounds the wait for a killed process to be gone.
	killTimeout = 10 * time.Second
)

// serverFlags are the settings the tool runs the server with beyond its
// address and storage. The built-in runner takes two jobs at once. The
// timers of crash recovery are shortened so a round settles in seconds,
// not hours: a task whose worker died is taken again once its lease
// (10s, renewed every third of it) has run out, and a job whose runner
// died with the server is failed once it has been silent for 10s (a
// runner reports every 3s while a job runs), checked every 2s. The rest
// keeps its defaults.
var serverFlags = []string{"--with-runner", "2", "--task-lease", "10s", "--runner-silence", "10s",
	"--stuck-jobs-interval", "2s", "--password-cost", "4", "--archive-rate-limit", "0"}

// moduleRoot returns the folder of the go.mod of the module the tool runs
// in (Quarry's).
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside a Go module: run crashtest from Quarry's checkout")
	}
	b, err := os.ReadFile(mod)
	if err != nil {
		return "", err
	}
	if !bytes.HasPrefix(b, []byte("module quarry\n")) {
		return "", fmt.Errorf("%s is not Quarry's module", mod)
	}
	return filepath.Dir(mod), nil
}

// build compiles the server of the module at root into bin.
func build(ctx context.Context, root, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/quarry")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/quarry: %w\n%s", err, out)
	}
	return nil
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// server is the Quarry process under test, started again and again on
// the same data folder, database and address.
type server struct {
	bin, dataDir, databaseURL, addr string
	logPath                         string
	cmd                             *exec.Cmd
	exited                          chan struct{} // closed when cmd has been waited for
	starts                          int
}

// url is the server's base URL.
func (s *server) url() string { return "http://" + s.addr }

// start runs the server and waits until /-/readiness answers 200, at
// most startTimeout; a server that exits or is not ready by then is an
// error (and is killed).
func (s *server) start(ctx context.Context) error {
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	s.starts++
	fmt.Fprintf(logf, "\n==== crashtest: start %d at %s\n", s.starts, time.Now().Format(time.RFC3339Nano))
	args := append([]string{"serve", "--listen", s.addr, "--data-dir", s.dataDir}, serverFlags...)
	if s.databaseURL != "" {
		args = append(args, "--database-url", s.databaseURL)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited

	probe := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			return fmt.Errorf("server exited while starting (%s); its log is %s:\n%s", cmd.ProcessState, s.logPath, tail(s.logPath, 15))
		case <-ctx.Done():
			s.kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := probe.Get(s.url() + "/-/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("server not ready after %s; its log is %s:\n%s", startTimeout, s.logPath, tail(s.logPath, 15))
		}
	}
}

// pid is the running server's process id.
func (s *server) pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// kill ends the server with SIGKILL, as a crash would: only the server
// process — the git processes it started live on until they notice.
func (s *server) kill() error {
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.exited:
		s.cmd = nil
		return nil
	case <-time.After(killTimeout):
		return fmt.Errorf("server %d still there %s after SIGKILL", s.cmd.Process.Pid, killTimeout)
	}
}

// stop ends the server gracefully (SIGTERM), killing it after
// stopTimeout.
func (s *server) stop() error {
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		s.cmd = nil
		return nil
	case <-time.After(stopTimeout):
		if err := s.kill(); err != nil {
			return err
		}
		return fmt.Errorf("server did not stop within %s of SIGTERM; killed", stopTimeout)
	}
}

// serverEnv is the tool's environment without QUARRY_ settings: the
// server takes its settings from the flags the tool passes, never from
// the caller's environment (a QUARRY_DATABASE_URL there would send a
// SQLite round to PostgreSQL).
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUARRY_") {
			env = append(env, kv)
		}
	}
	return env
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// randomHex returns n random bytes in hexadecimal.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// pgTimeout bounds each statement the tool runs on PostgreSQL.
const pgTimeout = 30 * time.Second

// newSchema creates a fresh schema on the PostgreSQL server at base and
// returns a URL that makes it the search path, and a drop that removes
// it with everything in it. The server migrates it on first start, as
// it would an empty database.
func newSchema(ctx context.Context, base string) (schemaURL string, drop func() error, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("--database-url: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", nil, errors.New("--database-url must start with postgres:// or postgresql://")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	schema := "crashtest_" + randomHex(6)
	cctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	if _, err := db.ExecContext(cctx, "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("postgres: create schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop = func() error {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			return fmt.Errorf("postgres: drop schema %s: %w", schema, err)
		}
		return nil
	}
	return u.String(), drop, nil
}
