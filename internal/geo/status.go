package geo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// walkBatch is how many rows a status walk reads at a time.
const walkBatch = 500

// StatusOf returns a node's status: computed now for the node this
// process is, else the last one the node pushed.
func (s *Service) StatusOf(ctx context.Context, a auth.Actor, id int64) (model.GeoStatus, error) {
	if err := admin(a); err != nil {
		return model.GeoStatus{}, err
	}
	n, err := s.db.GeoNodeByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return model.GeoStatus{}, notFound()
	}
	if err != nil {
		return model.GeoStatus{}, err
	}
	cur, err := s.currentID(ctx)
	if err != nil {
		return model.GeoStatus{}, err
	}
	st, ok, err := s.statusOf(ctx, n, cur)
	if err == nil && !ok {
		err = model.NotFound("Status for Geo node not found")
	}
	return st, err
}

// Statuses returns a page of the statuses there are, by node id: the
// current node's, computed now, and the last one each other node pushed.
func (s *Service) Statuses(ctx context.Context, a auth.Actor, page model.Page) ([]model.GeoStatus, model.PageInfo, error) {
	if err := admin(a); err != nil {
		return nil, model.PageInfo{}, err
	}
	cur, err := s.currentID(ctx)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	nodes, info, err := s.db.ListGeoNodesWithStatus(ctx, cur, page)
	if err != nil {
		return nil, info, err
	}
	out := make([]model.GeoStatus, 0, len(nodes))
	for _, n := range nodes {
		st, ok, err := s.statusOf(ctx, n, cur)
		if err != nil {
			return nil, info, err
		}
		if ok { // a status removed since the page was read is left out
			out = append(out, st)
		}
	}
	return out, info, nil
}

// statusOf is n's status and what the receiving side adds to it; ok is
// false when n is not current and never pushed one.
func (s *Service) statusOf(ctx context.Context, n model.GeoNode, current int64) (model.GeoStatus, bool, error) {
	var st model.GeoStatus
	if n.ID == current {
		var err error
		if st, err = s.localStatus(ctx, n); err != nil {
			return st, false, err
		}
	} else {
		doc, err := s.db.GeoNodeStatus(ctx, n.ID)
		if errors.Is(err, model.ErrNotFound) {
			return st, false, nil
		}
		if err != nil {
			return st, false, err
		}
		if st, err = ParseStatus([]byte(doc.Doc)); err != nil {
			return st, false, fmt.Errorf("stored status of geo node %d: %w", n.ID, err)
		}
		st.UpdatedAt = doc.UpdatedAt
	}
	st.NodeID = n.ID
	st.SelectiveSyncType = n.SelectiveSyncType
	if len(n.SelectiveSyncNamespaceIDs) > 0 {
		byID, err := s.db.NamespacesByIDs(ctx, n.SelectiveSyncNamespaceIDs)
		if err != nil {
			return st, false, err
		}
		for _, id := range n.SelectiveSyncNamespaceIDs {
			if ns, ok := byID[id]; ok {
				st.Namespaces = append(st.Namespaces, ns)
			}
		}
	}
	// GitLab compares a secondary's storages with the primary's; the
	// storages of the process answering stand for the primary's here.
	st.StorageShardsMatch = n.Primary || sameStrings(st.StorageShards, s.storageNames())
	return st, true, nil
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// storageNames are this process's repository storages, sorted.
func (s *Service) storageNames() []string {
	out := make([]string, 0, len(s.cfg.StorageRoots))
	for name := range s.cfg.StorageRoots {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// health checks what this process needs to serve: every repository
// storage a folder it can read. "" when all is well.
func (s *Service) health() string {
	for _, name := range s.storageNames() {
		fi, err := os.Stat(s.cfg.StorageRoots[name])
		if err == nil && !fi.IsDir() {
			err = errors.New("not a folder")
		}
		if err == nil {
			var f *os.File
			if f, err = os.Open(s.cfg.StorageRoots[name]); err == nil {
				f.Close()
			}
		}
		if err != nil {
			return fmt.Sprintf("Repository storage %s is not available: %v", name, err)
		}
	}
	return ""
}

// exists reports whether a repository is on this process's storage.
func (s *Service) exists(storage, rel string) bool {
	r, err := s.storages.Open(storage, rel)
	return err == nil && r.Exists()
}

func projectPath(p store.GeoProject) string {
	if p.DiskPath != "" {
		return p.DiskPath
	}
	return gitrepo.HashedPath("", p.ID)
}

// tally counts one kind of data: how many there are where it is kept, and
// for a secondary how many are here.
type tally struct{ count, present int64 }

func (t tally) set(st *model.GeoStatus, kind string, primary bool) {
	st.SetCounter(kind+"_count", t.count)
	if primary {
		return
	}
	st.SetCounter(kind+"_synced_count", t.present)
	st.SetCounter(kind+"_failed_count", t.count-t.present)
	st.SetCounter(kind+"_registry_count", t.count)
}

// localStatus computes the status of n, the node this process is, from
// the database and this process's disks.
//
// On the primary, a kind counts what is there: projects in the database,
// repositories and wikis on its storages, job artifacts in the database.
// On a secondary, a kind counts what the database says should be there
// (every project's repository, the wikis ever written, every artifact)
// and how much of it is on this process's disks (synced) or not
// (failed). Kinds Quarry does not keep, checksums and verification
// (Quarry keeps neither) stay nil.
func (s *Service) localStatus(ctx context.Context, n model.GeoNode) (model.GeoStatus, error) {
	now := s.db.Now().UTC()
	st := model.GeoStatus{NodeID: n.ID, Health: s.health(), Version: s.cfg.Version, Revision: s.cfg.Revision,
		StorageShards: s.storageNames(), LastSuccessfulStatusCheckAt: now, UpdatedAt: now}
	if st.Health == "" {
		st.Health = model.GeoHealthy
	}
	primary := n.Primary
	projects, err := s.db.CountLiveProjects(ctx)
	if err != nil {
		return st, err
	}
	st.ProjectsCount = &projects
	var repos, wikis, groupWikis, artifacts tally
	for after := int64(0); ; {
		batch, err := s.db.GeoProjects(ctx, after, walkBatch)
		if err != nil {
			return st, err
		}
		for _, p := range batch {
			after = p.ID
			rel := projectPath(p)
			repoHere, wikiHere := s.exists(p.Storage, rel), s.exists(p.Storage, gitrepo.WikiPath(rel))
			if primary {
				repos.count += b2i(repoHere)
				wikis.count += b2i(wikiHere)
				continue
			}
			repos.count++
			repos.present += b2i(repoHere)
			if p.HasWiki {
				wikis.count++
				wikis.present += b2i(wikiHere)
			}
		}
		if len(batch) < walkBatch {
			break
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	for after := int64(0); ; {
		batch, err := s.db.GeoGroups(ctx, after, walkBatch)
		if err != nil {
			return st, err
		}
		for _, g := range batch {
			after = g.ID
			here := s.exists(g.Storage, gitrepo.GroupWikiPath(g.ID))
			if primary {
				groupWikis.count += b2i(here)
			} else if g.HasWiki {
				groupWikis.count++
				groupWikis.present += b2i(here)
			}
		}
		if len(batch) < walkBatch {
			break
		}
	}
	if primary {
		if artifacts.count, err = s.db.CountJobArtifacts(ctx); err != nil {
			return st, err
		}
	} else {
		for after := int64(0); ; {
			batch, err := s.db.GeoArtifacts(ctx, after, walkBatch)
			if err != nil {
				return st, err
			}
			for _, a := range batch {
				after = a.ID
				artifacts.count++
				artifacts.present += b2i(s.files.HasArtifact(a.Path))
			}
			if len(batch) < walkBatch {
				break
			}
		}
	}
	repos.set(&st, "repositories", primary)
	wikis.set(&st, "wikis", primary)
	groupWikis.set(&st, "group_wiki_repositories", primary)
	artifacts.set(&st, "job_artifacts", primary)
	if primary {
		count, used, wal, ok, err := s.db.ReplicationSlots(ctx)
		if err != nil {
			return st, fmt.Errorf("replication slots: %w", err)
		}
		if ok {
			st.ReplicationSlotsCount, st.ReplicationSlotsUsedCount, st.ReplicationSlotsMaxRetainedWALBytes = &count, &used, &wal
		}
	} else {
		lag, ok, err := s.db.ReplicationLag(ctx)
		if err != nil {
			return st, fmt.Errorf("replication lag: %w", err)
		}
		if ok {
			st.DBReplicationLagSeconds = &lag
		}
	}
	return st, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
