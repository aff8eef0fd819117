// Package gitrepo offers typed operations on bare repositories kept on
// named storages: create, commit without a work tree (compare-and-swap on
// the ref), copy for forks, size and emptiness, removal.
//
// Warm processes: reads go through warm `cat-file --batch-command`
// processes (at most 4 per repository for short reads) and writes through
// warm plumbing writers (warm.go). Both count against one budget of the
// Storages (Options.MaxProcesses, default 128) across every repository:
// past it the least recently used idle process anywhere is ended to make
// room, and a process started while all of them are busy ends as soon as
// it is released, so that the processes alive while the server is idle
// never exceed the maximum. A goroutine of the Storages ends processes
// idle for longer than Options.IdleTimeout (default one minute), checking
// every quarter of it, so a server without traffic runs no git process.
// Close ends them all and stops that goroutine.
package gitrepo

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/catfile"
)

// Storages maps storage names to their root folders.
type Storages struct {
	runner  *git.Runner
	roots   map[string]string
	budget  *catfile.Budget
	pool    *catfile.Pool
	writers *writerSet
	locks   *branchLocks
	usable  usability
}

// Options tune the warm git processes of the storages; zero values select
// the defaults.
type Options struct {
	// MaxProcesses bounds the warm git processes (cat-file readers and
	// plumbing writers) kept across every repository; default 128.
	MaxProcesses int
	// IdleTimeout ends a warm process unused for longer; default one
	// minute.
	IdleTimeout time.Duration
}

// catfilePerRepo is how many cat-file processes of one repository serve
// short reads at once.
const catfilePerRepo = 4

// NewStorages returns the storages with the default Options; "default"
// must be among them. Close must be called.
func NewStorages(runner *git.Runner, roots map[string]string) (*Storages, error) {
	return NewStoragesWith(runner, roots, Options{})
}

// NewStoragesWith returns the storages; "default" must be among them, and
// its folder must exist or be made. Every storage is checked once (see
// Usable): one that is unusable is kept, reported by Unusable and never
// picked. It starts the goroutine that ends idle git processes: Close
// must be called.
func NewStoragesWith(runner *git.Runner, roots map[string]string, opts Options) (*Storages, error) {
	if _, ok := roots["default"]; !ok {
		return nil, errors.New("no default repository storage")
	}
	if err := os.MkdirAll(roots["default"], 0o750); err != nil {
		return nil, fmt.Errorf("storage default: %w", err)
	}
	checked := map[string]usableAnswer{}
	for name, root := range roots {
		err := prepareRoot(name, root)
		if err != nil {
			err = fmt.Errorf("repository storage %s (%s) is not usable: %w", name, root, err)
		}
		checked[name] = usableAnswer{err: err, at: time.Now()}
	}
	budget := catfile.NewBudget(opts.MaxProcesses, opts.IdleTimeout)
	return &Storages{runner: runner, roots: roots, budget: budget, usable: usability{checked: checked},
		pool: catfile.NewPoolWithBudget(runner, catfilePerRepo, budget), writers: newWriterSet(budget), locks: newBranchLocks()}, nil
}

// Close ends the warm git processes, waiting for busy writers, and stops
// the goroutine that ends idle ones; a cat-file process in use ends when
// released. Storages stay usable afterwards, without warm processes.
func (s *Storages) Close() {
	s.pool.Close()
	s.writers.closeAll()
	s.budget.Close()
}

// WarmProcesses reports the budget of warm git processes.
func (s *Storages) WarmProcesses() catfile.BudgetStats { return s.budget.Stats() }

// Names lists the storages.
func (s *Storages) Names() []string {
	out := make([]string, 0, len(s.roots))
	for n := range s.roots {
		out = append(out, n)
	}
	return out
}

// Has reports whether a storage exists.
func (s *Storages) Has(name string) bool { _, ok := s.roots[name]; return ok }

// HashedPath is where a project's repository lives on its storage: derived
// from the id alone, so renames and transfers never move data.
func HashedPath(kind string, id int64) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(id, 10)))
	h := hex.EncodeToString(sum[:])
	p := "@hashed/" + h[0:2] + "/" + h[2:4] + "/" + h
	if kind != "" {
		p += "." + kind
	}
	return p + ".git"
}

// WikiPath is where the wiki of the repository at rel lives: beside it,
// "<hash>.wiki.git" for "<hash>.git".
func WikiPath(rel string) string { return strings.TrimSuffix(rel, ".git") + ".wiki.git" }

// GroupWikiPath is where a group's wiki lives on its storage: derived
// from the group's id alone, like a project's repository.
func GroupWikiPath(groupID int64) string {
	return "@groups/" + strings.TrimPrefix(HashedPath("wiki", groupID), "@hashed/")
}

// SnippetPath is where a snippet's repository lives on its storage,
// "@snippets/ab/cd/<sha256(id)>.git" as GitLab puts them: derived from the
// snippet's id alone.
func SnippetPath(snippetID int64) string {
	return "@snippets/" + strings.TrimPrefix(HashedPath("", snippetID), "@hashed/")
}

// Repo is one bare repository.
type Repo struct {
	Storage string
	Rel     string
	path    string
	root    string
	runner  *git.Runner
	pool    *catfile.Pool
	writers *writerSet
	locks   *branchLocks
}

// Open returns the repository at rel on storage (it may not exist yet).
func (s *Storages) Open(storage, rel string) (*Repo, error) {
	root, ok := s.roots[storage]
	if !ok {
		return nil, fmt.Errorf("unknown repository storage %q", storage)
	}
	clean := filepath.Clean("/" + rel)
	if clean == "/" || strings.Contains(rel, "..") {
		return nil, fmt.Errorf("bad repository path %q", rel)
	}
	return &Repo{Storage: storage, Rel: rel, path: filepath.Join(root, filepath.FromSlash(clean)), root: root, runner: s.runner, pool: s.pool, writers: s.writers, locks: s.locks}, nil
}

// Path is the repository's folder.
func (r *Repo) Path() string { return r.path }

func (r *Repo) run(ctx context.Context, c git.Command, o git.Options) ([]byte, error) {
	return r.runner.Run(ctx, r.path, c, o)
}

// Exists reports whether the repository has been created.
func (r *Repo) Exists() bool {
	_, err := os.Stat(filepath.Join(r.path, "HEAD"))
	return err == nil
}

// ErrRepositoryExists reports that a repository is already where Create
// would put one.
var ErrRepositoryExists = errors.New("repository exists")

// asideSuffix marks the folder a repository is built in beside its place:
// "<rel>.creating-<random>".
const asideSuffix = ".creating-"

// asideMaxAge is how old a folder built aside must be before a creation
// of the same repository removes it as a crash's leftover (a creation
// takes seconds; one in another process may be using a younger one).
const asideMaxAge = time.Hour

// Create makes an empty bare repository whose HEAD points at
// defaultBranch, configured as Quarry's repositories are. It is built
// aside — initialised and configured in a folder beside its place, on the
// same storage — and renamed into place, so that whatever moment a crash
// comes, there is either no repository or a whole one; a crash may leave
// the folder aside, which a later creation of the same repository, or its
// housekeeping, removes once it is an hour old. ErrRepositoryExists when a
// repository is there already (a racing creator made it).
func (r *Repo) Create(ctx context.Context, defaultBranch string) error {
	if !git.ValidRefName(defaultBranch) {
		return fmt.Errorf("invalid default branch %q", defaultBranch)
	}
	if r.Exists() {
		return ErrRepositoryExists
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o750); err != nil {
		return err
	}
	r.removeOldAside()
	var random [8]byte
	if _, err := rand.Read(random[:]); err != nil {
		return err
	}
	aside := &Repo{path: r.path + asideSuffix + hex.EncodeToString(random[:]), runner: r.runner}
	if err := aside.initConfigured(ctx, defaultBranch); err != nil {
		_ = os.RemoveAll(aside.path)
		return err
	}
	if err := os.Rename(aside.path, r.path); err != nil {
		_ = os.RemoveAll(aside.path)
		if r.Exists() {
			return ErrRepositoryExists
		}
		return fmt.Errorf("create repository: %w", err)
	}
	return nil
}

// initConfigured runs git init at the repository's path and sets its
// configuration.
func (r *Repo) initConfigured(ctx context.Context, defaultBranch string) error {
	_, err := r.runner.Run(ctx, "", git.Command{Name: "init", Flags: []git.Flag{{Name: "--bare"}, {Name: "--quiet"},
		{Name: "--initial-branch", Value: defaultBranch}}, Args: []string{r.path}}, git.Options{})
	if err != nil {
		return err
	}
	return r.Configure(ctx)
}

// Configure sets the configuration Create gives a repository (again: it
// is idempotent), for a repository made otherwise — in place by an older
// Quarry that died before configuring it, say.
func (r *Repo) Configure(ctx context.Context) error {
	// Writes from the API and pushes both keep the commit-graph current,
	// which keeps history walks fast; pushes take options (ci.skip).
	for _, kv := range [][2]string{{"core.commitGraph", "true"}, {"fetch.writeCommitGraph", "true"}, {"receive.advertisePushOptions", "true"}, {"gc.auto", "0"}} {
		if _, err := r.run(ctx, git.Command{Name: "config", Args: []string{kv[0], kv[1]}}, git.Options{}); err != nil {
			return err
		}
	}
	return nil
}

// removeOldAside removes the folders this repository was built in aside
// by creations a crash cut short, and the copies storage moves a crash
// cut short were building here (git processes of a killed server may
// outlive it), once they are old enough that nothing can be using them.
func (r *Repo) removeOldAside() {
	entries, _ := os.ReadDir(filepath.Dir(r.path))
	base := filepath.Base(r.path)
	for _, e := range entries {
		if !e.IsDir() || !(strings.HasPrefix(e.Name(), base+asideSuffix) || strings.HasPrefix(e.Name(), base+movingSuffix)) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > asideMaxAge {
			_ = os.RemoveAll(filepath.Join(filepath.Dir(r.path), e.Name()))
		}
	}
}

// Remove deletes the repository from disk.
func (r *Repo) Remove() error {
	r.pool.Evict(r.path)
	r.writers.evict(r.path)
	refSnapshots.forget(r.path)
	return os.RemoveAll(r.path)
}

// HeadBranch is the branch HEAD points at.
func (r *Repo) HeadBranch(ctx context.Context) (string, error) {
	// A bare repository's HEAD is a file naming its branch: read it
	// rather than start git for it on every read.
	if b, err := os.ReadFile(filepath.Join(r.path, "HEAD")); err == nil {
		if name, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/"); ok && git.ValidRefName(name) {
			return name, nil
		}
	}
	out, err := r.run(ctx, git.Command{Name: "symbolic-ref", Flags: []git.Flag{{Name: "--short"}}, Args: []string{"HEAD"}}, git.Options{})
	return strings.TrimSpace(string(out)), err
}

// SetHeadBranch points HEAD at branch.
func (r *Repo) SetHeadBranch(ctx context.Context, branch string) error {
	if !git.ValidRefName(branch) {
		return fmt.Errorf("invalid branch %q", branch)
	}
	_, err := r.run(ctx, git.Command{Name: "symbolic-ref", Args: []string{"HEAD", "refs/heads/" + branch}}, git.Options{})
	return err
}

// Branches lists branch names.
func (r *Repo) Branches(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--format", Value: "%(refname:lstrip=2)"}}, Args: []string{"refs/heads/"}}, git.Options{})
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Empty reports whether the repository has no branches.
func (r *Repo) Empty(ctx context.Context) (bool, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--count", Value: "1"}, {Name: "--format", Value: "%(refname)"}}, Args: []string{"refs/heads/"}}, git.Options{})
	return len(bytes.TrimSpace(out)) == 0, err
}

// ResolveCommit returns the commit a revision names; ok is false when it
// names none.
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (git.ObjectID, bool, error) {
	out, err := r.run(ctx, git.Command{Name: "rev-parse", Flags: []git.Flag{{Name: "--verify"}, {Name: "--quiet"}}, Args: []string{rev + "^{commit}"}}, git.Options{})
	var ge *git.Error
	if errors.As(err, &ge) && ge.Code == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return git.ObjectID(strings.TrimSpace(string(out))), true, nil
}

// HasFile reports whether path exists at rev.
func (r *Repo) HasFile(ctx context.Context, rev, path string) (bool, error) {
	out, err := r.run(ctx, git.Command{Name: "ls-tree", Flags: []git.Flag{{Name: "--name-only"}}, Args: []string{rev}, PathArgs: []string{path}}, git.Options{})
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) && ge.Code == 128 {
			return false, nil
		}
		return false, err
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// CommitCount counts the commits reachable from rev (0 for an empty repo).
func (r *Repo) CommitCount(ctx context.Context, rev string) (int64, error) {
	if _, ok, err := r.ResolveCommit(ctx, rev); err != nil || !ok {
		return 0, err
	}
	out, err := r.run(ctx, git.Command{Name: "rev-list", Flags: []git.Flag{{Name: "--count"}}, Args: []string{rev}}, git.Options{})
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// Size is the repository's size on disk in bytes.
func (r *Repo) Size() (int64, error) {
	var n int64
	err := filepath.WalkDir(r.path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// CopyFrom fills this (new, empty) repository with every branch and tag of
// src and the same HEAD, for a fork.
func (r *Repo) CopyFrom(ctx context.Context, src *Repo) error {
	if _, err := r.run(ctx, git.Command{Name: "fetch", Flags: []git.Flag{{Name: "--quiet"}, {Name: "--no-tags"}},
		Args: []string{src.path, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}}, git.Options{}); err != nil {
		return err
	}
	head, err := src.HeadBranch(ctx)
	if err != nil {
		return err
	}
	return r.SetHeadBranch(ctx, head)
}

// Signature is an author or committer.
type Signature struct {
	Name, Email string
	When        time.Time
}

// ident is the signature as a commit object holds it.
func (s Signature) ident() string {
	clean := strings.NewReplacer("<", "", ">", "", "\n", " ", "\x00", "")
	return strings.TrimSpace(clean.Replace(s.Name)) + " <" + strings.TrimSpace(clean.Replace(s.Email)) + "> " +
		strconv.FormatInt(s.When.Unix(), 10) + " +0000"
}

// FileWrite puts content at path (creating folders as needed).
type FileWrite struct {
	Path    string
	Content []byte
	Mode    string // "100644" (default) or "100755"
}

// CommitRequest is one commit written without a work tree.
type CommitRequest struct {
	Branch    string
	Parent    git.ObjectID // "" for a root commit
	Files     []FileWrite
	Author    Signature
	Committer Signature
	Message   string
}

// ErrRefMoved is returned when the branch no longer points at the parent
// the commit was built on.
var ErrRefMoved = errors.New("branch moved")

// Commit writes the files as a new commit on top of Parent and moves the
// branch to it only if it still points at Parent.
func (r *Repo) Commit(ctx context.Context, req CommitRequest) (git.ObjectID, error) {
	if !git.ValidRefName(req.Branch) {
		return "", fmt.Errorf("invalid branch %q", req.Branch)
	}
	actions := make([]Action, len(req.Files))
	for i, f := range req.Files {
		actions[i] = Action{Kind: "write", Path: f.Path, Content: f.Content, HasContent: true}
		if f.Mode == "100755" {
			x := true
			actions[i].Executable = &x
		}
	}
	id, err := r.BuildCommit(ctx, req.Parent, actions, req.Author, req.Committer, req.Message)
	if err != nil {
		return "", err
	}
	if err := r.UpdateRef(ctx, "refs/heads/"+req.Branch, id, req.Parent); err != nil {
		return "", err
	}
	return id, nil
}

// ReadFile returns up to max bytes of the file at path in rev; ok is false
// when there is no such file.
func (r *Repo) ReadFile(ctx context.Context, rev, path string, max int64) ([]byte, bool, error) {
	exists, err := r.HasFile(ctx, rev, path)
	if err != nil || !exists {
		return nil, false, err
	}
	var buf bytes.Buffer
	w := &limitWriter{w: &buf, n: max}
	if _, err := r.run(ctx, git.Command{Name: "cat-file", Args: []string{"blob", rev + ":" + path}}, git.Options{Stdout: w}); err != nil {
		return nil, false, err
	}
	return buf.Bytes(), true, nil
}

// limitWriter keeps the first n bytes and drops the rest.
type limitWriter struct {
	w *bytes.Buffer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := int64(len(p))
		if k > l.n {
			k = l.n
		}
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// Root is the storage folder the repository lives in.
func (r *Repo) Root() string {
	return strings.TrimSuffix(r.path, string(filepath.Separator)+filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(filepath.Clean("/"+r.Rel)), "/")))
}

// Runner is the git runner of the storages (for the smart HTTP handler).
func (s *Storages) Runner() *git.Runner { return s.runner }
