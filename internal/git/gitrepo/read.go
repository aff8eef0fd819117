package gitrepo

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"errors"
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
	var info catfile.ObjectInfo
	err := r.withCat(ctx, func(p *catfile.Process) error {
		var err error
		info, err = p.Info(string(commit) + ":" + path)
		if errors.Is(err, catfile.ErrMissing) {
			return ErrPathNotFound
		}
		return err
	})
	return info, err
}

// OpenObject streams an object; the reader must be closed, which returns
// the warm process to the pool.
func (r *Repo) OpenObject(ctx context.Context, rev string) (catfile.ObjectInfo, io.ReadCloser, error) {
	p, err := r.pool.Get(ctx, r.path)
	if err != nil {
		return catfile.ObjectInfo{}, nil, err
	}
	info, rd, err := p.Stream(rev)
	if err != nil {
		r.pool.Release(p)
		if errors.Is(err, catfile.ErrMissing) {
			return info, nil, ErrPathNotFound
		}
		return info, nil, err
	}
	return info, &pooledReader{ReadCloser: rd, release: func() { r.pool.Release(p) }, abandon: p.Abandon}, nil
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
var lastCommits = newLRU(20000)

// LastCommit returns the newest commit at or before commit that changed
// path.
func (r *Repo) LastCommit(ctx context.Context, commit git.ObjectID, path string) (git.ObjectID, error) {
	key := r.path + "\x00" + string(commit) + "\x00" + path
	if v, ok := lastCommits.get(key); ok {
		return git.ObjectID(v), nil
	}
	out, err := r.run(ctx, git.Command{Name: "rev-list", Flags: []git.Flag{{Name: "--max-count", Value: "1"}},
		Args: []string{string(commit)}, PathArgs: []string{path}}, git.Options{})
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if id == "" {
		return "", ErrPathNotFound
	}
	lastCommits.put(key, id)
	return git.ObjectID(id), nil
}

// TreeEntry is one entry of a tree listing.
type TreeEntry struct {
	ID   string
	Name string
	Type string // blob, tree, commit (submodule)
	Path string
	Mode string // six digits
}

// Tree lists the entries under path (the root when empty) at commit,
// descending into subtrees when recursive. ErrPathNotFound when path is
// not a directory.
func (r *Repo) Tree(ctx context.Context, commit git.ObjectID, path string, recursive bool) ([]TreeEntry, error) {
	rev := string(commit)
	if path != "" {
		info, err := r.ObjectAt(ctx, commit, path)
		if err != nil {
			return nil, err
		}
		if info.Type != "tree" {
			return nil, ErrPathNotFound
		}
		rev = string(info.OID)
	}
	flags := []git.Flag{{Name: "-z"}}
	if recursive {
		flags = append(flags, git.Flag{Name: "-r"}, git.Flag{Name: "-t"})
	}
	out, err := r.run(ctx, git.Command{Name: "ls-tree", Flags: flags, Args: []string{rev}}, git.Options{})
	if err != nil {
		return nil, err
	}
	var entries []TreeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		full := name
		if path != "" {
			full = strings.TrimSuffix(path, "/") + "/" + name
		}
		base := name
		if i := strings.LastIndex(name, "/"); i >= 0 {
			base = name[i+1:]
		}
		entries = append(entries, TreeEntry{ID: f[2], Name: base, Type: f[1], Path: full, Mode: f[0]})
	}
	return entries, nil
}

// Signature parts of a commit as git stores them.
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

// ParseCommit parses a raw commit object.
func ParseCommit(id git.ObjectID, data []byte) (Commit, error) {
	c := Commit{ID: id, ParentIDs: []string{}}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.Message = string(msg)
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "tree":
			c.Tree = git.ObjectID(val)
		case "parent":
			c.ParentIDs = append(c.ParentIDs, val)
		case "author":
			c.Author = parsePerson(val)
		case "committer":
			c.Committer = parsePerson(val)
		}
	}
	return c, sc.Err()
}

// parsePerson parses "Name <email> 1700000000 +0100".
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
	if len(f) >= 1 {
		if sec, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			p.When = time.Unix(sec, 0).UTC()
			if len(f) == 2 && len(f[1]) == 5 {
				h, _ := strconv.Atoi(f[1][1:3])
				m, _ := strconv.Atoi(f[1][3:5])
				off := h*3600 + m*60
				if f[1][0] == '-' {
					off = -off
				}
				p.When = p.When.In(time.FixedZone("", off))
			}
		}
	}
	return p
}

// lru is a small thread-safe least-recently-used cache of strings.
type lru struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type lruEntry struct{ k, v string }

func newLRU(max int) *lru { return &lru{max: max, ll: list.New(), items: map[string]*list.Element{}} }

func (c *lru) get(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry).v, true
	}
	return "", false
}

func (c *lru) put(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry).v = v
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&lruEntry{k, v})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*lruEntry).k)
	}
}

func asGitError(err error, target **git.Error) bool { return errors.As(err, target) }
