package packcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// poll is how long a follower waits at the end of an entry being written
// before it looks again.
const poll = 2 * time.Millisecond

// ErrBroken is the error of a follower whose producer failed after the
// follower had sent part of the answer.
var ErrBroken = errors.New("pack cache: the shared answer being followed failed")

// Serve answers the request with the given key into client: from the
// finished entry, by following the entry another request is producing,
// or by producing it with produce (writing to the entry and the client at
// once); an error of produce abandons the entry. An answer produce says
// not to keep (correct, but not to be reused) reaches the requests that
// followed it whole; the next request produces again. The producer goes
// on when writing to client fails (its client went away), so produce's
// context should not end with the client's.
// Serve returns produce's error, ErrBroken, or the client's write error.
func (c *Cache) Serve(ctx context.Context, key string, client io.Writer, produce func(w io.Writer) (keep bool, err error)) error {
	part, pack := entryPaths(c.dir, key)
	for attempt := 0; attempt < 8; attempt++ {
		if f := c.openFresh(pack); f != nil {
			_, err := io.Copy(client, f)
			f.Close()
			if err == nil {
				c.count(Counters{Hits: 1})
			}
			return err
		}
		f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			break
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return c.follow(ctx, f, part, client, produce)
		}
		if !sameFile(f, part) {
			f.Close() // renamed or removed meanwhile
			continue
		}
		if g := c.openFresh(pack); g != nil {
			g.Close()
			f.Close()
			continue
		}
		if st, err := f.Stat(); err != nil || st.Size() > 0 {
			// Left by a producer that was killed: its followers learn that
			// it failed (a .part goes empty unless it is renamed).
			abandon(f, part)
			continue
		}
		return c.produce(f, part, pack, client, produce)
	}
	c.count(Counters{Fallbacks: 1})
	return uncached(produce(client))
}

// uncached is the error of a producer answering one client alone.
func uncached(_ bool, err error) error { return err }

func (c *Cache) count(d Counters) { _ = addCounters(c.dir, d) }

// openFresh opens the finished entry at pack if it is younger than the TTL.
func (c *Cache) openFresh(pack string) *os.File {
	f, err := os.Open(pack)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || time.Since(st.ModTime()) >= c.ttl {
		f.Close()
		return nil
	}
	return f
}

// tee writes the answer to the locked entry and to the client. Past the
// byte bound, or on a write error, it abandons the entry; after the
// client's first write error it writes to the entry alone.
type tee struct {
	f            *os.File
	part         string
	max, written int64
	caching      bool
	client       io.Writer
	clientErr    error
}

func (t *tee) Write(p []byte) (int, error) {
	if t.caching {
		if t.written+int64(len(p)) > t.max {
			t.caching = false
		} else if _, err := t.f.Write(p); err != nil {
			t.caching = false
		}
		if !t.caching {
			abandon(t.f, t.part)
		}
		t.written += int64(len(p))
	}
	if t.clientErr == nil {
		_, t.clientErr = t.client.Write(p)
	}
	if !t.caching && t.clientErr != nil {
		return 0, t.clientErr // no one reads on
	}
	return len(p), nil
}

// produce makes the entry f (locked) with produce, then publishes it.
func (c *Cache) produce(f *os.File, part, pack string, client io.Writer, produce func(w io.Writer) (keep bool, err error)) error {
	t := &tee{f: f, part: part, max: c.maxBytes, caching: true, client: client}
	keep, err := produce(t)
	if err == nil && !keep && t.caching {
		// The followers have it all: published, then removed at once.
		if os.Rename(part, pack) == nil {
			_ = os.Remove(pack)
		}
		f.Close()
		return t.clientErr
	}
	if err != nil {
		if t.caching {
			abandon(f, part)
		}
		return err
	}
	if !t.caching {
		c.count(Counters{Fallbacks: 1})
		return t.clientErr
	}
	if err := os.Rename(part, pack); err != nil {
		abandon(f, part)
		return t.clientErr
	}
	f.Close()
	c.count(Counters{Misses: 1})
	_ = c.Sweep(time.Now())
	return t.clientErr
}

// abandon empties and removes the entry, then lets its followers go: they
// find an empty file, which means the producer failed.
func abandon(f *os.File, part string) {
	_ = f.Truncate(0)
	_ = os.Remove(part)
	f.Close()
}

// follow streams the entry f another request is producing, as it grows.
func (c *Cache) follow(ctx context.Context, f *os.File, part string, client io.Writer, produce func(w io.Writer) (keep bool, err error)) error {
	defer f.Close()
	buf := make([]byte, 64<<10)
	var sent int64
	drain := func() error {
		for {
			n, err := f.ReadAt(buf, sent)
			if n > 0 {
				if _, werr := client.Write(buf[:n]); werr != nil {
					return werr
				}
				sent += int64(n)
			}
			if err != nil || n == 0 {
				return nil
			}
		}
	}
	for {
		if err := drain(); err != nil {
			return err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(poll):
			}
			continue
		}
		// The producer is done: what it wrote is all there is.
		if err := drain(); err != nil {
			return err
		}
		st, err := f.Stat()
		failed := err != nil || st.Size() == 0 || st.Size() < sent || sameFile(f, part)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		switch {
		case !failed:
			c.count(Counters{Hits: 1})
			return nil
		case sent == 0:
			c.count(Counters{Fallbacks: 1})
			return uncached(produce(client))
		}
		return ErrBroken
	}
}

// State is RefsState, for the cache's users.
func (c *Cache) State(repoDir string) ([]byte, error) { return RefsState(repoDir) }

// RefsState is what decides which objects a repository serves: its HEAD
// and config (read), and the identity of its packed-refs and loose ref
// files (path, inode, size, modification time: git rewrites a ref file
// through a new file renamed in place, so a moved ref is a new inode).
// Two equal states serve the same objects; a request keyed by it is never
// answered after a ref moved (a state may also change with no ref moved,
// costing a miss).
func RefsState(repoDir string) ([]byte, error) {
	var b bytes.Buffer
	for _, name := range []string{"HEAD", "config"} {
		data, err := os.ReadFile(filepath.Join(repoDir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		fmt.Fprintf(&b, "%s\x00%d\x00", name, len(data))
		b.Write(data)
	}
	stamp := func(p string, info fs.FileInfo) {
		var ino uint64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		num := make([]byte, 0, 64)
		num = strconv.AppendUint(append(num, 0), ino, 10)
		num = strconv.AppendInt(append(num, ' '), info.Size(), 10)
		num = strconv.AppendInt(append(num, ' '), info.ModTime().UnixNano(), 10)
		b.WriteString(p)
		b.Write(append(num, 0))
	}
	if info, err := os.Stat(filepath.Join(repoDir, "packed-refs")); err == nil {
		stamp("packed-refs", info)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	err := filepath.WalkDir(filepath.Join(repoDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed meanwhile (a ref packed or deleted)
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		stamp(p, info)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
