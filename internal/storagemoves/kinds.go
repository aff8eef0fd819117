package storagemoves

import (
	"context"
	"errors"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// ProjectResolver finds projects by id or path (the projects service).
type ProjectResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// GroupResolver finds groups by id or path (the groups service).
type GroupResolver interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// ProjectKind is the project container: its repository and its wiki, on
// the project's storage. Records show the project (*model.Project).
func ProjectKind(db *store.DB, projects ProjectResolver) Kind {
	return Kind{
		Name: model.ContainerProject,
		Resolve: func(ctx context.Context, a auth.Actor, ref string) (int64, error) {
			p, _, err := projects.Resolve(ctx, a, ref)
			return p.ID, err
		},
		Repositories: func(ctx context.Context, id int64) ([]string, error) {
			// A project removed meanwhile keeps the path its id gives
			// (what a failed move must discard).
			rel := gitrepo.HashedPath("", id)
			p, err := db.ProjectByID(ctx, id)
			if err != nil && !errors.Is(err, model.ErrNotFound) {
				return nil, err
			}
			if err == nil && p.DiskPath != "" {
				rel = p.DiskPath
			}
			return []string{rel, gitrepo.WikiPath(rel)}, nil
		},
		Load: func(ctx context.Context, ids []int64) (map[int64]any, error) {
			ps, err := db.ProjectsByIDs(ctx, ids)
			out := make(map[int64]any, len(ps))
			for id, p := range ps {
				out[id] = &p
			}
			return out, err
		},
	}
}

// GroupKind is the group container: its wiki, on the group's storage.
// Records show the group (*model.Group).
func GroupKind(db *store.DB, groups GroupResolver) Kind {
	return Kind{
		Name: model.ContainerGroup,
		Resolve: func(ctx context.Context, a auth.Actor, ref string) (int64, error) {
			g, _, err := groups.Resolve(ctx, a, ref)
			return g.ID, err
		},
		Repositories: func(_ context.Context, id int64) ([]string, error) {
			return []string{gitrepo.GroupWikiPath(id)}, nil
		},
		Load: func(ctx context.Context, ids []int64) (map[int64]any, error) {
			out := make(map[int64]any, len(ids))
			for _, id := range ids {
				if _, ok := out[id]; ok {
					continue
				}
				g, err := db.GroupByID(ctx, id)
				if err == nil {
					out[id] = &g
				} else if model.KindOf(err) != model.KindNotFound {
					return nil, err
				}
			}
			return out, nil
		},
	}
}

// SnippetLoader loads snippets for move records (the snippets service).
type SnippetLoader interface {
	MoveViews(ctx context.Context, ids []int64) (map[int64]any, error)
}

// SnippetKind is the snippet container: its repository, on the snippet's
// storage. Records show what loader gives.
func SnippetKind(db *store.DB, loader SnippetLoader) Kind {
	return Kind{
		Name: model.ContainerSnippet,
		Resolve: func(ctx context.Context, _ auth.Actor, ref string) (int64, error) {
			id, err := strconv.ParseInt(ref, 10, 64)
			if err != nil || id <= 0 {
				return 0, model.NotFound("Snippet")
			}
			if _, err := db.SnippetByID(ctx, id); err != nil {
				return 0, model.NotFoundAs(err, "Snippet")
			}
			return id, nil
		},
		Repositories: func(_ context.Context, id int64) ([]string, error) {
			return []string{gitrepo.SnippetPath(id)}, nil
		},
		Load: loader.MoveViews,
	}
}
