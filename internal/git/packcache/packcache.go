// Package packcache shares the packs `git upload-pack` builds between
// identical requests: CI starting fifty clones of one commit at once makes
// one pack, streamed to all fifty as it is written.
//
// git runs Hook instead of `git pack-objects` (uploadpack.packObjectsHook,
// set by the server in the command-line configuration of the upload-pack
// requests it serves, see Cache.Env). The hook is a separate process for
// each request; the processes coordinate through the cache directory
// alone, with flock(2), so nothing needs the server and several server
// processes may share one directory:
//
//   - the key is a SHA-256 of what decides pack-objects' output: the
//     repository, its config file, the git version, pack-objects'
//     arguments and its whole standard input (the wants, haves and shallow
//     lines upload-pack computed after checking the wants are reachable);
//   - <key>.pack is a finished entry, served while younger than the TTL;
//   - <key>.part is an entry being written: its producer holds an
//     exclusive lock on it while it writes, then renames it to <key>.pack
//     (success) or removes it (failure) before letting go. Requests that
//     find it locked follow it as it grows and learn the outcome once the
//     lock is free; a follower that has sent nothing yet when the producer
//     failed runs pack-objects itself, one that has sent part of the pack
//     fails (its client sees an error, as when pack-objects fails);
//   - a producer whose client goes away keeps writing the entry for the
//     others (it leaves the request's process group and ignores SIGPIPE);
//   - an entry larger than the byte bound is abandoned (its producer still
//     serves its own client), and after each entry and every minute
//     (Cache.Sweep) expired entries go and the oldest are evicted until
//     the total is under the bound.
package packcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HookCommand is the first argument that makes the Quarry binary (and the
// test binaries that dispatch it) run Hook.
const HookCommand = "pack-objects-hook"

// Environment variables the server gives upload-pack, read by the hook.
const (
	envDir     = "QUARRY_PACKCACHE_DIR"
	envMax     = "QUARRY_PACKCACHE_MAX_BYTES"
	envTTL     = "QUARRY_PACKCACHE_TTL"
	envGit     = "QUARRY_PACKCACHE_GIT_VERSION"
	envRepo    = "QUARRY_PACKCACHE_REPO"
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

// Cache is the server's side of the cache: the configuration upload-pack
// gets, the sweeping and the counters.
type Cache struct {
	dir      string
	maxBytes int64
	ttl      time.Duration
	hook     string // absolute path of the binary that dispatches HookCommand
	git      string // git version
}

// New prepares the cache in dir for entries of at most maxBytes in all,
// each kept ttl after it was written. hook is the executable that runs
// Hook when its first argument is HookCommand; gitVersion is the output of
// `git version` (part of every key).
func New(dir string, maxBytes int64, ttl time.Duration, hook, gitVersion string) (*Cache, error) {
	if maxBytes <= 0 || ttl <= 0 {
		return nil, errors.New("pack cache: the byte bound and the TTL must be positive")
	}
	if !filepath.IsAbs(hook) {
		return nil, fmt.Errorf("pack cache: hook %q is not an absolute path", hook)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("pack cache: %w", err)
	}
	return &Cache{dir: dir, maxBytes: maxBytes, ttl: ttl, hook: hook, git: strings.TrimSpace(gitVersion)}, nil
}

// Config is the git configuration (key, value) that makes upload-pack run
// the hook; it must be given as command-line configuration
// (GIT_CONFIG_COUNT), which git trusts for this key.
func (c *Cache) Config() (key, value string) {
	return "uploadpack.packObjectsHook", shellQuote(c.hook) + " " + HookCommand
}

// Env is the environment the hook reads, for the repository at repoDir.
func (c *Cache) Env(repoDir string) []string {
	return []string{
		envDir + "=" + c.dir,
		envMax + "=" + strconv.FormatInt(c.maxBytes, 10),
		envTTL + "=" + c.ttl.String(),
		envGit + "=" + c.git,
		envRepo + "=" + repoDir,
	}
}

// Counters reads the counters of every hook that used the directory.
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

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // being written
	}
	if sameFile(f, p) {
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
