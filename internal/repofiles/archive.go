package repofiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

var onlyLines = regexp.MustCompile(`has only (\d+) lines?`)

// Blame attributes the lines of filePath at ref to the commits that last
// changed them; start and end (1-based, inclusive; 0 for the whole file)
// narrow the lines. A range past the end of the file is cut at the end.
func (s *Service) Blame(ctx context.Context, a auth.Actor, projectRef, filePath, ref string, start, end int) (File, []gitrepo.BlameRange, error) {
	f, repo, err := s.stat(ctx, a, projectRef, filePath, ref)
	if err != nil {
		return f, nil, err
	}
	commit := git.ObjectID(f.CommitID)
	ranges, err := repo.Blame(ctx, commit, f.Path, start, end)
	var ge *git.Error
	if err != nil && start > 0 && errors.As(err, &ge) {
		if m := onlyLines.FindStringSubmatch(ge.Stderr); m != nil {
			n, _ := strconv.Atoi(m[1])
			if start > n {
				return f, []gitrepo.BlameRange{}, nil
			}
			ranges, err = repo.Blame(ctx, commit, f.Path, start, n)
		}
	}
	if err != nil {
		return f, nil, err
	}
	if ranges == nil {
		ranges = []gitrepo.BlameRange{}
	}
	return f, ranges, nil
}

// ArchiveInfo names an archive being streamed.
type ArchiveInfo struct {
	// Name is the download's file name: "<prefix>.<format>".
	Name string
	// Size is the archive's length when it comes from the cache (0 while
	// it is being built).
	Size int64
}

// Archive streams an archive of the project's repository at sha (a commit,
// branch or tag; default: the default branch), limited to path when set.
// The reader must be closed. Requests past the archive rate limit of the
// actor (or of client, for anonymous callers) answer 429.
func (s *Service) Archive(ctx context.Context, a auth.Actor, projectRef, sha, format, dir, client string) (ArchiveInfo, io.ReadCloser, error) {
	if _, ok := gitrepo.ArchiveFormats[format]; !ok {
		return ArchiveInfo{}, nil, model.NotFound("File")
	}
	if dir != "" {
		var err error
		if dir, err = CleanPath(dir); err != nil {
			return ArchiveInfo{}, nil, model.NotFound("File")
		}
	}
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return ArchiveInfo{}, nil, err
	}
	who := "ip:" + client
	if a.User != nil {
		who = "user:" + strconv.FormatInt(a.User.ID, 10)
	}
	if !s.archives.Allow(who) {
		return ArchiveInfo{}, nil, model.TooManyRequests("archive")
	}
	ref := sha
	if ref == "" {
		ref = p.DefaultBranch
	}
	commit, err := repo.CommitID(ctx, ref)
	if err != nil {
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return ArchiveInfo{}, nil, model.NotFound("File")
		}
		return ArchiveInfo{}, nil, err
	}
	if dir != "" {
		if _, err := repo.ObjectAt(ctx, commit, dir); err != nil {
			if errors.Is(err, gitrepo.ErrPathNotFound) {
				return ArchiveInfo{}, nil, model.NotFound("File")
			}
			return ArchiveInfo{}, nil, err
		}
	}
	prefix := ArchivePrefix(p.Path, ref, string(commit), dir)
	info := ArchiveInfo{Name: prefix + "." + format}
	var key string
	if s.archiveCache != nil {
		key = s.archiveCache.path(repo.Path(), string(commit), format, prefix, dir)
		if f, size, ok := s.archiveCache.open(key); ok {
			info.Size = size
			return info, f, nil
		}
	}
	rd, err := repo.Archive(ctx, commit, format, prefix, dir)
	if err != nil {
		return ArchiveInfo{}, nil, err
	}
	if s.archiveCache != nil {
		rd = s.archiveCache.fill(key, rd)
	}
	return info, rd, nil
}

// ArchivePrefix is the archive's top folder and file name without the
// extension: "<project path>-<ref, / as ->-<commit>[-<dir, / as ->]".
func ArchivePrefix(projectPath, ref, commit, dir string) string {
	name := fmt.Sprintf("%s-%s-%s", projectPath, strings.ReplaceAll(ref, "/", "-"), commit)
	if dir != "" {
		name += "-" + strings.ReplaceAll(dir, "/", "-")
	}
	return name
}
