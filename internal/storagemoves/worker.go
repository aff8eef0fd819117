package storagemoves

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

type movePayload struct {
	MoveID int64 `json:"move_id"`
}

type bulkPayload struct {
	Kind        model.ContainerKind `json:"kind"`
	Source      string              `json:"source"`
	Destination string              `json:"destination,omitempty"`
	After       int64               `json:"after,omitempty"`
}

var (
	// moveTask runs one move; a task taken over after a crash finds the
	// move where the crash left it and starts its copy over.
	moveTask = tasks.Define("repository_storage_move", tasks.KindOptions[movePayload]{MaxAttempts: 5})
	// cleanupTask removes a replicated move's source copies.
	cleanupTask = tasks.Define("repository_storage_move_cleanup", tasks.KindOptions[movePayload]{MaxAttempts: 5})
	// bulkTask schedules the moves of one batch of a bulk move and
	// enqueues the next batch.
	bulkTask = tasks.Define("repository_storage_move_bulk", tasks.KindOptions[bulkPayload]{MaxAttempts: 10})
)

// bulkBatch is how many containers one bulk task looks at, at most.
const bulkBatch = 100

// bulkPause is how long a bulk move waits when its window is full.
const bulkPause = time.Second

// inTx runs fn in a transaction and reports what it says.
func (s *Service) inTx(ctx context.Context, fn func(tx *store.Tx) (bool, error)) (bool, error) {
	var ok bool
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ok, err = fn(tx)
		return err
	})
	return ok, err
}

// runMove runs one move: from scheduled (or started, when a crash cut an
// earlier run short: its copies are made again) to replicated, or to
// failed. Moves in any other state have nothing left for this task.
func (s *Service) runMove(ctx context.Context, p movePayload) error {
	m, err := s.db.StorageMove(ctx, p.MoveID)
	if errors.Is(err, model.ErrNotFound) {
		return nil // its container was removed meanwhile
	}
	if err != nil {
		return err
	}
	k, err := s.kind(m.Kind)
	if err != nil {
		return tasks.Permanent{Err: err}
	}
	log := s.log.With("move_id", m.ID, "kind", m.Kind, "container_id", m.ContainerID, "source", m.SourceStorageName,
		"destination", m.DestinationStorageName)
	switch m.State {
	case model.MoveScheduled:
		moved, err := s.inTx(ctx, func(tx *store.Tx) (bool, error) { return tx.MoveStorageMove(ctx, &m, model.MoveStart, "") })
		if err != nil {
			return err
		}
		if !moved {
			log.Warn("storage move changed by another writer before it started")
			return nil
		}
		log.Info("storage move started")
	case model.MoveStarted:
		log.Info("storage move starts over after an interruption")
	default:
		return nil
	}
	if err := s.replicate(ctx, k, m); err != nil {
		if ctx.Err() != nil {
			// Shutting down, or our claim on the task ran out: the next
			// run starts the copy over; nothing is recorded here.
			return ctx.Err()
		}
		log.Warn("storage move failed", "err", err)
		return s.fail(ctx, k, &m, err.Error())
	}
	lost := false
	_, err = s.inTx(ctx, func(tx *store.Tx) (bool, error) {
		moved, err := tx.MoveStorageMove(ctx, &m, model.MoveFinishReplication, "")
		if err != nil || !moved {
			lost = true
			return false, err
		}
		switched, err := tx.SwitchContainerStorage(ctx, m.Kind, m.ContainerID, m.SourceStorageName, m.DestinationStorageName)
		if err != nil {
			return false, err
		}
		if !switched {
			return false, errNotHeld
		}
		_, err = cleanupTask.Enqueue(ctx, tx, movePayload{MoveID: m.ID}, tasks.After(s.cfg.CleanupDelay))
		return true, err
	})
	switch {
	case errors.Is(err, errNotHeld):
		// The container is no longer held on the source (nothing should
		// do that): the move fails, and its copies go.
		m.State = model.MoveStarted
		log.Error("storage move found its container changed", "err", err)
		return s.fail(ctx, k, &m, err.Error())
	case err != nil:
		return err
	case lost:
		// Another writer decided first (a failure recorded by a run we
		// took over from): the copies on the destination are not the
		// container's, unless it is there.
		log.Warn("storage move changed by another writer while it copied; its copies are discarded")
		s.discardCopies(context.WithoutCancel(ctx), k, m)
		return nil
	}
	log.Info("storage move replicated")
	return nil
}

// errNotHeld is a container found neither read-only nor on the source
// when its move switches it.
var errNotHeld = errors.New("the container is no longer held read-only on the source storage")

// replicate waits for the writes in flight and copies the container's
// repositories to the destination.
func (s *Service) replicate(ctx context.Context, k *Kind, m model.RepositoryStorageMove) error {
	storage, readOnly, err := s.db.ContainerStorage(ctx, m.Kind, m.ContainerID)
	if err != nil {
		return fmt.Errorf("read the %s: %w", m.Kind, err)
	}
	if storage != m.SourceStorageName || !readOnly {
		return fmt.Errorf("the %s is not held read-only on storage %s", m.Kind, m.SourceStorageName)
	}
	if err := s.waitForWrites(ctx, m); err != nil {
		return err
	}
	if s.storages.SameRoot(m.SourceStorageName, m.DestinationStorageName) {
		return nil // the same folder: nothing to copy
	}
	if err := s.storages.Usable(m.DestinationStorageName); err != nil {
		return err
	}
	return s.eachRepository(ctx, k, m, func(rel string, src, dst *gitrepo.Repo) error {
		// A run cut short left its copy aside: start over.
		if err := dst.RemoveMoveLeftovers(); err != nil {
			return fmt.Errorf("remove an interrupted copy: %w", err)
		}
		if err := src.ReplicateTo(ctx, dst); err != nil {
			return fmt.Errorf("copy %s to %s: %w", rel, m.DestinationStorageName, err)
		}
		return nil
	})
}

// eachRepository calls fn with each repository of the move's container,
// as it is on the source and on the destination, until one fails.
func (s *Service) eachRepository(ctx context.Context, k *Kind, m model.RepositoryStorageMove, fn func(rel string, src, dst *gitrepo.Repo) error) error {
	rels, err := k.Repositories(ctx, m.ContainerID)
	if err != nil {
		return err
	}
	for _, rel := range rels {
		src, err := s.storages.Open(m.SourceStorageName, rel)
		if err != nil {
			return err
		}
		dst, err := s.storages.Open(m.DestinationStorageName, rel)
		if err != nil {
			return err
		}
		if err := fn(rel, src, dst); err != nil {
			return err
		}
	}
	return nil
}

// waitForWrites waits until no write lease of the container is live, at
// most WriteWait.
func (s *Service) waitForWrites(ctx context.Context, m model.RepositoryStorageMove) error {
	poll := min(time.Second, max(50*time.Millisecond, s.cfg.WriteWait/100))
	deadline := time.Now().Add(s.cfg.WriteWait)
	for {
		var live int
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			live, err = tx.LiveWriteLeases(ctx, m.Kind, m.ContainerID, tx.Now())
			return err
		})
		if err != nil {
			return err
		}
		if live == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return pushesTimeout{m.Kind}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// pushesTimeout is a move that waited for writes in flight too long; its
// text is GitLab's error_message.
type pushesTimeout struct{ kind model.ContainerKind }

func (e pushesTimeout) Error() string {
	return "Timeout waiting for " + string(e.kind) + " repository pushes"
}

// fail records a move's failure (failed, or cleanup failed once
// replicated) with its reason and, when the move held its container,
// makes the container writable again on its source; the destination's
// copies are removed.
func (s *Service) fail(ctx context.Context, k *Kind, m *model.RepositoryStorageMove, reason string) error {
	holding := m.State.Holding()
	moved, err := s.inTx(ctx, func(tx *store.Tx) (bool, error) {
		moved, err := tx.MoveStorageMove(ctx, m, model.MoveFail, reason)
		if err != nil || !moved {
			return false, err
		}
		if holding {
			if _, err := tx.SetContainerReadOnly(ctx, m.Kind, m.ContainerID, false); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if moved && holding {
		s.discardCopies(context.WithoutCancel(ctx), k, *m)
	}
	return nil
}

// discardCopies removes what a move put on its destination, unless the
// container is there now (or the destination is the source's folder).
func (s *Service) discardCopies(ctx context.Context, k *Kind, m model.RepositoryStorageMove) {
	if s.storages.SameRoot(m.SourceStorageName, m.DestinationStorageName) {
		return
	}
	storage, _, err := s.db.ContainerStorage(ctx, m.Kind, m.ContainerID)
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		s.log.Error("storage move: read the container before discarding copies", "move_id", m.ID, "err", err)
		return
	}
	if err == nil && storage == m.DestinationStorageName {
		return
	}
	rels, err := k.Repositories(ctx, m.ContainerID)
	if err != nil {
		if !errors.Is(err, model.ErrNotFound) {
			s.log.Error("storage move: list repositories to discard", "move_id", m.ID, "err", err)
		}
		return
	}
	for _, rel := range rels {
		dst, err := s.storages.Open(m.DestinationStorageName, rel)
		if err != nil {
			continue
		}
		if err := errors.Join(dst.RemoveMoveLeftovers(), dst.Remove()); err != nil {
			s.log.Warn("storage move: discard a copy", "move_id", m.ID, "path", rel, "err", err)
		}
	}
}

// moveFailed records a move whose task failed for good (errors of the
// database, say) as failed, the container writable again.
func (s *Service) moveFailed(ctx context.Context, p movePayload, cause error) {
	m, err := s.db.StorageMove(ctx, p.MoveID)
	if err != nil || !m.State.Holding() {
		return
	}
	k, err := s.kind(m.Kind)
	if err != nil {
		return
	}
	if err := s.fail(ctx, k, &m, cause.Error()); err != nil {
		s.log.Error("storage move: record a failure", "move_id", m.ID, "err", err)
	}
}

// runCleanup removes the source copies of a replicated move and finishes
// it; a failure to remove them is "cleanup failed", the move itself
// having succeeded.
func (s *Service) runCleanup(ctx context.Context, p movePayload) error {
	m, err := s.db.StorageMove(ctx, p.MoveID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.State != model.MoveReplicated {
		return nil
	}
	k, err := s.kind(m.Kind)
	if err != nil {
		return tasks.Permanent{Err: err}
	}
	var cleanupErr error
	storage, _, err := s.db.ContainerStorage(ctx, m.Kind, m.ContainerID)
	switch {
	case errors.Is(err, model.ErrNotFound):
	case err != nil:
		return err
	case s.storages.SameRoot(m.SourceStorageName, m.DestinationStorageName):
	case storage == m.SourceStorageName:
		// Moved back meanwhile: the source copy is the container's.
	default:
		cleanupErr = s.removeSource(ctx, k, m)
	}
	if cleanupErr != nil {
		s.log.Warn("storage move cleanup failed", "move_id", m.ID, "err", cleanupErr)
		_, err := s.inTx(ctx, func(tx *store.Tx) (bool, error) {
			return tx.MoveStorageMove(ctx, &m, model.MoveFail, "cleanup: "+cleanupErr.Error())
		})
		return err
	}
	_, err = s.inTx(ctx, func(tx *store.Tx) (bool, error) { return tx.MoveStorageMove(ctx, &m, model.MoveFinishCleanup, "") })
	return err
}

// carriedRefs are the refs Quarry writes itself without a write lease
// (in a pipeline's transaction, after a push): one that reached the source
// after the copy is carried to the destination before the source goes.
var carriedRefs = []string{"refs/pipelines/", "refs/merge-requests/"}

// removeSource removes the container's repositories from the source,
// after carrying over the refs of carriedRefs the destination lacks.
func (s *Service) removeSource(ctx context.Context, k *Kind, m model.RepositoryStorageMove) error {
	return s.eachRepository(ctx, k, m, func(rel string, src, dst *gitrepo.Repo) error {
		if n, err := src.CarryRefs(ctx, dst, carriedRefs...); err != nil {
			return err
		} else if n > 0 {
			s.log.Info("storage move carried refs written after the copy", "move_id", m.ID, "path", rel, "refs", n)
		}
		if err := src.Remove(); err != nil {
			return fmt.Errorf("remove %s from %s: %w", rel, m.SourceStorageName, err)
		}
		return nil
	})
}

// runBulk schedules the moves of the next batch of a bulk move —
// containers on the source after p.After, by id — and enqueues the next
// batch in the same transaction; with BulkWindow moves of the kind
// holding their containers already, it looks again a little later.
// Containers read-only already (moving) are passed over.
func (s *Service) runBulk(ctx context.Context, p bulkPayload) error {
	held, err := s.db.CountHoldingStorageMoves(ctx, p.Kind)
	if err != nil {
		return err
	}
	room := min(bulkBatch, s.cfg.BulkWindow-held)
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if room <= 0 {
			_, err := bulkTask.Enqueue(ctx, tx, p, tasks.After(bulkPause))
			return err
		}
		ids, err := tx.ContainersOnStorage(ctx, p.Kind, p.Source, p.After, room)
		if err != nil {
			return err
		}
		for _, id := range ids {
			_, err := s.ScheduleInTx(ctx, tx, p.Kind, id, p.Source, p.Destination)
			if model.KindOf(err) == model.KindInvalid {
				s.log.Info("bulk storage move passes a container over", "kind", p.Kind, "container_id", id, "err", err)
				continue
			}
			if err != nil {
				return err
			}
		}
		if len(ids) < room {
			return nil // the last batch
		}
		next := p
		next.After = ids[len(ids)-1]
		_, err = bulkTask.Enqueue(ctx, tx, next)
		return err
	})
}
