package repofiles

import (
	"context"
	"io"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Project is the files of one project as one actor reads them, the
// project already resolved: a web page that asks several questions of a
// repository resolves its project once (the projects service's Resolve)
// and asks them all here, where each method of Service resolves the
// project again. Every method checks, as Service's do, that the actor
// may read the project's code. The first ref a handle looks up is
// pinned to the commit it named: the handle's later questions about that
// ref read the same commit (one page shows one state of a branch that
// moves meanwhile) without asking git again. A handle serves one
// request, from one goroutine.
type Project struct {
	s   *Service
	a   auth.Actor
	p   model.Project
	acc model.AccessLevel
	pin *pinned
}

// In is the files of p for a, where p and acc are what the projects
// service's Resolve answered a for this request (the handle is not kept
// beyond it: a project's settings and the actor's access change).
func (s *Service) In(a auth.Actor, p model.Project, acc model.AccessLevel) Project {
	return Project{s: s, a: a, p: p, acc: acc, pin: &pinned{}}
}

// pinned is the commit a ref named when a handle first looked it up.
type pinned struct {
	ref    string
	commit git.ObjectID
}

// commitID is the commit ref names: the pinned one for the pinned ref
// (or its commit's id), else git's answer, pinned if none is yet. A nil
// pin always asks git.
func (pin *pinned) commitID(ctx context.Context, repo *gitrepo.Repo, ref string) (git.ObjectID, error) {
	if pin != nil && pin.commit != "" && (ref == pin.ref || ref == string(pin.commit)) {
		return pin.commit, nil
	}
	id, err := repo.CommitID(ctx, ref)
	if err == nil {
		pin.set(ref, id)
	}
	return id, err
}

// set pins ref to commit unless a ref is pinned already.
func (pin *pinned) set(ref string, commit git.ObjectID) {
	if pin != nil && pin.commit == "" {
		pin.ref, pin.commit = ref, commit
	}
}

// stat finds the file at filePath on ref, in the opened repository.
func (f Project) stat(ctx context.Context, filePath, ref string) (File, *gitrepo.Repo, error) {
	fp, err := CleanPath(filePath)
	if err != nil {
		return File{}, nil, err
	}
	repo, err := f.s.openReadable(f.a, &f.p, f.acc)
	if err != nil {
		return File{}, nil, err
	}
	return f.s.statIn(ctx, &f.p, repo, f.pin, fp, ref)
}

// Stat is Service.Stat.
func (f Project) Stat(ctx context.Context, filePath, ref string) (File, error) {
	file, _, err := f.stat(ctx, filePath, ref)
	return file, err
}

// Read is Service.Read.
func (f Project) Read(ctx context.Context, filePath, ref string) (File, []byte, error) {
	file, repo, err := f.stat(ctx, filePath, ref)
	if err != nil {
		return file, nil, err
	}
	_, data, err := repo.ReadObject(ctx, file.BlobID)
	return file, data, err
}

// Content is the content of a file Stat described (its blob's bytes).
func (f Project) Content(ctx context.Context, file File) ([]byte, error) {
	repo, err := f.s.openReadable(f.a, &f.p, f.acc)
	if err != nil {
		return nil, err
	}
	_, data, err := repo.ReadObject(ctx, file.BlobID)
	return data, err
}

// ReadUpTo is Service.ReadUpTo.
func (f Project) ReadUpTo(ctx context.Context, filePath, ref string, max int64) (File, []byte, error) {
	file, repo, err := f.stat(ctx, filePath, ref)
	if err != nil || max <= 0 || file.Size > max {
		return file, nil, err
	}
	_, data, err := repo.ReadObject(ctx, file.BlobID)
	return file, data, err
}

// OpenRaw is Service.OpenRaw.
func (f Project) OpenRaw(ctx context.Context, filePath, ref string) (File, io.ReadCloser, error) {
	file, repo, err := f.stat(ctx, filePath, ref)
	if err != nil {
		return file, nil, err
	}
	if err := f.s.allowRaw(ctx, repo, filePath); err != nil {
		return file, nil, err
	}
	rd, err := repo.OpenBlob(ctx, git.ObjectID(file.BlobID), file.Size)
	return file, rd, err
}

// Tree is Service.Tree.
func (f Project) Tree(ctx context.Context, in TreeInput, page model.Page) ([]TreeEntry, model.PageInfo, error) {
	dir := in.Dir
	if dir != "" {
		var err error
		if dir, err = CleanPath(dir); err != nil {
			return nil, model.PageInfo{}, model.Param("path should be a valid file path")
		}
	}
	repo, err := f.s.openReadable(f.a, &f.p, f.acc)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return treeIn(ctx, &f.p, repo, f.pin, dir, in, page)
}

// Commit is Service.Commit.
func (f Project) Commit(ctx context.Context, sha string, withStats bool) (CommitView, error) {
	repo, err := f.s.openReadable(f.a, &f.p, f.acc)
	if err != nil {
		return CommitView{}, err
	}
	if sha == "" || strings.HasPrefix(sha, "-") {
		return CommitView{}, model.NotFound("Commit")
	}
	c, err := f.s.commitView(ctx, f.p, repo, sha, withStats)
	if err == nil {
		f.pin.set(sha, c.ID)
	}
	return c, err
}

// SplitRef is Service.SplitRef.
func (f Project) SplitRef(ctx context.Context, rest string, maxSegments int) (ref, filePath string, c CommitView, err error) {
	segs, err := refSegments(rest)
	if err != nil {
		return "", "", c, err
	}
	repo, err := f.s.openReadable(f.a, &f.p, f.acc)
	if err != nil {
		return "", "", c, err
	}
	return f.s.splitRefIn(ctx, f.p, repo, f.pin, segs, maxSegments)
}
