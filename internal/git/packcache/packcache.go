// Package packcache shares the answers of identical clone and fetch
// requests: CI starting fifty clones of one commit at once makes one pack,
// streamed to all fifty as it is written.
//
// An entry is a file in the cache directory; the requests, in one server
// process or several sharing the directory, coordinate through it alone
// with flock(2):
//
//   - the caller's key names everything that decides the answer (for
//     upload-pack: the repository, the state of its refs and config, the
//     request, the git version);
//   - <key>.pack is a finished entry, served while younger than the TTL;
//   - <key>.part is an entry being written: its producer holds an
//     exclusive lock on it while it writes, then renames it to <key>.pack
//     (success) or empties and removes it (failure) before letting go.
//     Requests that find it locked follow it as it grows and learn the
//     outcome once the lock is free: a follower that has sent nothing yet
//     when the producer failed produces the answer itself (uncached), one
//     that has sent part of it fails (its client sees a broken answer, as
//     when pack-objects fails mid-stream);
//   - a producer keeps writing the entry when its own client goes away;
//   - an entry larger than the byte bound is abandoned (its producer still
//     serves its own client), and after each entry and every minute
//     (Cache.Sweep) expired entries go and the oldest are evicted until
//     the total is under the bound.
package packcache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

const (
	statsFile  = "stats"
	sweepLock  = "sweep.lock"
	partSuffix = ".part"
	packSuffix = ".pack"
	// staleAge is how old an unlocked .part must be before a sweep removes
	// it (its producer was killed).
	staleAge = time.Minute
)

// Counters are what the hooks of every process sharing the directory did.
type Counters struct {
	Hits      int64 // requests served from an entry (finished or being written)
	Misses    int64 // entries produced
	Fallbacks int64 // requests that ran pack-objects themselves after a failed or abandoned producer, or bypassed the cache
	Evictions int64 // entries removed by age or by the byte bound
}

const nCounters = 4

// Cache is a folder of answers shared by identical requests.
type Cache struct {
	dir      string
	maxBytes int64
	ttl      time.Duration
	git      string // git version, part of every key
}

// New prepares the cache in dir for entries of at most maxBytes in all,
// each kept ttl after it was written. gitVersion is the output of
// `git version` (part of every key).
func New(dir string, maxBytes int64, ttl time.Duration, gitVersion string) (*Cache, error) {
	if maxBytes <= 0 || ttl <= 0 {
		return nil, errors.New("pack cache: the byte bound and the TTL must be positive")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("pack cache: %w", err)
	}
	return &Cache{dir: dir, maxBytes: maxBytes, ttl: ttl, git: strings.TrimSpace(gitVersion)}, nil
}

// Key is the key of a request made of parts (each taken whole: the
// parts "ab","c" and "a","bc" differ), under the git version.
func (c *Cache) Key(parts ...[]byte) string {
	s := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		s.Write(n[:])
		s.Write(b)
	}
	field([]byte("quarry pack cache v1"))
	field([]byte(c.git))
	for _, p := range parts {
		field(p)
	}
	return hex.EncodeToString(s.Sum(nil))
}

// Counters reads the counters of every process that used the directory.
func (c *Cache) Counters() Counters {
	v, _ := readCounters(c.dir)
	return v
}

// Sweep removes expired entries, entries left by killed producers, and
// the oldest entries while the total passes the byte bound. It does
// nothing when another sweep of the directory is running.
func (c *Cache) Sweep(now time.Time) error {
	return sweep(c.dir, c.maxBytes, c.ttl, now)
}

// entryPaths are the two names of the entry with key k.
func entryPaths(dir, k string) (part, pack string) {
	return filepath.Join(dir, k+partSuffix), filepath.Join(dir, k+packSuffix)
}

// sweep is Cache.Sweep, shared with the hook.
func sweep(dir string, maxBytes int64, ttl time.Duration, now time.Time) error {
	lf, err := os.OpenFile(filepath.Join(dir, sweepLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil
		}
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type entry struct {
		path string
		size int64
		mod  time.Time
	}
	var packs []entry
	var total int64
	var evicted int64
	for _, de := range ents {
		name := de.Name()
		info, err := de.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, packSuffix):
			if now.Sub(info.ModTime()) >= ttl {
				if os.Remove(p) == nil {
					evicted++
				}
				continue
			}
			packs = append(packs, entry{p, info.Size(), info.ModTime()})
			total += info.Size()
		case strings.HasSuffix(name, partSuffix):
			total += info.Size()
			if now.Sub(info.ModTime()) >= staleAge {
				removeStalePart(p)
			}
		}
	}
	sort.Slice(packs, func(i, j int) bool { return packs[i].mod.Before(packs[j].mod) })
	for _, e := range packs {
		if total <= maxBytes {
			break
		}
		if os.Remove(e.path) == nil {
			evicted++
		}
		total -= e.size
	}
	if evicted > 0 {
		_ = addCounters(dir, Counters{Evictions: evicted})
	}
	return nil
}

// removeStalePart removes a .part no producer holds (its producer was
// killed before it could clean up).
func removeStalePart(p string) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // being written
	}
	if sameFile(f, p) {
		// Emptied first: a request still following it learns it failed.
		_ = f.Truncate(0)
		_ = os.Remove(p)
	}
}

// sameFile reports whether the open f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	return os.SameFile(a, b)
}

// addCounters adds d to the counters file under an exclusive lock.
func addCounters(dir string, d Counters) error {
	f, err := os.OpenFile(filepath.Join(dir, statsFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	var buf [8 * nCounters]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	add := [nCounters]int64{d.Hits, d.Misses, d.Fallbacks, d.Evictions}
	for i, n := range add {
		v := int64(binary.LittleEndian.Uint64(buf[i*8:])) + n
		binary.LittleEndian.PutUint64(buf[i*8:], uint64(v))
	}
	_, err = f.WriteAt(buf[:], 0)
	return err
}

func readCounters(dir string) (Counters, error) {
	f, err := os.Open(filepath.Join(dir, statsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Counters{}, nil
	}
	if err != nil {
		return Counters{}, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return Counters{}, err
	}
	var buf [8 * nCounters]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return Counters{}, err
	}
	v := func(i int) int64 { return int64(binary.LittleEndian.Uint64(buf[i*8:])) }
	return Counters{Hits: v(0), Misses: v(1), Fallbacks: v(2), Evictions: v(3)}, nil
}
