// Package groupexport exports groups to archives in GitLab's group export
// format and imports such archives (GitLab's own, from 15.x on, and
// Quarry's) into new groups: a group with its subgroups, each with its
// milestones, badges, labels, boards and members, and its wiki.
//
// Both run as durable tasks. An export writes the archive streaming to
// disk, one relation at a time; a group has one export, which a new one
// replaces and which expires. An import checks the whole archive while
// it is uploaded and unpacked — before anything is created — then creates
// the group at once and fills it in a task, one group per transaction
// with its progress, so an import cut short by a crash resumes where it
// stopped.
package groupexport

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/groups"
	"quarry/internal/model"
	"quarry/internal/ratelimit"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Config is the service's setup.
type Config struct {
	// DataDir is the data directory: exports are kept under
	// group_exports/, imports unpacked under tmp/group_imports/ (a
	// directory every process sharing the database shares).
	DataDir string
	// ExportTTL is how long a finished export stays downloadable
	// (default 24 hours).
	ExportTTL time.Duration
	// Version and Revision are written to GITLAB_VERSION and
	// GITLAB_REVISION.
	Version, Revision string
	// DefaultBranch is a restored wiki's HEAD when its bundle names none.
	DefaultBranch string
}

// Settings gives the instance's current settings (limits and rates).
type Settings interface {
	Current(ctx context.Context) (model.ApplicationSettings, error)
}

// Service exports and imports groups.
type Service struct {
	db       *store.DB
	groups   *groups.Service
	storages *gitrepo.Storages
	settings Settings
	log      *slog.Logger
	cfg      Config
	// Per-user (and per user and group) rates, per minute, of GitLab's
	// group_export_limit, group_download_export_limit and
	// group_import_limit.
	exports, downloads, imports *ratelimit.Limiter
}

// New builds the service and registers its tasks on queue.
func New(db *store.DB, grp *groups.Service, storages *gitrepo.Storages, settings Settings, queue *tasks.Queue, log *slog.Logger, cfg Config) *Service {
	if cfg.ExportTTL <= 0 {
		cfg.ExportTTL = 24 * time.Hour
	}
	if cfg.DefaultBranch == "" {
		cfg.DefaultBranch = "main"
	}
	s := &Service{db: db, groups: grp, storages: storages, settings: settings, log: log, cfg: cfg,
		exports: ratelimit.New(0, time.Minute), downloads: ratelimit.New(0, time.Minute), imports: ratelimit.New(0, time.Minute)}
	tasks.Handle(queue, exportTask, s.runExport, s.exportFailed)
	tasks.Handle(queue, expireTask, s.runExpire, nil)
	tasks.Handle(queue, importTask, s.runImport, s.importFailed)
	grp.OnRemoved(s.groupRemoved)
	return s
}

// path is a data-directory-relative path on disk.
func (s *Service) path(rel string) string {
	return filepath.Join(s.cfg.DataDir, filepath.FromSlash(rel))
}

// owned resolves a group the actor administers (GitLab's admin_group):
// 404 when they do not see it, 403 when they see it only.
func (s *Service) owned(ctx context.Context, a auth.Actor, ref string) (model.Group, error) {
	g, acc, err := s.groups.Resolve(ctx, a, ref)
	if err != nil {
		return g, err
	}
	if !auth.Can(a, auth.AdminGroup, auth.Resource{Group: &g, Access: acc}) {
		return g, model.Forbidden("")
	}
	return g, nil
}

// allow counts one request of a rate whose per-minute limit is max;
// past it, GitLab's 429.
func allow(l *ratelimit.Limiter, key string, max int64) error {
	if !l.AllowMax(key, int(min(max, 1<<31-1))) {
		return model.TooManyRequests("endpoint")
	}
	return nil
}

// groupRemoved forgets a removed group's export and its archive.
func (s *Service) groupRemoved(ctx context.Context, groupID int64) error {
	var gone model.GroupExport
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.GroupExport(ctx, groupID)
		if err != nil {
			return err
		}
		gone = e
		_, err = tx.DeleteGroupExport(ctx, groupID, 0)
		return err
	})
	if err != nil {
		return ignoreNotFound(err)
	}
	s.removeFile(gone.FilePath)
	return nil
}

// removeFile removes a data-directory-relative file ("" for none),
// logging a failure (a leftover costs disk, not correctness).
func (s *Service) removeFile(rel string) {
	if rel == "" {
		return
	}
	if err := os.Remove(s.path(rel)); err != nil && !os.IsNotExist(err) {
		s.log.Warn("remove group export file", "path", rel, "error", err)
	}
}

func ignoreNotFound(err error) error {
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// staleAfter is the age past which an unpacked upload no import holds is
// a leftover (of a process killed while an upload arrived).
const staleAfter = 24 * time.Hour

// SweepStaged removes unpacked uploads no import holds, older than a
// day, and export work folders as old: what processes killed mid-upload
// or mid-export left. Work in progress is younger, or held.
func (s *Service) SweepStaged(ctx context.Context) error {
	for _, parent := range []string{"tmp/group_imports", "tmp/group_exports"} {
		entries, err := os.ReadDir(s.path(parent))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < staleAfter {
				continue
			}
			rel := parent + "/" + e.Name()
			held, err := s.db.GroupImportDirInUse(ctx, rel)
			if err != nil {
				return err
			}
			if !held {
				if err := os.RemoveAll(s.path(rel)); err != nil {
					s.log.Warn("remove stale group import or export files", "path", rel, "error", err)
				}
			}
		}
	}
	return nil
}
