package snippets

import (
	"context"
	"errors"
	"io"
	"path"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// File is one file of a snippet, to stream: its name (the path's last
// segment) and size.
type File struct {
	Name string
	Size int64
}

var (
	errFileNotFound = model.NotFound("File")
	errRefNotFound  = model.NotFound("Reference")
)

// readable resolves a snippet the caller reads and opens its repository;
// missing is the error when the repository is not there.
func (s *Service) readable(ctx context.Context, a auth.Actor, w Where, id int64, missing error) (*gitrepo.Repo, error) {
	f, err := s.find(ctx, a, w, id)
	if err != nil {
		return nil, err
	}
	repo, err := s.repo(f.Snippet)
	if err == nil && !repo.Exists() {
		err = missing
	}
	return repo, err
}

// Raw opens the snippet's first file at its default branch; the reader
// must be closed.
func (s *Service) Raw(ctx context.Context, a auth.Actor, w Where, id int64) (File, io.ReadCloser, error) {
	repo, err := s.readable(ctx, a, w, id, errFileNotFound)
	if err != nil {
		return File{}, nil, err
	}
	_, tip, list, err := files(ctx, repo)
	if err != nil {
		return File{}, nil, err
	}
	if len(list) == 0 {
		return File{}, nil, errFileNotFound
	}
	return open(ctx, repo, tip, list[0])
}

// RawFile opens the file at filePath of the snippet at ref (a branch,
// tag or commit of its repository); the reader must be closed.
func (s *Service) RawFile(ctx context.Context, a auth.Actor, w Where, id int64, ref, filePath string) (File, io.ReadCloser, error) {
	repo, err := s.readable(ctx, a, w, id, errSnippetNotFound)
	if err != nil {
		return File{}, nil, err
	}
	commit, err := repo.CommitID(ctx, ref)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return File{}, nil, errRefNotFound
	}
	if err != nil {
		return File{}, nil, err
	}
	if !ValidPath(filePath) {
		return File{}, nil, errFileNotFound
	}
	return open(ctx, repo, commit, filePath)
}

// open streams the blob at p in commit.
func open(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID, p string) (File, io.ReadCloser, error) {
	info, err := repo.ObjectAt(ctx, commit, p)
	if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
		return File{}, nil, errFileNotFound
	}
	if err != nil {
		return File{}, nil, err
	}
	rd, err := repo.OpenBlob(ctx, info.OID, info.Size)
	if err != nil {
		return File{}, nil, err
	}
	return File{Name: path.Base(p), Size: info.Size}, rd, nil
}
