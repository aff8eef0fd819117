package geo

import (
	"context"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Failure is a project whose repository or wiki this secondary lacks
// (GitLab's failed project registry): the failure of each, "" for none.
type Failure struct {
	ProjectID  int64
	Repository string
	Wiki       string
}

// The failure of a repository or wiki missing on this node.
const (
	MissingRepository = "Repository is not on this node's storage"
	MissingWiki       = "Wiki is not on this node's storage"
)

// The failure types GitLab lists.
const (
	FailureSync             = "sync"
	FailureVerification     = "verification"
	FailureChecksumMismatch = "checksum_mismatch"
)

// Failures lists, on a secondary, the projects whose repository or wiki
// (kind "repository" or "wiki"; "" for either) is not on this node's
// storage, by project id. Quarry verifies no checksums, so the
// verification and checksum_mismatch types list nothing. A primary has no
// failures to list (403); a process named for a node not registered
// knows no node (404).
func (s *Service) Failures(ctx context.Context, a auth.Actor, kind, failureType string, page model.Page) ([]Failure, model.PageInfo, error) {
	if err := admin(a); err != nil {
		return nil, model.PageInfo{}, err
	}
	onlySecondary := model.Forbidden("Failures can only be requested from a secondary node")
	if s.cfg.NodeName == "" {
		return nil, model.PageInfo{}, onlySecondary // this process is the primary
	}
	n, ok, err := s.currentNode(ctx)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	if !ok {
		return nil, model.PageInfo{}, model.NotFound("Geo node not found")
	}
	if n.Primary {
		return nil, model.PageInfo{}, onlySecondary
	}
	switch failureType {
	case FailureSync:
	case FailureVerification, FailureChecksumMismatch:
		out, info := model.PageOf([]Failure{}, page)
		return out, info, nil
	default:
		return nil, model.PageInfo{}, model.NotFound("Failure type unknown")
	}
	var all []Failure
	for after := int64(0); ; {
		batch, err := s.db.GeoProjects(ctx, after, walkBatch)
		if err != nil {
			return nil, model.PageInfo{}, err
		}
		for _, p := range batch {
			after = p.ID
			rel := projectPath(p)
			f := Failure{ProjectID: p.ID}
			if kind != "wiki" && !s.exists(p.Storage, rel) {
				f.Repository = MissingRepository
			}
			if kind != "repository" && p.HasWiki && !s.exists(p.Storage, gitrepo.WikiPath(rel)) {
				f.Wiki = MissingWiki
			}
			if f.Repository != "" || f.Wiki != "" {
				all = append(all, f)
			}
		}
		if len(batch) < walkBatch {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, model.PageInfo{}, err
		}
	}
	out, info := model.PageOf(all, page)
	return out, info, nil
}
