package gitrepo

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"quarry/internal/git"
)

// RefCommit is a ref with the commit it resolves to.
type RefCommit struct {
	Ref
	Commit Commit
	// HasCommit is false for a ref that resolves to no commit (a tag of
	// a tree or a blob).
	HasCommit bool
}

// RefSnapshot is every ref under one prefix with its commit, sorted by
// name, as one `git for-each-ref` read them. Snapshots are shared between
// callers: never modify one.
type RefSnapshot struct {
	Refs   []RefCommit
	byName map[string]int
	stamp  refsStamp // the ref files it was read at
	cached bool      // stamp is set: the snapshot is shared
	bytes  int       // what it holds, roughly, for the cache's bound

	mu sync.Mutex
	// merged memoizes "branch name is merged into commit" for the refs
	// of this snapshot (only answers read while the refs state was still
	// the snapshot's).
	merged map[git.ObjectID]map[string]bool
}

// Find returns the ref named name (without the prefix).
func (s *RefSnapshot) Find(name string) (RefCommit, bool) {
	i, ok := s.byName[name]
	if !ok {
		return RefCommit{}, false
	}
	return s.Refs[i], true
}

// refSnapshotFormat prints, per ref, one header line of NUL-separated
// fields, then the raw ref object and the raw object it peels to, whose
// sizes the header gives; git ends each record with a newline.
const refSnapshotFormat = "%(refname)%00%(objectname)%00%(objecttype)%00%(*objectname)%00%(*objecttype)%00%(raw:size)%00%(*raw:size)%0a%(raw)%(*raw)"

// RefSnapshot returns the refs under prefix ("refs/heads/" or
// "refs/tags/") with their commits: one `git for-each-ref` reads them
// all, and the answer is kept (bounded in bytes) while the repository's
// refs state is unchanged (see refsState) — a push, a ref written by any
// process, a `pack-refs` all change it.
func (r *Repo) RefSnapshot(ctx context.Context, prefix string) (*RefSnapshot, error) {
	if prefix != "refs/heads/" && prefix != "refs/tags/" {
		return nil, fmt.Errorf("ref snapshot of %q", prefix)
	}
	key := snapshotKey{r.path, prefix}
	if s := refSnapshots.get(key); s != nil && r.holds(s.stamp) {
		return s, nil
	}
	stamp, settled, ok := r.refsState(prefix)
	s, err := r.readRefSnapshot(ctx, prefix)
	if err != nil {
		return nil, err
	}
	// A state younger than refsSettle may still change within the same
	// timestamp: such snapshots serve this call only.
	if ok && settled {
		s.stamp, s.cached = stamp, true
		refSnapshots.put(key, s)
	}
	return s, nil
}

func (r *Repo) readRefSnapshot(ctx context.Context, prefix string) (*RefSnapshot, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{
		{Name: "--format", Value: refSnapshotFormat}, {Name: "--sort", Value: "refname"}}, Args: []string{prefix}}, git.Options{})
	if err != nil {
		return nil, err
	}
	s, nested, err := parseRefSnapshot(out, prefix)
	if err != nil {
		return nil, err
	}
	// A tag of a tag: peel the rest of the way (rare).
	for _, i := range nested {
		c, err := r.ReadCommit(ctx, string(s.Refs[i].Commit.ID))
		if errors.Is(err, ErrRefNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Refs[i].Commit, s.Refs[i].HasCommit = c, true
		s.Refs[i].Ref.Commit = c.ID
	}
	return s, nil
}

// parseRefSnapshot reads refSnapshotFormat's output; nested lists the
// refs whose peeled object is itself a tag (Commit.ID holds it).
func parseRefSnapshot(out []byte, prefix string) (s *RefSnapshot, nested []int, err error) {
	s = &RefSnapshot{byName: map[string]int{}, bytes: len(out)}
	for len(out) > 0 {
		head, rest, ok := bytes.Cut(out, []byte{'\n'})
		if !ok {
			return nil, nil, errors.New("for-each-ref: truncated record")
		}
		f := strings.Split(string(head), "\x00")
		if len(f) != 7 {
			return nil, nil, fmt.Errorf("for-each-ref: bad record %q", head)
		}
		size, err1 := strconv.Atoi(f[5])
		peeledSize := 0
		if f[6] != "" {
			peeledSize, err = strconv.Atoi(f[6])
		}
		if err1 != nil || err != nil || size < 0 || peeledSize < 0 || size+peeledSize+1 > len(rest) || rest[size+peeledSize] != '\n' {
			return nil, nil, fmt.Errorf("for-each-ref: bad sizes in %q", head)
		}
		raw, peeled := rest[:size], rest[size:size+peeledSize]
		out = rest[size+peeledSize+1:]

		rc := RefCommit{Ref: Ref{Name: strings.TrimPrefix(f[0], prefix), Target: git.ObjectID(f[1]), Commit: git.ObjectID(f[1])}}
		switch f[2] {
		case "commit":
			rc.Commit, _ = ParseCommit(git.ObjectID(f[1]), raw)
			rc.HasCommit = true
		case "tag":
			rc.Ref.Commit = git.ObjectID(f[3])
			head, msg, _ := bytes.Cut(raw, []byte("\n\n"))
			rc.Message = strings.TrimSpace(string(msg))
			for _, line := range bytes.Split(head, []byte{'\n'}) {
				if v, ok := bytes.CutPrefix(line, []byte("tagger ")); ok {
					rc.Tagger = parsePerson(string(v))
				}
			}
			switch f[4] {
			case "commit":
				rc.Commit, _ = ParseCommit(git.ObjectID(f[3]), peeled)
				rc.HasCommit = true
			case "tag":
				rc.Commit.ID = git.ObjectID(f[3])
				nested = append(nested, len(s.Refs))
			}
		}
		s.byName[rc.Name] = len(s.Refs)
		s.Refs = append(s.Refs, rc)
	}
	return s, nested, nil
}

// MergedInto reports which of names (branches of s) are merged into the
// commit into, with one `git for-each-ref --merged` for the names s has
// not answered yet. Answers read while the refs state is still s's are
// kept in s.
func (r *Repo) MergedInto(ctx context.Context, s *RefSnapshot, into git.ObjectID, names []string) (map[string]bool, error) {
	out := make(map[string]bool, len(names))
	var ask []string
	s.mu.Lock()
	known := s.merged[into]
	for _, n := range names {
		if v, ok := known[n]; ok {
			out[n] = v
		} else if _, ok := s.byName[n]; ok {
			ask = append(ask, n)
		}
	}
	s.mu.Unlock()
	if len(ask) == 0 || into == "" {
		return out, nil
	}
	sort.Strings(ask)
	ask = compactStrings(ask)
	patterns := make([]string, len(ask))
	for i, n := range ask {
		patterns[i] = "refs/heads/" + n
	}
	// Ref names cannot hold glob characters (git check-ref-format), so
	// each pattern names its branch (and branches below it, which
	// cannot exist beside it).
	got, err := r.refNames(ctx, "--merged", into, patterns...)
	if err != nil {
		return nil, err
	}
	merged := map[string]bool{}
	for _, g := range got {
		merged[strings.TrimPrefix(g, "refs/heads/")] = true
	}
	for _, n := range ask {
		out[n] = merged[n]
	}
	if s.cached && r.holds(s.stamp) {
		s.mu.Lock()
		if s.merged == nil {
			s.merged = map[git.ObjectID]map[string]bool{}
		}
		if s.merged[into] == nil {
			s.merged[into] = map[string]bool{}
		}
		for _, n := range ask {
			s.merged[into][n] = merged[n]
		}
		s.mu.Unlock()
	}
	return out, nil
}

func compactStrings(sorted []string) []string {
	out := sorted[:0]
	for i, v := range sorted {
		if i == 0 || v != sorted[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// refsSettle is how old the newest change of a refs state must be for a
// snapshot read at it to be kept: file times are coarse, and two writes
// within one tick may leave the same times behind.
const refsSettle = 2 * time.Second

// refsStamp describes, without starting git, what the ref files under a
// prefix look like: the identity, size and modification time of
// packed-refs and of every folder under the prefix. git writes a loose
// ref by renaming a lock file into its folder, removes one (and empty
// folders) from its folder, and rewrites packed-refs by a rename, so any
// ref written under the prefix, by any process, changes the stamp; and a
// folder created or removed changes its parent's, so checking the known
// folders again (holds) is enough.
type refsStamp struct {
	packed fileStamp
	dirs   []dirStamp
}

type fileStamp struct {
	exists      bool
	ino         uint64
	mtime, size int64
}

type dirStamp struct {
	path string // relative to the repository
	fileStamp
}

func stampOf(path string) (fileStamp, time.Time, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileStamp{}, time.Time{}, nil
	}
	if err != nil {
		return fileStamp{}, time.Time{}, err
	}
	st := fileStamp{exists: true, mtime: fi.ModTime().UnixNano(), size: fi.Size()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st, fi.ModTime(), nil
}

// refsState reads the stamp of prefix. ok is false for a repository it
// cannot describe (reftable, unreadable folders); settled is false when
// the newest change is younger than refsSettle.
func (r *Repo) refsState(prefix string) (stamp refsStamp, settled, ok bool) {
	if _, err := os.Stat(filepath.Join(r.path, "reftable")); err == nil {
		return refsStamp{}, false, false
	}
	packed, newest, err := stampOf(filepath.Join(r.path, "packed-refs"))
	if err != nil {
		return refsStamp{}, false, false
	}
	stamp.packed = packed
	var walk func(dir string) bool
	walk = func(dir string) bool {
		full := filepath.Join(r.path, dir)
		st, mt, err := stampOf(full)
		if err != nil {
			return false
		}
		stamp.dirs = append(stamp.dirs, dirStamp{dir, st})
		if mt.After(newest) {
			newest = mt
		}
		if !st.exists {
			return true
		}
		entries, err := os.ReadDir(full)
		if err != nil {
			return false
		}
		for _, e := range entries {
			if e.IsDir() && !walk(dir+"/"+e.Name()) {
				return false
			}
		}
		return true
	}
	if !walk(strings.TrimSuffix(prefix, "/")) {
		return refsStamp{}, false, false
	}
	return stamp, time.Since(newest) > refsSettle, true
}

// holds reports whether the ref files still look as stamp says: a stat
// of packed-refs and of each known folder, no listing.
func (r *Repo) holds(stamp refsStamp) bool {
	if st, _, err := stampOf(filepath.Join(r.path, "packed-refs")); err != nil || st != stamp.packed {
		return false
	}
	for _, d := range stamp.dirs {
		if st, _, err := stampOf(filepath.Join(r.path, d.path)); err != nil || st != d.fileStamp {
			return false
		}
	}
	return true
}

// snapshotKey names a snapshot: a repository's folder and a prefix.
type snapshotKey struct{ repo, prefix string }

// refSnapshots keeps recent snapshots, at most maxSnapshotBytes in all;
// one larger than maxSnapshotEntry is not kept.
var refSnapshots = &snapshotCache{max: maxSnapshotBytes, ll: list.New(), items: map[snapshotKey]*list.Element{}}

const (
	maxSnapshotBytes = 32 << 20
	maxSnapshotEntry = 8 << 20
)

// snapshotCache is a least-recently-used cache bounded by bytes.
type snapshotCache struct {
	mu    sync.Mutex
	max   int
	used  int
	ll    *list.List
	items map[snapshotKey]*list.Element
}

type snapshotEntry struct {
	key snapshotKey
	s   *RefSnapshot
}

func (c *snapshotCache) get(k snapshotKey) *RefSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil
	}
	c.ll.MoveToFront(e)
	return e.Value.(*snapshotEntry).s
}

func (c *snapshotCache) put(k snapshotKey, s *RefSnapshot) {
	if s.bytes > maxSnapshotEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.used -= e.Value.(*snapshotEntry).s.bytes
		c.ll.Remove(e)
		delete(c.items, k)
	}
	c.items[k] = c.ll.PushFront(&snapshotEntry{k, s})
	c.used += s.bytes
	for c.used > c.max {
		old := c.ll.Back()
		ent := old.Value.(*snapshotEntry)
		c.ll.Remove(old)
		delete(c.items, ent.key)
		c.used -= ent.s.bytes
	}
}

// forget drops the snapshots of the repository at path (it was removed
// or replaced).
func (c *snapshotCache) forget(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.repo == path {
			c.used -= e.Value.(*snapshotEntry).s.bytes
			c.ll.Remove(e)
			delete(c.items, k)
		}
	}
}
