// Package repofiles serves the files of project repositories: reading a
// file (with its metadata), its raw bytes and blame, trees and blobs, and
// writing files as commits that never overwrite a concurrent change.
package repofiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/ratelimit"
)

// ProjectResolver finds a project the actor may read (the projects
// service), and registers writes to its repository: BeginWrite refuses
// them while a storage move holds it, and on success p says where the
// repository is now; end must be called once the write is over.
type ProjectResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	CanPush(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, branch string) (bool, error)
	BeginWrite(ctx context.Context, p *model.Project) (end func(), err error)
	// Access is the actor's effective access to a project.
	Access(ctx context.Context, a auth.Actor, projectID int64) (model.AccessLevel, error)
}

// Service answers repository file questions.
type Service struct {
	projects     ProjectResolver
	refresher    Refresher
	events       RefsEvents
	log          *slog.Logger
	protection   ProtectionSource
	storages     *gitrepo.Storages
	sums         sync.Map // blob id → sha256 hex: a blob's bytes never change
	sumCount     atomic.Int64
	archives     *ratelimit.Limiter
	archiveCache *archiveCache
	now          func() time.Time
	maxFile      int64
	settings     Settings
	// rawReads counts raw file and blob reads per project and path for
	// the instance's raw_blob_request_limit.
	rawReads *ratelimit.Limiter
}

// Settings give the instance's application settings in effect.
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// SetSettings makes diffs follow the instance's diff_max_* settings
// (before use).
func (s *Service) SetSettings(st Settings) { s.settings = st }

// allowRaw counts a raw read of what in a repository against the
// instance's raw_blob_request_limit (per minute; 0 is unlimited).
func (s *Service) allowRaw(ctx context.Context, repo *gitrepo.Repo, what string) error {
	if s.settings == nil {
		return nil
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return err
	}
	if !s.rawReads.AllowMax(repo.Path()+"\x00"+what, int(min(st.RawBlobRequestLimit, 1<<31-1))) {
		return model.TooManyRequests("endpoint")
	}
	return nil
}

// diffLimits are the instance's diff limits.
func (s *Service) diffLimits(ctx context.Context) (gitrepo.DiffLimits, error) {
	if s.settings == nil {
		return gitrepo.DefaultDiffLimits, nil
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return gitrepo.DiffLimits{}, err
	}
	return gitrepo.InstanceDiffLimits(st.DiffMaxFiles, st.DiffMaxLines, st.DiffMaxPatchBytes), nil
}

// ProjectService is what the files service needs of projects.
type ProjectService interface {
	ProjectResolver
	Refresher
	ProtectionSource
}

// maxSums bounds the remembered blob hashes; past it they start afresh.
const maxSums = 200000

// Options tune the files service.
type Options struct {
	// Now is the clock (commit dates); nil is the wall clock.
	Now func() time.Time
	// ArchivesPerMinute bounds the archives one user may download per
	// minute (0: no limit).
	ArchivesPerMinute int
	// ArchiveCacheDir keeps built archives, up to ArchiveCacheBytes (no
	// cache when either is unset).
	ArchiveCacheDir   string
	ArchiveCacheBytes int64
	// MaxFileBytes bounds the content one commit writes (0: no bound).
	MaxFileBytes int64
}

// New returns the files service.
func New(projects ProjectService, storages *gitrepo.Storages, events RefsEvents, log *slog.Logger, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{projects: projects, refresher: projects, protection: projects, storages: storages, events: events, log: log, now: o.Now,
		archives: ratelimit.New(o.ArchivesPerMinute, time.Minute), rawReads: ratelimit.New(0, time.Minute), archiveCache: newArchiveCache(o.ArchiveCacheDir, o.ArchiveCacheBytes),
		maxFile: o.MaxFileBytes}
}

// ErrInvalidPath is a file path that could escape the repository.
var ErrInvalidPath = model.Param("file_path should be a valid file path")

// CleanPath validates a decoded file path: relative, no "." or ".."
// segments, no empty segments, no control characters.
func CleanPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\x00\n\r") {
		return "", ErrInvalidPath
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", ErrInvalidPath
		}
	}
	return strings.TrimSuffix(p, "/"), nil
}

// readable resolves a project whose code the actor may read, and opens
// its repository.
func (s *Service) readable(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, *gitrepo.Repo, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return p, acc, nil, err
	}
	repo, err := s.openReadable(a, &p, acc)
	return p, acc, repo, err
}

// openReadable opens the repository of a resolved project whose code the
// actor may read.
func (s *Service) openReadable(a auth.Actor, p *model.Project, acc model.AccessLevel) (*gitrepo.Repo, error) {
	if !auth.Can(a, auth.ReadCode, auth.Resource{Project: p, Access: acc}) {
		return nil, model.Forbidden("")
	}
	return s.storages.Open(p.RepositoryStorage, p.DiskPath)
}

// File is a file's metadata at a ref.
type File struct {
	Name          string
	Path          string
	Size          int64
	Ref           string
	BlobID        string
	CommitID      string
	LastCommitID  string
	ContentSHA256 string
	Executable    bool // mode 100755
}

// Stat describes the file at path on ref (default: the project's default
// branch).
func (s *Service) Stat(ctx context.Context, a auth.Actor, projectRef, filePath, ref string) (File, error) {
	f, _, err := s.stat(ctx, a, projectRef, filePath, ref)
	return f, err
}

func (s *Service) stat(ctx context.Context, a auth.Actor, projectRef, filePath, ref string) (File, *gitrepo.Repo, error) {
	fp, err := CleanPath(filePath)
	if err != nil {
		return File{}, nil, err
	}
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return File{}, nil, err
	}
	return s.statIn(ctx, &p, repo, nil, fp, ref)
}

// statIn is stat in an opened repository, of a clean path; pin (may be
// nil) holds the commit a ref named earlier.
func (s *Service) statIn(ctx context.Context, p *model.Project, repo *gitrepo.Repo, pin *pinned, fp, ref string) (File, *gitrepo.Repo, error) {
	if ref == "" {
		ref = p.DefaultBranch
	}
	commit, err := pin.commitID(ctx, repo, ref)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return File{}, nil, model.NotFound("Commit")
	}
	if err != nil {
		return File{}, nil, err
	}
	info, err := repo.ObjectAt(ctx, commit, fp)
	if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
		return File{}, nil, model.NotFound("File")
	}
	if err != nil {
		return File{}, nil, err
	}
	last, err := repo.LastCommit(ctx, commit, fp)
	if err != nil && !errors.Is(err, gitrepo.ErrPathNotFound) {
		return File{}, nil, err
	}
	mode, err := repo.ModeAt(ctx, commit, fp)
	if err != nil {
		return File{}, nil, err
	}
	f := File{Name: path.Base(fp), Path: fp, Size: info.Size, Ref: ref, BlobID: string(info.OID), Executable: mode == "100755",
		CommitID: string(commit), LastCommitID: string(last)}
	if f.ContentSHA256, err = s.sha256(ctx, repo, info.OID, info.Size); err != nil {
		return File{}, nil, err
	}
	return f, repo, nil
}

// sha256 hashes a blob once, streaming, and remembers the answer.
func (s *Service) sha256(ctx context.Context, repo *gitrepo.Repo, oid git.ObjectID, size int64) (string, error) {
	if v, ok := s.sums.Load(oid); ok {
		return v.(string), nil
	}
	rd, err := repo.OpenBlob(ctx, oid, size)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(h, rd)
	if cerr := rd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if s.sumCount.Add(1) > maxSums {
		s.sums.Clear()
		s.sumCount.Store(1)
	}
	s.sums.Store(oid, sum)
	return sum, nil
}

// OpenRaw describes the file and streams its bytes; the reader must be
// closed.
func (s *Service) OpenRaw(ctx context.Context, a auth.Actor, projectRef, filePath, ref string) (File, io.ReadCloser, error) {
	f, repo, err := s.stat(ctx, a, projectRef, filePath, ref)
	if err != nil {
		return f, nil, err
	}
	if err := s.allowRaw(ctx, repo, filePath); err != nil {
		return f, nil, err
	}
	rd, err := repo.OpenBlob(ctx, git.ObjectID(f.BlobID), f.Size)
	return f, rd, err
}

// Read returns the file's metadata and whole content (for the JSON form).
func (s *Service) Read(ctx context.Context, a auth.Actor, projectRef, filePath, ref string) (File, []byte, error) {
	f, repo, err := s.stat(ctx, a, projectRef, filePath, ref)
	if err != nil {
		return f, nil, err
	}
	_, data, err := repo.ReadObject(ctx, f.BlobID)
	return f, data, err
}

// TreeInput selects a listing of a folder.
type TreeInput struct {
	Dir, Ref  string // "" is the root and the default branch
	Recursive bool
	// All lists every entry, without pages (pagination=none).
	All bool
	// PageToken continues a keyset listing after the entry it names.
	PageToken string
}

// Tree lists a folder at a ref, one page at a time: offset pages with
// totals, or keyset pages (page.Keyset) that continue after the entry
// named by in.PageToken — its path, as NextCursor gives it, or its id, as
// GitLab documents the token — with NextCursor naming the page's last
// entry when more follow.
func (s *Service) Tree(ctx context.Context, a auth.Actor, projectRef string, in TreeInput, page model.Page) ([]gitrepo.TreeEntry, model.PageInfo, error) {
	dir := in.Dir
	if dir != "" {
		var err error
		if dir, err = CleanPath(dir); err != nil {
			return nil, model.PageInfo{}, model.Param("path should be a valid file path")
		}
	}
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return treeIn(ctx, &p, repo, nil, dir, in, page)
}

// treeIn is Tree in an opened repository, of a clean folder's path; pin
// (may be nil) holds the commit a ref named earlier.
func treeIn(ctx context.Context, p *model.Project, repo *gitrepo.Repo, pin *pinned, dir string, in TreeInput, page model.Page) ([]gitrepo.TreeEntry, model.PageInfo, error) {
	ref := in.Ref
	if ref == "" {
		ref = p.DefaultBranch
	}
	commit, err := pin.commitID(ctx, repo, ref)
	if err != nil {
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return nil, model.PageInfo{}, model.NotFound("Tree")
		}
		return nil, model.PageInfo{}, err
	}
	entries, err := repo.Tree(ctx, commit, dir, in.Recursive)
	if errors.Is(err, gitrepo.ErrPathNotFound) {
		return nil, model.PageInfo{}, model.NotFound("invalid revision or path")
	}
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	switch {
	case in.All:
		return entries, model.PageInfo{Total: len(entries), TotalKnown: true}, nil
	case page.Keyset:
		start := 0
		if in.PageToken != "" {
			var ok bool
			if start, ok = after(entries, in.PageToken); !ok {
				return nil, model.PageInfo{}, model.Param("page_token is invalid")
			}
		}
		list := entries[start:min(start+page.PerPage, len(entries))]
		info := model.PageInfo{HasMore: start+len(list) < len(entries)}
		if info.HasMore {
			info.NextCursor = list[len(list)-1].Path
		}
		return list, info, nil
	}
	list, info := model.PageOf(entries, page)
	return list, info, nil
}

// treeKey orders entries as git stores them: by path, a folder's name
// compared as if it ended in "/". A listing (recursive too, depth first)
// is sorted by it.
func treeKey(e gitrepo.TreeEntry) string {
	if e.Type == "tree" {
		return e.Path + "/"
	}
	return e.Path
}

// after is the index following the entry a keyset token names: found by
// path with a binary search; an entry id (GitLab's documented form, not
// ordered) by a scan.
func after(entries []gitrepo.TreeEntry, token string) (int, bool) {
	for _, key := range []string{token, token + "/"} {
		i := sort.Search(len(entries), func(i int) bool { return treeKey(entries[i]) >= key })
		if i < len(entries) && treeKey(entries[i]) == key {
			return i + 1, true
		}
	}
	if len(token) >= 40 && strings.Trim(token, "0123456789abcdef") == "" {
		for i, e := range entries {
			if e.ID == token {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// Blob is a blob by id.
type Blob struct {
	SHA  string
	Size int64
}

// OpenBlob streams a blob by id; the reader must be closed.
func (s *Service) OpenBlob(ctx context.Context, a auth.Actor, projectRef, sha string) (Blob, io.ReadCloser, error) {
	_, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return Blob{}, nil, err
	}
	if len(sha) < 4 || strings.Trim(sha, "0123456789abcdefABCDEF") != "" {
		return Blob{}, nil, model.NotFound("Blob")
	}
	if err := s.allowRaw(ctx, repo, strings.ToLower(sha)); err != nil {
		return Blob{}, nil, err
	}
	info, rd, err := repo.OpenObject(ctx, sha)
	if errors.Is(err, gitrepo.ErrPathNotFound) {
		return Blob{}, nil, model.NotFound("Blob")
	}
	if err != nil {
		return Blob{}, nil, err
	}
	if info.Type != "blob" {
		rd.Close()
		return Blob{}, nil, model.NotFound("Blob")
	}
	return Blob{SHA: string(info.OID), Size: info.Size}, rd, nil
}

// The repository types the service answers with.
type (
	Commit      = gitrepo.Commit
	FileDiff    = gitrepo.FileDiff
	BlameRange  = gitrepo.BlameRange
	Contributor = gitrepo.Contributor
	TreeEntry   = gitrepo.TreeEntry
)

// ParseTrailers reads the trailers of a commit message.
func ParseTrailers(msg string) map[string][]string { return gitrepo.ParseTrailers(msg) }

// ArchiveFormats lists the archive format names (the extensions of
// /repository/archive.<format>), sorted.
func ArchiveFormats() []string { return gitrepo.ArchiveFormatNames() }
