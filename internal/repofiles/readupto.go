package repofiles

import (
	"context"

	"quarry/internal/auth"
)

// ReadUpTo is Read for a page that shows a file of at most max bytes:
// the file's metadata and, when it is no larger than max, its content
// (else nil: a larger file, or any file when max ≤ 0, is described
// only). One resolution of the project and one look-up of the file, where
// Stat then Read make two of each.
func (s *Service) ReadUpTo(ctx context.Context, a auth.Actor, projectRef, filePath, ref string, max int64) (File, []byte, error) {
	f, repo, err := s.stat(ctx, a, projectRef, filePath, ref)
	if err != nil || max <= 0 || f.Size > max {
		return f, nil, err
	}
	_, data, err := repo.ReadObject(ctx, f.BlobID)
	return f, data, err
}
