package repofiles

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// archiveCache keeps built archives on disk by what makes them (the
// repository, commit, format, top folder and path): the same archive is
// built once and then served from a file. The cache drops its least
// recently used files when it grows past max bytes.
type archiveCache struct {
	dir string
	max int64
	mu  sync.Mutex // serializes eviction
}

func newArchiveCache(dir string, max int64) *archiveCache {
	if dir == "" || max <= 0 {
		return nil
	}
	// Pieces left by a crash mid-build are never completed.
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(tmp) > 0 {
		for _, f := range tmp {
			os.Remove(f)
		}
	}
	return &archiveCache{dir: dir, max: max}
}

func (c *archiveCache) path(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return filepath.Join(c.dir, hex.EncodeToString(h[:]))
}

// open returns the cached archive at key, if any.
func (c *archiveCache) open(key string) (*os.File, int64, bool) {
	f, err := os.Open(key)
	if err != nil {
		return nil, 0, false
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, false
	}
	now := time.Now()
	_ = os.Chtimes(key, now, now) // recently used
	return f, fi.Size(), true
}

// fill wraps a building archive: what the client reads is also written to
// a temporary file, which becomes the cached archive when the build ends
// well and is dropped otherwise.
func (c *archiveCache) fill(key string, src io.ReadCloser) io.ReadCloser {
	if err := os.MkdirAll(c.dir, 0o750); err != nil {
		return src
	}
	tmp, err := os.CreateTemp(c.dir, filepath.Base(key)+".tmp-*")
	if err != nil {
		return src
	}
	return &filling{src: src, tmp: tmp, key: key, cache: c}
}

type filling struct {
	src   io.ReadCloser
	tmp   *os.File
	key   string
	cache *archiveCache
	ok    bool // the source reached its end without error
	werr  error
}

func (f *filling) Read(p []byte) (int, error) {
	n, err := f.src.Read(p)
	if n > 0 && f.werr == nil {
		_, f.werr = f.tmp.Write(p[:n])
	}
	if err == io.EOF {
		f.ok = true
	}
	return n, err
}

func (f *filling) Close() error {
	err := f.src.Close()
	name := f.tmp.Name()
	cerr := f.tmp.Close()
	if f.ok && err == nil && f.werr == nil && cerr == nil {
		if os.Rename(name, f.key) == nil {
			f.cache.evict()
			return nil
		}
	}
	os.Remove(name)
	return err
}

// evict removes the least recently used archives while the cache is over
// its size.
func (c *archiveCache) evict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{e.Name(), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for _, f := range files {
		if total <= c.max {
			break
		}
		if os.Remove(filepath.Join(c.dir, f.name)) == nil {
			total -= f.size
		}
	}
}
