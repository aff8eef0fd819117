// Package sshd is Quarry's built-in SSH server: git over SSH with the
// keys registered through the API. A client authenticates with a public
// key only, found by its SHA256 fingerprint (one indexed lookup); then
// `git-upload-pack`, `git-receive-pack` and `git-upload-archive` run
// with exactly the permissions of git over HTTP (gitaccess) and the same
// push flow (smarthttp.Handler.ServeStream); no command greets the user
// as gitlab-shell does. Connections, sessions, idle time and
// authentication attempts are bounded.
package sshd

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"quarry/internal/git"
	"quarry/internal/git/smarthttp"
	"quarry/internal/gitaccess"
)

// Keys finds who a key authenticates (the keys service, adapted):
// refused is true for a key that may not sign in. Used is told of a key
// once the client has proven it holds it.
type Keys interface {
	Authenticate(ctx context.Context, fingerprintSHA256 string) (who gitaccess.KeyHolder, refused bool, err error)
	Used(ctx context.Context, keyID int64) error
}

// Access authorizes git over SSH (gitaccess.Service).
type Access interface {
	AuthorizeSSH(ctx context.Context, who gitaccess.KeyHolder, fullPath string, push bool) (smarthttp.Grant, error)
}

// Git runs a granted git service over a stream (smarthttp.Handler).
type Git interface {
	ServeStream(ctx context.Context, svc smarthttp.Service, g smarthttp.Grant, st smarthttp.Stream) error
}

// Config bounds the server; zero values take the defaults.
type Config struct {
	// HostKeyDir keeps the host keys (ed25519 and RSA), made on first
	// start.
	HostKeyDir string
	// MaxConnections are served at once; more are closed at once.
	MaxConnections int
	// MaxSessions bounds the sessions (commands) of one connection.
	MaxSessions int
	// IdleTimeout closes a connection that sends nothing that long.
	IdleTimeout time.Duration
	// LoginGrace is how long a client has to authenticate.
	LoginGrace time.Duration
	// MaxAuthTries bounds the authentication attempts of a connection.
	MaxAuthTries int
}

func (c *Config) defaults() {
	if c.MaxConnections <= 0 {
		c.MaxConnections = 256
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 4
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.LoginGrace <= 0 {
		c.LoginGrace = 30 * time.Second
	}
	if c.MaxAuthTries <= 0 {
		c.MaxAuthTries = 6
	}
}

// Server serves git over SSH on the listeners given to Serve.
type Server struct {
	cfg     Config
	base    ssh.ServerConfig
	keys    Keys
	access  Access
	git     Git
	log     *slog.Logger
	slots   chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	lns     map[net.Listener]bool
	conns   map[net.Conn]bool
	closing bool
}

// New returns a server with the host keys in cfg.HostKeyDir (made there
// when missing).
func New(cfg Config, keys Keys, access Access, g Git, log *slog.Logger) (*Server, error) {
	cfg.defaults()
	s := &Server{cfg: cfg, keys: keys, access: access, git: g, log: log, slots: make(chan struct{}, cfg.MaxConnections),
		lns: map[net.Listener]bool{}, conns: map[net.Conn]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.base = ssh.ServerConfig{MaxAuthTries: cfg.MaxAuthTries, ServerVersion: "SSH-2.0-Quarry"}
	for _, kind := range []string{"ed25519", "rsa"} {
		signer, err := hostKey(cfg.HostKeyDir, kind)
		if err != nil {
			return nil, err
		}
		s.base.AddHostKey(signer)
	}
	return s, nil
}

// hostKey loads the host key of a kind from dir, making it on first
// start (0600, OpenSSH's format).
func hostKey(dir, kind string) (ssh.Signer, error) {
	path := filepath.Join(dir, "ssh_host_"+kind+"_key")
	if b, err := os.ReadFile(path); err == nil {
		return ssh.ParsePrivateKey(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("host key: %w", err)
	}
	var priv any
	switch kind {
	case "ed25519":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		priv = k
	default:
		k, err := rsa.GenerateKey(rand.Reader, 3072)
		if err != nil {
			return nil, err
		}
		priv = k
	}
	block, err := ssh.MarshalPrivateKey(priv, "quarry host key")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("host key folder: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

// Serve accepts connections on ln until Close (nil then) or ln fails.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns[ln] = true
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond) // a transient accept failure
				continue
			}
			return err
		}
		select {
		case s.slots <- struct{}{}:
		default:
			c.Close() // at capacity
			continue
		}
		if !s.track(c) {
			<-s.slots
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			defer s.untrack(c)
			s.serveConn(c)
		}()
	}
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = true
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// Close stops the listeners, ends every connection (their git processes
// are killed) and waits for their handlers.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// idleConn closes a connection that has been silent for the idle
// timeout: once authenticated, every read and write moves the deadline
// (before, the login grace's deadline holds).
type idleConn struct {
	net.Conn
	idle   time.Duration
	authed atomic.Bool
}

func (c *idleConn) Read(p []byte) (int, error) {
	if c.authed.Load() {
		_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if c.authed.Load() {
		_ = c.Conn.SetDeadline(time.Now().Add(c.idle))
	}
	return c.Conn.Write(p)
}

// serveConn authenticates one connection and serves its sessions.
func (s *Server) serveConn(raw net.Conn) {
	_ = raw.SetDeadline(time.Now().Add(s.cfg.LoginGrace))
	c := &idleConn{Conn: raw, idle: s.cfg.IdleTimeout}
	cfg := s.base
	holders := map[string]gitaccess.KeyHolder{}
	cfg.PublicKeyCallback = func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		fp := strings.TrimPrefix(ssh.FingerprintSHA256(key), "SHA256:")
		if _, ok := holders[fp]; !ok {
			if len(holders) >= s.cfg.MaxAuthTries {
				return nil, errors.New("too many keys")
			}
			ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
			who, refused, err := s.keys.Authenticate(ctx, fp)
			cancel()
			if err != nil {
				s.log.Error("ssh key lookup", "err", err)
				return nil, errors.New("key lookup failed")
			}
			if refused {
				return nil, errors.New("key refused")
			}
			holders[fp] = who
		}
		return &ssh.Permissions{Extensions: map[string]string{"fp": fp}}, nil
	}
	sconn, chans, reqs, err := ssh.NewServerConn(c, &cfg)
	if err != nil {
		return // failed handshake or authentication: nothing to say
	}
	defer sconn.Close()
	who, ok := holders[sconn.Permissions.Extensions["fp"]]
	if !ok {
		return
	}
	if err := s.keys.Used(s.ctx, who.KeyID); err != nil && s.ctx.Err() == nil {
		s.log.Error("ssh key use", "key_id", who.KeyID, "err", err)
	}
	// From here the connection lives while it talks.
	c.authed.Store(true)
	_ = raw.SetDeadline(time.Now().Add(s.cfg.IdleTimeout))
	go ssh.DiscardRequests(reqs)
	// The connection's commands end with it (their git processes are
	// killed), and with the server.
	ctx, cancel := context.WithCancel(s.ctx)
	sessions := make(chan struct{}, s.cfg.MaxSessions)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "unknown channel type")
			continue
		}
		select {
		case sessions <- struct{}{}:
		default:
			_ = nc.Reject(ssh.ResourceShortage, "too many sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			<-sessions
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			release := func() { once.Do(func() { <-sessions }) }
			defer release()
			s.session(ctx, ch, creqs, who, release)
		}()
	}
}

// session serves one session: env (GIT_PROTOCOL only), then exec of a
// git command or a shell (the greeting).
//
// release frees the session's place on its connection; it runs before
// the channel closes, so a client that opens its next session once it
// sees this one end (sessions one after another) is never refused for a
// place not yet given back.
func (s *Server) session(ctx context.Context, ch ssh.Channel, reqs <-chan *ssh.Request, who gitaccess.KeyHolder, release func()) {
	defer ch.Close()
	defer release()
	protocol := ""
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" && len(kv.Value) <= 256
			if ok {
				protocol = kv.Value
			}
			_ = req.Reply(ok, nil)
		case "pty-req":
			_ = req.Reply(true, nil)
		case "shell":
			_ = req.Reply(true, nil)
			fmt.Fprintf(ch, "Welcome to Quarry, %s!\r\n", greetingName(who))
			exit(ch, 0)
			return
		case "exec":
			var cmd struct{ Command string }
			if ssh.Unmarshal(req.Payload, &cmd) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			exit(ch, s.exec(ctx, ch, who, cmd.Command, protocol))
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// greetingName is how gitlab-shell's discover names the key's holder.
func greetingName(who gitaccess.KeyHolder) string {
	if who.User == nil {
		return "Anonymous"
	}
	return "@" + who.User.Username
}

func exit(ch ssh.Channel, code int) {
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
}

// exec runs one command and gives its exit code.
func (s *Server) exec(ctx context.Context, ch ssh.Channel, who gitaccess.KeyHolder, line, protocol string) int {
	if strings.TrimSpace(line) == "" {
		fmt.Fprintf(ch, "Welcome to Quarry, %s!\n", greetingName(who))
		return 0
	}
	cmd, err := ParseCommand(line)
	if err != nil {
		fmt.Fprintln(ch.Stderr(), msgDisallowed)
		return 1
	}
	g, err := s.access.AuthorizeSSH(ctx, who, cmd.Path, cmd.Service == smarthttp.ReceivePack)
	if err == nil {
		err = s.git.ServeStream(ctx, cmd.Service, g, smarthttp.Stream{In: ch, Out: ch, Protocol: protocol})
	}
	var denied *smarthttp.DeniedError
	var ge *git.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &denied):
		writeError(ch.Stderr(), denied.Message)
		return 1
	case errors.As(err, &ge) && ge.Code > 0:
		return ge.Code
	}
	if ctx.Err() == nil {
		s.log.Error("git over ssh", "path", cmd.Path, "service", string(cmd.Service), "err", err)
	}
	writeError(ch.Stderr(), "An internal server error occurred.")
	return 1
}

// writeError prints a refusal as gitlab-shell does.
func writeError(w io.Writer, msg string) {
	bar := strings.Repeat("=", 72)
	fmt.Fprintf(w, "remote: \nremote: %s\nremote: \nremote: ERROR: %s\nremote: \nremote: %s\nremote: \n", bar, msg, bar)
}
