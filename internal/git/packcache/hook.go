package packcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// maxStdin bounds the standard input a request is keyed by; a request with
// more (a fetch negotiating a huge number of haves) bypasses the cache.
const maxStdin = 8 << 20

// poll is how long a follower waits at the end of an entry being written
// before it looks again.
const poll = 3 * time.Millisecond

// Hook runs in place of `git pack-objects`: args are the command git would
// have run ("git", "pack-objects", its flags), stdin and stdout are
// pack-objects' own. It returns the exit code. Without the cache's
// environment (see Cache.Env) it runs pack-objects unchanged.
func Hook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "git" || args[1] != "pack-objects" {
		fmt.Fprintf(stderr, "fatal: %s: expected the git pack-objects command line\n", HookCommand)
		return 128
	}
	h := hook{args: args[1:], stdout: stdout, stderr: stderr}
	h.dir = os.Getenv(envDir)
	h.max, _ = strconv.ParseInt(os.Getenv(envMax), 10, 64)
	h.ttl, _ = time.ParseDuration(os.Getenv(envTTL))
	if h.dir == "" || h.max <= 0 || h.ttl <= 0 {
		return h.packObjects(stdin)
	}
	in, err := io.ReadAll(io.LimitReader(stdin, maxStdin+1))
	if err != nil {
		fmt.Fprintf(stderr, "fatal: read pack-objects input: %v\n", err)
		return 128
	}
	if len(in) > maxStdin {
		h.count(Counters{Fallbacks: 1})
		return h.packObjects(io.MultiReader(bytes.NewReader(in), stdin))
	}
	h.in = in
	return h.serve()
}

type hook struct {
	args           []string // pack-objects and its flags
	in             []byte   // the whole standard input
	dir            string
	max            int64
	ttl            time.Duration
	stdout, stderr io.Writer
}

// key is the entry of this request.
func (h *hook) key() string {
	s := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		s.Write(n[:])
		s.Write(b)
	}
	field([]byte("quarry pack-objects cache v1"))
	field([]byte(os.Getenv(envGit)))
	repo := os.Getenv(envRepo)
	gitDir := os.Getenv("GIT_DIR")
	if gitDir == "" {
		gitDir = "."
	}
	if abs, err := filepath.Abs(gitDir); err == nil {
		// The repository git runs in, besides the one the server named.
		repo += "\x00" + abs
	}
	field([]byte(repo))
	// The repository's configuration may change how packs are made.
	cfg, _ := os.ReadFile(filepath.Join(gitDir, "config"))
	field(cfg)
	for _, a := range h.args {
		field([]byte(a))
	}
	field(h.in)
	return hex.EncodeToString(s.Sum(nil))
}

func (h *hook) count(d Counters) { _ = addCounters(h.dir, d) }

// serve answers from the entry of the request's key, producing it when no
// one else does.
func (h *hook) serve() int {
	part, pack := entryPaths(h.dir, h.key())
	for attempt := 0; attempt < 8; attempt++ {
		if f := h.openFresh(pack); f != nil {
			defer f.Close()
			if _, err := io.Copy(h.stdout, f); err != nil {
				return 1
			}
			h.count(Counters{Hits: 1})
			return 0
		}
		f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			break
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return h.follow(f, part)
		}
		if !sameFile(f, part) {
			f.Close() // renamed or removed meanwhile
			continue
		}
		if g := h.openFresh(pack); g != nil {
			g.Close()
			f.Close()
			continue
		}
		if st, err := f.Stat(); err != nil || st.Size() > 0 {
			// Left by a producer that was killed: followers of it are told
			// it failed (a .part leaves empty unless renamed).
			_ = f.Truncate(0)
			_ = os.Remove(part)
			f.Close()
			continue
		}
		return h.produce(f, part, pack)
	}
	h.count(Counters{Fallbacks: 1})
	return h.packObjects(bytes.NewReader(h.in))
}

// openFresh opens the finished entry at pack if it is younger than the TTL.
func (h *hook) openFresh(pack string) *os.File {
	f, err := os.Open(pack)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || time.Since(st.ModTime()) >= h.ttl {
		f.Close()
		return nil
	}
	return f
}

// produce runs pack-objects, writing its output to the client and to the
// locked entry f, then publishes the entry (or removes it when
// pack-objects failed).
func (h *hook) produce(f *os.File, part, pack string) int {
	// The entry is finished for the requests following it even when this
	// request's client goes away: leave its process group (which the
	// server kills then) and survive writes to the closed output.
	_ = syscall.Setpgid(0, 0)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	cmd := exec.Command("git", h.args...)
	cmd.Stdin = bytes.NewReader(h.in)
	cmd.Stderr = h.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.abandon(f, part)
		return 128
	}
	if err := cmd.Start(); err != nil {
		h.abandon(f, part)
		fmt.Fprintf(h.stderr, "fatal: start pack-objects: %v\n", err)
		return 128
	}
	caching, clientOK := true, true
	var written int64
	buf := make([]byte, 64<<10)
	for {
		n, rerr := out.Read(buf)
		if n > 0 {
			if caching {
				if written+int64(n) > h.max {
					caching = false // larger than the whole cache
				} else if _, err := f.Write(buf[:n]); err != nil {
					caching = false
				}
				if !caching {
					h.abandon(f, part)
				}
				written += int64(n)
			}
			if clientOK {
				if _, err := h.stdout.Write(buf[:n]); err != nil {
					clientOK = false
				}
			}
		}
		if rerr != nil {
			break
		}
	}
	werr := cmd.Wait()
	if werr != nil {
		if caching {
			h.abandon(f, part)
		}
		var ee *exec.ExitError
		if errors.As(werr, &ee) && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		return 128
	}
	if caching {
		if err := os.Rename(part, pack); err != nil {
			h.abandon(f, part)
		} else {
			f.Close()
			h.count(Counters{Misses: 1})
			_ = sweep(h.dir, h.max, h.ttl, time.Now())
		}
	} else {
		h.count(Counters{Fallbacks: 1})
	}
	if !clientOK {
		return 1
	}
	return 0
}

// abandon empties and removes the entry, then lets its followers go: they
// see an empty file, which means the producer failed.
func (h *hook) abandon(f *os.File, part string) {
	_ = f.Truncate(0)
	_ = os.Remove(part)
	f.Close()
}

// follow streams the entry f another request is producing, as it grows.
func (h *hook) follow(f *os.File, part string) int {
	defer f.Close()
	buf := make([]byte, 64<<10)
	var sent int64
	drain := func() bool {
		for {
			n, err := f.ReadAt(buf, sent)
			if n > 0 {
				if _, werr := h.stdout.Write(buf[:n]); werr != nil {
					return false
				}
				sent += int64(n)
			}
			if err != nil || n == 0 {
				return true
			}
		}
	}
	for {
		if !drain() {
			return 1
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			time.Sleep(poll)
			continue
		}
		// The producer is done: what it wrote is all there is.
		if !drain() {
			return 1
		}
		st, err := f.Stat()
		failed := err != nil || st.Size() == 0 || st.Size() < sent || sameFile(f, part)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if !failed {
			h.count(Counters{Hits: 1})
			return 0
		}
		if sent == 0 {
			h.count(Counters{Fallbacks: 1})
			return h.packObjects(bytes.NewReader(h.in))
		}
		fmt.Fprintln(h.stderr, "fatal: the shared pack this request was following failed")
		return 128
	}
}

// packObjects runs pack-objects straight through.
func (h *hook) packObjects(stdin io.Reader) int {
	cmd := exec.Command("git", h.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, h.stdout, h.stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(h.stderr, "fatal: pack-objects: %v\n", err)
		return 128
	}
	return 0
}
