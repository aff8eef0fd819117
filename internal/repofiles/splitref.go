package repofiles

import (
	"context"
	"errors"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// SplitRef splits "<ref>/<path>" — a web page's address, where branch
// and tag names may hold slashes — at the longest ref of at most
// maxSegments segments that names a commit, as GitLab's ExtractsRef
// does, and returns that commit. The project is resolved and its
// repository opened once, whatever the number of candidates; each is
// then one read of the warm cat-file process. A rest naming no commit is
// 404 Commit Not Found.
func (s *Service) SplitRef(ctx context.Context, a auth.Actor, projectRef, rest string, maxSegments int) (ref, filePath string, c CommitView, err error) {
	segs, err := refSegments(rest)
	if err != nil {
		return "", "", c, err
	}
	p, _, repo, err := s.readable(ctx, a, projectRef)
	if err != nil {
		return "", "", c, err
	}
	return s.splitRefIn(ctx, p, repo, nil, segs, maxSegments)
}

// splitRefIn is SplitRef in an opened repository, of rest's segments
// (checked).
func (s *Service) splitRefIn(ctx context.Context, p model.Project, repo *gitrepo.Repo, pin *pinned, segs []string, maxSegments int) (ref, filePath string, c CommitView, err error) {
	for n := min(len(segs), maxSegments); n >= 1; n-- {
		cand := strings.Join(segs[:n], "/")
		c, err = s.commitView(ctx, p, repo, cand, false)
		if err == nil {
			pin.set(cand, c.ID)
			return cand, strings.Join(segs[n:], "/"), c, nil
		}
		if me := (*model.Error)(nil); !errors.As(err, &me) || me.Kind != model.KindNotFound {
			return "", "", c, err
		}
	}
	return "", "", CommitView{}, model.NotFound("Commit")
}

// refSegments splits a page's "<ref>/<path>" at its slashes; one that
// cannot start with a ref is 404 Commit Not Found.
func refSegments(rest string) ([]string, error) {
	segs := strings.Split(rest, "/")
	if rest == "" || segs[0] == "" || strings.HasPrefix(rest, "-") {
		return nil, model.NotFound("Commit")
	}
	return segs, nil
}
