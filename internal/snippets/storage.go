package snippets

import (
	"context"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// StorageMoves place new snippet repositories and lease writes to them
// (the storage moves service).
type StorageMoves interface {
	PickStorage(ctx context.Context) (string, error)
	BeginWrite(ctx context.Context, kind model.ContainerKind, id int64) (storage string, end func(), err error)
}

// SetStorageMoves gives the service the storage moves (before use):
// without them new snippets go to the default storage and only the row's
// read-only flag guards writes.
func (s *Service) SetStorageMoves(m StorageMoves) { s.moves = m }

// newStorage is the storage a new snippet's repository goes on: the
// weighted pick of the storage moves, else "default".
func (s *Service) newStorage(ctx context.Context) (string, error) {
	if s.moves == nil {
		return "default", nil
	}
	return s.moves.PickStorage(ctx)
}

// beginWrite registers a write to sn's repository: refused with
// model.ErrRepositoryReadOnly while a storage move holds it, else sn's
// storage is set to where the repository is now (whatever sn was read
// with) and end must be called once the write is over. Not inside a
// transaction.
func (s *Service) beginWrite(ctx context.Context, sn *model.Snippet) (end func(), err error) {
	if s.moves == nil {
		if sn.RepositoryReadOnly {
			return nil, model.ErrRepositoryReadOnly
		}
		return func() {}, nil
	}
	storage, end, err := s.moves.BeginWrite(ctx, model.ContainerSnippet, sn.ID)
	if err != nil {
		return nil, model.NotFoundAs(err, "Snippet")
	}
	sn.RepositoryStorage = storage
	return end, nil
}

// BeginPush registers a push to a snippet's repository (refused with
// model.ErrRepositoryReadOnly while a storage move holds it) and says
// where the repository is now.
func (s *Service) BeginPush(ctx context.Context, snippetID int64) (root string, end func(), err error) {
	sn := model.Snippet{ID: snippetID}
	if s.moves == nil {
		if sn, err = s.db.SnippetByID(ctx, snippetID); err != nil {
			return "", nil, model.NotFoundAs(err, "Snippet")
		}
	}
	if end, err = s.beginWrite(ctx, &sn); err != nil {
		return "", nil, err
	}
	repo, err := s.storages.Open(sn.RepositoryStorage, gitrepo.SnippetPath(sn.ID))
	if err != nil {
		end()
		return "", nil, err
	}
	return repo.Root(), end, nil
}

// MoveViews loads the snippets a list of storage moves shows, by id, as
// *View without files (the records show the snippet's attributes and
// URLs); a snippet that is gone is left out.
func (s *Service) MoveViews(ctx context.Context, ids []int64) (map[int64]any, error) {
	out := make(map[int64]any, len(ids))
	projects := map[int64]*model.Project{}
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		sn, err := s.db.SnippetByID(ctx, id)
		if model.KindOf(err) == model.KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		v := &View{Snippet: sn, HasRepository: true}
		if sn.ProjectID != 0 {
			p, ok := projects[sn.ProjectID]
			if !ok {
				pr, err := s.db.ProjectByID(ctx, sn.ProjectID)
				if err != nil && model.KindOf(err) != model.KindNotFound {
					return nil, err
				}
				if err == nil {
					p = &pr
				}
				projects[sn.ProjectID] = p
			}
			if p == nil {
				continue // its project is being removed
			}
			v.Project = p
		}
		out[id] = v
	}
	return out, nil
}

// BeginHousekeeping opens a snippet's repository for its housekeeping
// under a write lease (refused while a storage move holds it); end must
// be called once it is over. model.ErrNotFound when the snippet is gone.
func (s *Service) BeginHousekeeping(ctx context.Context, snippetID int64) (repo *gitrepo.Repo, end func(), err error) {
	sn, err := s.db.SnippetByID(ctx, snippetID)
	if err != nil {
		return nil, nil, err
	}
	if end, err = s.beginWrite(ctx, &sn); err != nil {
		return nil, nil, err
	}
	if repo, err = s.repo(sn); err != nil {
		end()
		return nil, nil, err
	}
	return repo, end, nil
}

// Housekeeping counts writes to snippet repositories (the housekeeping
// service).
type Housekeeping interface {
	CountSnippetWrite(ctx context.Context, snippetID int64) error
}

// SetHousekeeping gives the service the write counter (before use).
func (s *Service) SetHousekeeping(h Housekeeping) { s.housekeeping = h }

// countWrite counts a write to sn's repository; a failure is logged, the
// write stands.
func (s *Service) countWrite(ctx context.Context, snippetID int64) {
	if s.housekeeping == nil {
		return
	}
	if err := s.housekeeping.CountSnippetWrite(context.WithoutCancel(ctx), snippetID); err != nil {
		s.log.Warn("count snippet write", "snippet_id", snippetID, "err", err)
	}
}
