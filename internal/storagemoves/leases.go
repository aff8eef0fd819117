package storagemoves

import (
	"context"
	"sync"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// A write to a container's repositories — a push, an API commit, a branch
// made or removed, a merge, a wiki page — runs under a write lease: a row
// taken in one transaction with the check that the container is not
// read-only (store.AcquireWriteLease), renewed every third of LeaseTTL
// while the write lasts and removed when it ends. A move makes the
// container read-only first, then waits until no lease is live: every
// write either began before (and is waited for) or is refused. A process
// that dies mid-write leaves its lease to expire.

// BeginWrite registers a write to the repositories of container id of
// kind: it answers model.ErrRepositoryReadOnly while a storage move holds
// them, and otherwise the storage they are on now — where the write must
// go, whatever the caller read before — and end, which the caller must
// call once the write is over (also when it failed).
func (s *Service) BeginWrite(ctx context.Context, kind model.ContainerKind, id int64) (storage string, end func(), err error) {
	var lease int64
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		lease, storage, err = tx.AcquireWriteLease(ctx, kind, id, s.holder, tx.Now().Add(s.cfg.LeaseTTL))
		return err
	})
	if err != nil {
		return storage, func() {}, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.renew(lease, stop)
	}()
	var once sync.Once
	end = func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.db.InTx(rctx, func(tx *store.Tx) error { return tx.ReleaseWriteLease(rctx, lease) }); err != nil {
				// It expires by itself.
				s.log.Warn("release a repository write lease", "lease", lease, "err", err)
			}
		})
	}
	return storage, end, nil
}

// renew keeps a lease alive until stop is closed.
func (s *Service) renew(lease int64, stop <-chan struct{}) {
	t := time.NewTicker(s.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.LeaseTTL/3)
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.RenewWriteLease(ctx, lease, tx.Now().Add(s.cfg.LeaseTTL))
				if err == nil && !ok {
					s.log.Warn("a repository write lease was gone when renewed", "lease", lease)
				}
				return err
			})
			cancel()
			if err != nil {
				s.log.Warn("renew a repository write lease", "lease", lease, "err", err)
			}
		}
	}
}
