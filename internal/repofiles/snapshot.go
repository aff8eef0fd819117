package repofiles

import (
	"context"
	"errors"
	"io"
	"syscall"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// SnapshotName is the file name GitLab gives a repository snapshot.
const SnapshotName = "snapshot.tar"

// Snapshot is a project repository's consistent copy on its way to the
// client; Close must be called.
type Snapshot struct {
	snap    *gitrepo.Snapshot
	project int64
	s       *Service
}

// Snapshot opens a copy of the project's repository (of its wiki's with
// wiki) for GET /projects/:id/snapshot. In GitLab's order: only
// administrators may take one (403, checked before the parameters, whose
// problems paramErr carries), then the project must exist (404 Project
// Not Found) and so must the repository (404 Repository Not Found: a
// project without a wiki has no wiki repository).
func (s *Service) Snapshot(ctx context.Context, a auth.Actor, projectRef string, wiki bool, paramErr error) (*Snapshot, error) {
	if !a.SignedIn() {
		return nil, model.Unauthorized("")
	}
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return nil, model.Forbidden("")
	}
	if paramErr != nil {
		return nil, paramErr
	}
	p, _, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return nil, err
	}
	rel := p.DiskPath
	if wiki {
		// A wiki lives beside its project's repository.
		rel = gitrepo.WikiPath(rel)
	}
	repo, err := s.storages.Open(p.RepositoryStorage, rel)
	if err != nil {
		return nil, err
	}
	snap, err := repo.OpenSnapshot(ctx)
	if errors.Is(err, gitrepo.ErrNoRepository) {
		return nil, model.NotFound("Repository")
	}
	if err != nil {
		return nil, err
	}
	return &Snapshot{snap: snap, project: p.ID, s: s}, nil
}

// WriteTo streams the snapshot as an uncompressed tar. A failure other
// than the client going away is logged; either way the tar is incomplete
// and the caller must not end it as if it were whole.
func (sn *Snapshot) WriteTo(ctx context.Context, w io.Writer) error {
	err := sn.snap.WriteTar(ctx, w)
	if err != nil && ctx.Err() == nil && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		sn.s.log.Error("repository snapshot failed", "project_id", sn.project, "err", err)
	}
	return err
}

// Close releases the files the snapshot holds open.
func (sn *Snapshot) Close() error { return sn.snap.Close() }
