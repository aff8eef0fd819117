package wikis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Version is a commit of the wiki that changed a page.
type Version struct {
	ID                      string
	Title                   string // the commit message's first line
	AuthorName, AuthorEmail string
	When                    time.Time
}

// maxVersionsPerPage bounds a page of a page's history.
const maxVersionsPerPage = 100

// Versions lists the commits that changed a page, newest first, a page
// at a time: the page is found at the wiki's default branch as Get finds
// it (404 when it is not there), and its file's history is listed from
// there.
func (s *Service) Versions(ctx context.Context, a auth.Actor, o model.OwnerRef, slug string, pg model.Page) ([]Version, model.PageInfo, error) {
	if pg.Number < 1 || pg.PerPage < 1 || pg.PerPage > maxVersionsPerPage {
		return nil, model.PageInfo{}, model.BadRequestRaw("page out of range")
	}
	w, err := s.open(ctx, a, o, auth.ReadWiki)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	_, tip, err := s.head(ctx, w.repo)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, err := pages(ctx, w.repo, tip)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	p, ok := find(list, slug)
	if !ok {
		return nil, model.PageInfo{}, errPageNotFound
	}
	ids, err := w.repo.Log(ctx, gitrepo.LogOptions{Rev: string(tip), Path: p.Path, Skip: pg.Offset(), Max: pg.PerPage + 1})
	if err != nil {
		return nil, model.PageInfo{}, fmt.Errorf("wiki page history: %w", err)
	}
	var info model.PageInfo
	if len(ids) > pg.PerPage {
		ids, info.HasMore = ids[:pg.PerPage], true
	}
	out := make([]Version, 0, len(ids))
	for _, id := range ids {
		c, err := w.repo.ReadCommit(ctx, string(id))
		if err != nil {
			return nil, model.PageInfo{}, fmt.Errorf("wiki page history: %w", err)
		}
		out = append(out, versionOf(id, c))
	}
	return out, info, nil
}

func versionOf(id git.ObjectID, c gitrepo.Commit) Version {
	return Version{ID: string(id), Title: c.Title(), AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, When: c.Author.When}
}

// File is a file of the wiki that is no page (an attachment), to stream.
type File struct {
	Name   string // the path's last segment
	Size   int64
	BlobID string
}

// OpenFile opens a file of the wiki at its default branch by its path
// (an attachment's "uploads/<random>/<name>"), for a caller who reads the
// wiki; a path with "." or ".." segments, or naming no file, is 404. The
// reader must be closed.
func (s *Service) OpenFile(ctx context.Context, a auth.Actor, o model.OwnerRef, filePath string) (File, io.ReadCloser, error) {
	w, err := s.open(ctx, a, o, auth.ReadWiki)
	if err != nil {
		return File{}, nil, err
	}
	if !cleanFilePath(filePath) {
		return File{}, nil, errFileNotFound
	}
	_, tip, err := s.head(ctx, w.repo)
	if err != nil {
		return File{}, nil, err
	}
	if tip == "" {
		return File{}, nil, errFileNotFound
	}
	info, err := w.repo.ObjectAt(ctx, tip, filePath)
	if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
		return File{}, nil, errFileNotFound
	}
	if err != nil {
		return File{}, nil, err
	}
	rd, err := w.repo.OpenBlob(ctx, info.OID, info.Size)
	if err != nil {
		return File{}, nil, err
	}
	return File{Name: path.Base(filePath), Size: info.Size, BlobID: string(info.OID)}, rd, nil
}

var errFileNotFound = model.NotFound("File")

// cleanFilePath reports whether p is a relative path of segments that
// are neither empty, "." nor "..".
func cleanFilePath(p string) bool {
	if p == "" || len(p) > 4096 {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
