package sshd

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"quarry/internal/gitaccess"
	"quarry/internal/leaktest"
	"quarry/internal/model"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// unknownKeys knows no key: every authentication is refused. It counts
// the lookups.
type unknownKeys struct{ lookups atomic.Int64 }

func (k *unknownKeys) Authenticate(context.Context, string) (gitaccess.KeyHolder, bool, error) {
	k.lookups.Add(1)
	return gitaccess.KeyHolder{}, true, nil
}

func (k *unknownKeys) Used(context.Context, int64) error { return nil }

// start serves cfg on a port of its own until the test ends.
func start(t *testing.T, cfg Config, keys Keys) (*Server, string) {
	t.Helper()
	cfg.HostKeyDir = filepath.Join(t.TempDir(), "ssh")
	s, err := New(cfg, keys, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// banner connects and reads the server's version line.
func banner(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "SSH-2.0-Quarry\r\n" {
		t.Fatalf("banner %q, %v", line, err)
	}
	return c
}

// closedByServer waits (bounded) for the server to end c: a read that
// ends otherwise than by the test's own deadline.
func closedByServer(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s", within)
	}
}

func TestServer_loginGrace(t *testing.T) {
	_, addr := start(t, Config{LoginGrace: 200 * time.Millisecond}, &unknownKeys{})
	c := banner(t, addr)
	closedByServer(t, c, 10*time.Second)
}

func TestServer_maxConnections(t *testing.T) {
	_, addr := start(t, Config{MaxConnections: 1, LoginGrace: time.Minute}, &unknownKeys{})
	banner(t, addr) // holds the one slot
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closedByServer(t, c, 10*time.Second)
}

func TestServer_authenticationAttempts(t *testing.T) {
	keys := &unknownKeys{}
	_, addr := start(t, Config{MaxAuthTries: 2}, keys)
	var signers []ssh.Signer
	for range 5 {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		s, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		signers = append(signers, s)
	}
	_, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signers...)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err == nil {
		t.Fatal("unknown keys signed in")
	}
	if n := keys.lookups.Load(); n > 2 {
		t.Errorf("%d keys looked up; want at most 2", n)
	}
	// No password, no keyboard-interactive: public keys only.
	_, err = ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.Password("x")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err == nil {
		t.Fatal("a password signed in")
	}
}

func TestServer_hostKeysKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ssh")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	read := func() map[string][]byte {
		out := map[string][]byte{}
		for _, kind := range []string{"ed25519", "rsa"} {
			p := filepath.Join(dir, "ssh_host_"+kind+"_key")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s mode %v", p, fi.Mode())
			}
			out[kind] = b
		}
		return out
	}
	s, err := New(Config{HostKeyDir: dir}, &unknownKeys{}, nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	first := read()
	s, err = New(Config{HostKeyDir: dir}, &unknownKeys{}, nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for kind, b := range read() {
		if string(b) != string(first[kind]) {
			t.Errorf("%s host key changed on restart", kind)
		}
	}
}

// anyKey signs in every key as one user.
type anyKey struct{}

func (anyKey) Authenticate(context.Context, string) (gitaccess.KeyHolder, bool, error) {
	return gitaccess.KeyHolder{User: &model.User{ID: 1, Username: "someone"}, KeyID: 1}, false, nil
}

func (anyKey) Used(context.Context, int64) error { return nil }

func dialAny(t *testing.T, addr string) *ssh.Client {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestServer_idleTimeout(t *testing.T) {
	_, addr := start(t, Config{IdleTimeout: 300 * time.Millisecond}, anyKey{})
	c := dialAny(t, addr)
	ended := make(chan error, 1)
	go func() { ended <- c.Wait() }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle connection stayed open")
	}
}

func TestServer_greetingAndRefusedCommands(t *testing.T) {
	_, addr := start(t, Config{MaxSessions: 1}, anyKey{})
	c := dialAny(t, addr)
	for _, tc := range []struct {
		cmd, out string
		code     int
	}{
		{"", "Welcome to Quarry, @someone!\n", 0},
		{"rm -rf /", "Disallowed command\n", 1},
		{"git-upload-pack '../x'", "Disallowed command\n", 1},
	} {
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.CombinedOutput(tc.cmd)
		code := 0
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitStatus()
		} else if err != nil {
			t.Fatalf("%q: %v", tc.cmd, err)
		}
		if string(out) != tc.out || code != tc.code {
			t.Errorf("%q: %q, exit %d; want %q, %d", tc.cmd, out, code, tc.out, tc.code)
		}
	}
	// One session at a time: a second one while the first is open is
	// refused.
	first, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := c.NewSession(); err == nil {
		t.Error("a second session at once was opened")
	}
}
