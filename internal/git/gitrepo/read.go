package gitrepo

import (
	"bytes"
	"container/list"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Errors of reads, for callers to turn into 404s.
var (
	ErrRefNotFound  = errors.New("revision not found")
	ErrPathNotFound = errors.New("path not found")
)

// withCat runs fn with a warm cat-file process of the repository.
func (r *Repo) withCat(ctx context.Context, fn func(p *catfile.Process) error) error {
	p, err := r.pool.Get(ctx, r.path)
	if err != nil {
		return err
	}
	defer r.pool.Release(p)
	return fn(p)
}

// CommitID resolves a revision (branch, tag, sha) to its commit.
func (r *Repo) CommitID(ctx context.Context, rev string) (git.ObjectID, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", ErrRefNotFound
	}
	var id git.ObjectID
	err := r.withCat(ctx, func(p *catfile.Process) error {
		info, err := p.Info(rev + "^{commit}")
		if errors.Is(err, catfile.ErrMissing) {
			return ErrRefNotFound
		}
		id = info.OID
		return err
	})
	return id, err
}

// ObjectAt describes the object at path in a commit.
func (r *Repo) ObjectAt(ctx context.Context, commit git.ObjectID, path string) (catfile.ObjectInfo, error) {
	key := pathAt{r.path, string(commit), path}
	if info, ok := objectsAt.get(key); ok {
		return info, nil
	}
	var info catfile.ObjectInfo
	err := r.withCat(ctx, func(p *catfile.Process) error {
		var err error
		info, err = p.Info(string(commit) + ":" + path)
		if errors.Is(err, catfile.ErrMissing) {
			return ErrPathNotFound
		}
		return err
	})
	if err == nil {
		objectsAt.put(key, info)
	}
	return info, err
}

// objectsAt caches what a path names at a commit: it never changes (and
// spares git resolving the path through trees, some of them loose, on
// every read).
var objectsAt = newLRU[pathAt, catfile.ObjectInfo](100000)

// smallObject is the size up to which OpenObject reads an object whole
// through a pooled process instead of streaming it.
const smallObject = 1 << 20

// OpenObject streams an object; the reader must be closed. Small objects
// are read at once (the warm process goes straight back to the pool);
// large ones stream from a process of their own for as long as the
// reader stays open.
func (r *Repo) OpenObject(ctx context.Context, rev string) (catfile.ObjectInfo, io.ReadCloser, error) {
	var info catfile.ObjectInfo
	var data []byte
	err := r.withCat(ctx, func(p *catfile.Process) error {
		var err error
		if info, err = p.Info(rev); err != nil {
			return err
		}
		if info.Size <= smallObject {
			info, data, err = p.Contents(string(info.OID))
		}
		return err
	})
	if errors.Is(err, catfile.ErrMissing) {
		return info, nil, ErrPathNotFound
	}
	if err != nil {
		return info, nil, err
	}
	if data != nil || info.Size == 0 {
		return info, io.NopCloser(bytes.NewReader(data)), nil
	}
	p, err := r.pool.GetStream(ctx, r.path)
	if err != nil {
		return catfile.ObjectInfo{}, nil, err
	}
	info, rd, err := p.Stream(string(info.OID))
	if err != nil {
		r.pool.Release(p)
		if errors.Is(err, catfile.ErrMissing) {
			return info, nil, ErrPathNotFound
		}
		return info, nil, err
	}
	return info, &pooledReader{ReadCloser: rd, release: func() { r.pool.Release(p) }, abandon: p.Abandon}, nil
}

// OpenBlob is OpenObject for a blob whose size is known (from its tree
// entry): a small one takes a single round trip to the warm process.
func (r *Repo) OpenBlob(ctx context.Context, oid git.ObjectID, size int64) (io.ReadCloser, error) {
	if size > smallObject {
		_, rd, err := r.OpenObject(ctx, string(oid))
		return rd, err
	}
	_, data, err := r.ReadObject(ctx, string(oid))
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

type pooledReader struct {
	io.ReadCloser
	release func()
	abandon func()
	once    sync.Once
}

func (pr *pooledReader) Close() error {
	err := pr.ReadCloser.Close()
	pr.once.Do(func() {
		if err != nil {
			pr.abandon()
		}
		pr.release()
	})
	return err
}

// ReadObject reads a whole (small) object.
func (r *Repo) ReadObject(ctx context.Context, rev string) (catfile.ObjectInfo, []byte, error) {
	var info catfile.ObjectInfo
	var data []byte
	err := r.withCat(ctx, func(p *catfile.Process) error {
		var err error
		info, data, err = p.Contents(rev)
		if errors.Is(err, catfile.ErrMissing) {
			return ErrPathNotFound
		}
		return err
	})
	return info, data, err
}

// lastCommits caches the last commit touching a path at a commit: the
// answer never changes for a given (repository, commit, path).
var lastCommits = newLRU[pathAt, git.ObjectID](100000)

// pathAt names a path at a commit of a repository.
type pathAt struct{ repo, commit, path string }

// TreeEntry is one entry of a tree listing.
type TreeEntry struct {
	ID   string
	Name string
	Type string // blob, tree, commit (submodule)
	Path string
	Mode string // six digits
}

// trees caches listings by repository, tree id, path and depth: a tree's
// entries never change. Listings past maxCachedListing are not kept.
var trees = newLRU[treeKey, []TreeEntry](64)

type treeKey struct {
	repo, tree, path string
	recursive        bool
}

const maxCachedListing = 20000

// Tree lists the entries under path (the root when empty) at commit,
// descending into subtrees when recursive (each folder before what it
// holds, as `git ls-tree -r -t`). ErrPathNotFound when path is not a
// directory. The returned slice is shared: callers must not modify it.
func (r *Repo) Tree(ctx context.Context, commit git.ObjectID, path string, recursive bool) ([]TreeEntry, error) {
	var entries []TreeEntry
	err := r.withCat(ctx, func(p *catfile.Process) error {
		rev := string(commit) + "^{tree}"
		if path != "" {
			rev = string(commit) + ":" + path
		}
		info, err := p.Info(rev)
		if errors.Is(err, catfile.ErrMissing) {
			return ErrPathNotFound
		}
		if err != nil {
			return err
		}
		if info.Type != "tree" {
			return ErrPathNotFound
		}
		key := treeKey{r.path, string(info.OID), path, recursive}
		if cached, ok := trees.get(key); ok {
			entries = cached
			return nil
		}
		prefix := ""
		if path != "" {
			prefix = strings.TrimSuffix(path, "/") + "/"
		}
		entries = []TreeEntry{}
		if err := listTree(p, info.OID, prefix, recursive, &entries); err != nil {
			return err
		}
		if len(entries) <= maxCachedListing {
			trees.put(key, entries)
		}
		return nil
	})
	return entries, err
}

// ModeAt is the git mode ("100644", "100755", "120000"…) of the entry at
// path in commit, read from its folder's (cached) listing.
func (r *Repo) ModeAt(ctx context.Context, commit git.ObjectID, path string) (string, error) {
	key := pathAt{r.path, string(commit), path}
	if m, ok := modesAt.get(key); ok {
		return m, nil
	}
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i], path[i+1:]
	}
	entries, err := r.Tree(ctx, commit, dir, false)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name == name {
			modesAt.put(key, e.Mode)
			return e.Mode, nil
		}
	}
	return "", ErrPathNotFound
}

// modesAt caches ModeAt: a path's mode at a commit never changes.
var modesAt = newLRU[pathAt, string](100000)

// listTree appends the entries of tree (paths under prefix) in git's
// order, descending into subtrees when recursive.
func listTree(p *catfile.Process, tree git.ObjectID, prefix string, recursive bool, out *[]TreeEntry) error {
	_, data, err := p.Contents(string(tree))
	if err != nil {
		return err
	}
	idLen := len(tree) / 2
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return fmt.Errorf("malformed tree object %s", tree)
		}
		mode, name := string(data[:sp]), string(data[sp+1:nul])
		id := hex.EncodeToString(data[nul+1 : nul+1+idLen])
		data = data[nul+1+idLen:]
		typ := "blob"
		switch mode {
		case "40000":
			typ, mode = "tree", "040000"
		case "160000":
			typ = "commit"
		}
		*out = append(*out, TreeEntry{ID: id, Name: name, Type: typ, Path: prefix + name, Mode: mode})
		if recursive && typ == "tree" {
			if err := listTree(p, git.ObjectID(id), prefix+name+"/", true, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// Person is a signature of a commit or tag as git stores it. When is
// zero when the line has no date this package can represent (see
// parsePerson).
type Person struct {
	Name, Email string
	When        time.Time
}

// Commit is a parsed commit object.
type Commit struct {
	ID        git.ObjectID
	Tree      git.ObjectID
	ParentIDs []string
	Author    Person
	Committer Person
	Message   string
}

// Title is the first line of the message.
func (c Commit) Title() string {
	t, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
	return t
}

// ReadCommit reads and parses a commit.
func (r *Repo) ReadCommit(ctx context.Context, rev string) (Commit, error) {
	info, data, err := r.ReadObject(ctx, rev+"^{commit}")
	if errors.Is(err, ErrPathNotFound) {
		return Commit{}, ErrRefNotFound
	}
	if err != nil {
		return Commit{}, err
	}
	return ParseCommit(info.OID, data)
}

// ParseCommit parses a raw commit object: header lines up to the first
// empty line ("tree", "parent", "author", "committer"; others, and the
// continuation lines of multi-line headers such as gpgsig, are skipped),
// then the message. Header lines of any length are read; the error is
// always nil (commit objects come from git, and a strange one still
// shows what it has).
func ParseCommit(id git.ObjectID, data []byte) (Commit, error) {
	c := Commit{ID: id, ParentIDs: []string{}}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.Message = string(msg)
	for len(head) > 0 {
		var line []byte
		line, head, _ = bytes.Cut(head, []byte("\n"))
		key, val, _ := bytes.Cut(line, []byte(" "))
		switch string(key) {
		case "tree":
			c.Tree = git.ObjectID(val)
		case "parent":
			c.ParentIDs = append(c.ParentIDs, string(val))
		case "author":
			c.Author = parsePerson(string(val))
		case "committer":
			c.Committer = parsePerson(string(val))
		}
	}
	return c, nil
}

// maxPersonTime is the last second whose date has four year digits: the
// dates of the API (ISO 8601) and of time.Time's JSON end there.
var maxPersonTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()

// parsePerson parses "Name <email> 1700000000 +0100". The date must be
// ASCII digits (seconds since the epoch, up to the end of year 9999 both
// in UTC and in its zone) and the zone "+hhmm" or "-hhmm" with hh < 24
// and mm < 60. A date outside those bounds leaves When zero (as for a
// line without a date); a bad zone alone reads the date in UTC. Nothing
// wraps around.
func parsePerson(s string) Person {
	var p Person
	lt, gt := strings.Index(s, "<"), strings.LastIndex(s, ">")
	if lt < 0 || gt < lt {
		p.Name = s
		return p
	}
	p.Name = strings.TrimSpace(s[:lt])
	p.Email = s[lt+1 : gt]
	f := strings.Fields(s[gt+1:])
	if len(f) == 0 || strings.Trim(f[0], "0123456789") != "" {
		return p
	}
	sec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || sec > maxPersonTime {
		return p
	}
	when := time.Unix(sec, 0).UTC()
	if len(f) == 2 {
		if off, ok := zoneOffset(f[1]); ok {
			when = when.In(time.FixedZone("", off))
		}
	}
	if when.Year() > 9999 {
		return p
	}
	p.When = when
	return p
}

// zoneOffset reads git's "+hhmm"/"-hhmm" as seconds east of UTC.
func zoneOffset(z string) (int, bool) {
	if len(z) != 5 || z[0] != '+' && z[0] != '-' || strings.Trim(z[1:], "0123456789") != "" {
		return 0, false
	}
	h := int(z[1]-'0')*10 + int(z[2]-'0')
	m := int(z[3]-'0')*10 + int(z[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return off, true
}

// lru is a small thread-safe least-recently-used cache of strings.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	k K
	v V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, ll: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).v, true
	}
	var zero V
	return zero, false
}

func (c *lru[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry[K, V]).v = v
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&lruEntry[K, V]{k, v})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*lruEntry[K, V]).k)
	}
}

func asGitError(err error, target **git.Error) bool { return errors.As(err, target) }
