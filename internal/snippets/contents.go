package snippets

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
)

// Content is one file of a snippet as a page shows it: its path, blob id
// (which names the content for caches), size and content — nil when
// the file is larger than the bound asked for.
type Content struct {
	Path   string
	BlobID string
	Size   int64
	Data   []byte
}

// Contents returns a snippet the caller may read (404 otherwise, as Get)
// with its files at the default branch, each read when it holds at most
// maxBytes.
func (s *Service) Contents(ctx context.Context, a auth.Actor, w Where, id int64, maxBytes int64) (View, []Content, error) {
	f, err := s.find(ctx, a, w, id)
	if err != nil {
		return View{}, nil, err
	}
	v, err := s.view(ctx, f.Snippet, f.project)
	if err != nil || !v.HasRepository {
		return v, nil, err
	}
	repo, err := s.repo(f.Snippet)
	if err != nil {
		return v, nil, err
	}
	_, tip, list, err := files(ctx, repo)
	if err != nil || tip == "" {
		return v, nil, err
	}
	out := make([]Content, 0, len(list))
	for _, p := range list {
		info, err := repo.ObjectAt(ctx, tip, p)
		if errors.Is(err, gitrepo.ErrPathNotFound) {
			continue
		}
		if err != nil {
			return v, nil, fmt.Errorf("snippet file %q: %w", p, err)
		}
		c := Content{Path: p, BlobID: string(info.OID), Size: info.Size}
		if info.Size <= maxBytes {
			_, data, err := repo.ReadObject(ctx, string(info.OID))
			if err != nil {
				return v, nil, fmt.Errorf("snippet file %q: %w", p, err)
			}
			c.Data = data
		}
		out = append(out, c)
	}
	return v, out, nil
}
