package wikis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// Messages git prints when a wiki clone or push is refused.
const (
	msgDownload = "You are not allowed to download files from this wiki."
	msgWrite    = "You are not allowed to write to this project's wiki."
)

// GitAccess authorizes a clone (or, with push, a push) of the wiki of the
// project or group at fullPath — the clone URL's path without ".wiki.git"
// — and returns where its repository lives, creating it on first use.
// The errors: model.ErrNotFound when the caller sees no such project or
// group, a model Forbidden carrying the message git should print when
// the caller may not read (or push to) the wiki.
func (s *Service) GitAccess(ctx context.Context, a auth.Actor, fullPath string, push bool) (root, rel string, err error) {
	w, err := s.resolvePath(ctx, a, fullPath)
	if err != nil {
		return "", "", err
	}
	if !auth.Can(a, auth.DownloadWiki, w.resource()) {
		return "", "", model.ForbiddenRaw(msgDownload)
	}
	if push && !auth.Can(a, auth.CreateWiki, w.resource()) {
		return "", "", model.ForbiddenRaw(msgWrite)
	}
	if push && ((w.project != nil && w.project.RepositoryReadOnly) || (w.group != nil && w.group.RepositoryReadOnly)) {
		return "", "", model.ForbiddenRaw(model.RepositoryReadOnlyMessage)
	}
	if err := s.ensure(ctx, w.repo); err != nil {
		return "", "", err
	}
	return w.repo.Root(), w.repo.Rel, nil
}

// resolvePath finds the project, or else the group, at fullPath that the
// caller may see. fullPath is a path, never an id: "12.wiki.git" is the
// wiki of the group whose path is "12", not of the project or group with
// id 12, so the owner is looked up by path and resolved by its id.
func (s *Service) resolvePath(ctx context.Context, a auth.Actor, fullPath string) (*wiki, error) {
	p, g, err := s.ownerAt(ctx, fullPath)
	if err != nil {
		return nil, err
	}
	w := &wiki{}
	if p != nil {
		pr, acc, err := s.projects.Resolve(ctx, a, strconv.FormatInt(p.ID, 10))
		if err != nil {
			return nil, err
		}
		w.project, w.access = &pr, acc
	} else {
		gr, acc, err := s.groups.Resolve(ctx, a, strconv.FormatInt(g.ID, 10))
		if err != nil {
			return nil, err
		}
		w.group, w.access = &gr, acc
	}
	if w.repo, err = s.repoOf(w.project, w.group); err != nil {
		return nil, err
	}
	return w, nil
}

// ownerAt finds the project, or else the group, whose full path is
// fullPath, whoever asks (a model not-found error when there is none).
func (s *Service) ownerAt(ctx context.Context, fullPath string) (*model.Project, *model.Group, error) {
	p, err := s.db.ProjectByFullPath(ctx, fullPath)
	if err == nil {
		return &p, nil, nil
	}
	if !errors.Is(err, model.ErrNotFound) {
		return nil, nil, err
	}
	g, err := s.db.GroupByFullPath(ctx, fullPath)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil, model.NotFound("Group")
	}
	if err != nil {
		return nil, nil, err
	}
	return nil, &g, nil
}

// BeginPush registers a push to the wiki of the project or group at
// fullPath (refused with model.ErrRepositoryReadOnly while a storage move
// holds it) and returns the root of the storage the wiki is on now; end
// ends the push's lease.
func (s *Service) BeginPush(ctx context.Context, fullPath string) (root string, end func(), err error) {
	p, g, err := s.ownerAt(ctx, fullPath)
	if err != nil {
		return "", nil, err
	}
	w := &wiki{project: p, group: g}
	if end, err = s.lease(ctx, w); err != nil {
		return "", nil, err
	}
	return w.repo.Root(), end, nil
}

// Pushed follows a push into the wiki of the project or group at
// fullPath: its refresh (size, housekeeping) is scheduled, and a wiki
// whose default branch was never written takes the first branch pushed
// as its default.
func (s *Service) Pushed(ctx context.Context, fullPath string, branches []string) error {
	p, g, err := s.ownerAt(ctx, fullPath)
	if err != nil {
		return err
	}
	repo, err := s.repoOf(p, g)
	if err != nil {
		return err
	}
	head, err := repo.HeadBranch(ctx)
	if err != nil {
		return fmt.Errorf("wiki head: %w", err)
	}
	if tip, err := repo.BranchTip(ctx, head); err == nil && tip == "" {
		for _, b := range branches {
			if t, err := repo.BranchTip(ctx, b); err == nil && t != "" {
				if err := repo.SetHeadBranch(ctx, b); err != nil {
					return err
				}
				break
			}
		}
	}
	return s.scheduleRefresh(ctx, p, g)
}
