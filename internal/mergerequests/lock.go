package mergerequests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// A merge locks its merge request (opened → locked, a compare-and-set) so
// that two merges of it, in any process, merge it once. The lock names its
// merge: a token of its own, the merger, and a lease the merge renews while
// it runs. Once its commits are made, and before it moves the target
// branch, the merge records what it is moving the branch to; once the
// branch moved, it marks the merge request merged and emits the branch's
// refs-changed event in one transaction. A merge whose process died leaves
// the lock until its lease runs out; then the recovery task — enqueued in
// the transaction that took the lock, due when the lease ends, and marked
// done by a merge that ends the lock itself — finishes the merge (the
// recorded result, or the source's head, is on the target branch: merged,
// with its event) or undoes it (opened). Every write of the lock is a
// compare-and-set on the token, and the recovery's on the lease it saw
// too: a merge that renewed its lease meanwhile is left alone.
//
// A merge moves the target branch only with moveMargin of its lease left,
// so the recovery, which waits for the lease's end, never judges a merge
// that is still moving the branch; this assumes the clocks of the processes
// sharing a database agree to within a second or so.

const (
	// mergeLease is how long a merge's lock lasts without renewal; a
	// live merge (seconds) renews it every third of it.
	mergeLease = 15 * time.Second
	// moveMargin is how much of its lease a merge must have left to move
	// the target branch.
	moveMargin = 5 * time.Second
	// recoverGrace is how long after a lease's end its recovery looks.
	recoverGrace = 2 * time.Second
	// mergeSource is the source of the refs-changed event of a merge.
	mergeSource = "merge_request"
)

// leaseLost is a merge's lock taken from it (its lease ran out), or too
// close to its end for the merge to move the target branch.
func leaseLost() error { return model.Conflict("409 Conflict: the merge took too long; try again") }

// recoverTask looks at a locked merge request once its lock's lease has
// ended; one is pending per merge request.
var recoverTask = tasks.Define("merge_recovery", tasks.KindOptions[recoverPayload]{MaxAttempts: 8,
	Dedupe: func(p recoverPayload) string { return fmt.Sprint(p.MergeRequestID) }})

type recoverPayload struct {
	MergeRequestID int64 `json:"merge_request_id"`
}

// mergeLock is a merge's hold on its merge request's lock.
type mergeLock struct {
	s        *Service
	id       int64
	token    string
	task     int64 // the recovery enqueued with the lock (0: one was pending)
	renewing sync.Mutex
	mu       sync.Mutex
	until    time.Time // the lease as last written
	stop     func()    // ends the renewals and waits for them
}

// lock takes an open merge request for a merge by userID and renews the
// lock's lease until the lock's stop is called; nil when another merge
// holds it (or it is no longer open). The returned context ends when the
// lock is lost.
func (s *Service) lock(ctx context.Context, id, userID int64) (*mergeLock, context.Context, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, ctx, err
	}
	l := &mergeLock{s: s, id: id, token: hex.EncodeToString(b[:]), until: s.now().Add(mergeLease)}
	var ok bool
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ok, err = tx.LockMergeRequest(ctx, id, model.MergeLock{Token: l.token, UserID: userID, Until: l.until})
		if err != nil || !ok {
			return err
		}
		task, err := recoverTask.Enqueue(ctx, tx, recoverPayload{MergeRequestID: id}, tasks.At(l.until.Add(recoverGrace)))
		l.task = task.ID
		return err
	})
	if err != nil || !ok {
		return nil, ctx, err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(mergeLease / 3)
		defer t.Stop()
		for {
			select {
			case <-mctx.Done():
				return
			case <-t.C:
				held, err := l.renew(mctx, nil)
				if err == nil && !held {
					s.log.Warn("merge lost its lock", "merge_request_id", id)
					cancel()
					return
				}
			}
		}
	}()
	l.stop = func() { cancel(); <-done }
	return l, mctx, nil
}

// renew extends the lease (recording result when not nil); false when the
// lock is no longer this merge's.
func (l *mergeLock) renew(ctx context.Context, result *model.MergeResult) (bool, error) {
	// One renewal at a time, so the lease last written is the one kept.
	l.renewing.Lock()
	defer l.renewing.Unlock()
	until := l.s.now().Add(mergeLease)
	var held bool
	err := l.s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		held, err = tx.RenewMergeLock(ctx, l.id, l.token, until, result)
		return err
	})
	if err == nil && held {
		l.mu.Lock()
		l.until = until
		l.mu.Unlock()
	}
	return held, err
}

// record writes what the merge is about to move the target branch to and
// renews the lease; leaseLost when the lock is gone, or when the write
// took so long that too little of the lease is left to move the branch.
func (l *mergeLock) record(ctx context.Context, r model.MergeResult) error {
	held, err := l.renew(ctx, &r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	until := l.until
	l.mu.Unlock()
	if !held || l.s.now().After(until.Add(-moveMargin)) {
		return leaseLost()
	}
	return nil
}

// finish marks the merge request merged with o and emits e in one
// transaction (its recovery has nothing left to do); false when the lock
// is no longer this merge's.
func (l *mergeLock) finish(ctx context.Context, o store.MergeOutcome, e model.RefsChanged) (bool, error) {
	var ok bool
	err := l.s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if ok, err = tx.MarkMerged(ctx, l.id, l.token, nil, o); err != nil || !ok {
			return err
		}
		if err := tx.AddMergeRequestEvent(ctx, l.id, o.MergedByID, model.EventMerged); err != nil {
			return err
		}
		if err := l.s.events.EmitRefsChanged(ctx, tx, e); err != nil {
			return err
		}
		return l.recovered(ctx, tx)
	})
	return ok && err == nil, err
}

// recovered marks the lock's recovery done inside tx, which ends the lock
// (a lock taken later enqueues its own).
func (l *mergeLock) recovered(ctx context.Context, tx *store.Tx) error {
	if l.task == 0 {
		return nil
	}
	_, err := recoverTask.Done(ctx, tx, l.task) // false: it runs, and finds the lock gone
	return err
}

// unlock opens the merge request again after a merge that failed before
// it moved the target branch.
func (l *mergeLock) unlock(ctx context.Context) {
	var ok bool
	err := l.s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if ok, err = tx.UnlockMergeRequest(ctx, l.id, l.token, nil); err != nil || !ok {
			return err
		}
		return l.recovered(ctx, tx)
	})
	switch {
	case err != nil:
		l.s.log.Error("unlock merge request", "merge_request_id", l.id, "err", err)
	case !ok:
		l.s.log.Warn("unlock merge request: the lock was no longer the merge's", "merge_request_id", l.id)
	}
}

// RecoverMerges makes sure every locked merge request has its recovery
// pending, due when its lock's lease ends (locks taken before leases
// existed, or whose task was lost). Call it on start.
func (s *Service) RecoverMerges(ctx context.Context) error {
	locked, err := s.db.LockedMergeRequests(ctx)
	if err != nil || len(locked) == 0 {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		for _, l := range locked {
			if _, err := recoverTask.Enqueue(ctx, tx, recoverPayload{MergeRequestID: l.ID}, tasks.At(l.Until.Add(recoverGrace))); err != nil {
				return err
			}
		}
		return nil
	})
}

// runRecover looks at a locked merge request: a merge whose lease has not
// ended is alive (look again then); a dead merge is finished when its
// result, or the source's head, is on the target branch, and undone
// otherwise.
func (s *Service) runRecover(ctx context.Context, pl recoverPayload) error {
	m, lock, err := s.db.MergeRequestLock(ctx, pl.MergeRequestID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && m.State != model.MRStateLocked) {
		return nil // removed, or its merge ended
	}
	if err != nil {
		return err
	}
	if now := s.now(); lock.Until.After(now) {
		return s.recoverAt(ctx, pl, lock.Until)
	}
	outcome, moved, merged, err := s.deadMerge(ctx, m, lock)
	if err != nil {
		return err
	}
	until := lock.Until
	var ok bool
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if !merged {
			ok, err = tx.UnlockMergeRequest(ctx, m.ID, lock.Token, &until)
			return err
		}
		if ok, err = tx.MarkMerged(ctx, m.ID, lock.Token, &until, outcome); err != nil || !ok {
			return err
		}
		if err := tx.AddMergeRequestEvent(ctx, m.ID, outcome.MergedByID, model.EventMerged); err != nil || moved == nil {
			return err
		}
		// What follows the target's move follows (again, if the merge
		// emitted it before it died: subscribers tolerate that).
		return s.events.EmitRefsChanged(ctx, tx, model.RefsChanged{ProjectID: m.TargetProjectID, ActorID: lock.UserID,
			Source: mergeSource, At: s.now(), Updates: []model.RefUpdate{*moved}})
	})
	if err != nil {
		return err
	}
	if !ok {
		// The lock changed meanwhile (its merge renewed it, or ended):
		// look again at whatever holds it now.
		s.log.Info("merge recovery lost a race; looking again", "merge_request_id", m.ID)
		return s.recoverAt(ctx, pl, s.now())
	}
	state := model.MRStateOpened
	if merged {
		state = model.MRStateMerged
	}
	s.log.Warn("merge request recovered from a merge that died", "merge_request_id", m.ID, "state", state)
	return nil
}

// recoverAt looks at a merge request again once a lease ending at until
// has ended.
func (s *Service) recoverAt(ctx context.Context, pl recoverPayload, until time.Time) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := recoverTask.Enqueue(ctx, tx, pl, tasks.At(until.Add(recoverGrace)))
		return err
	})
}

// deadMerge decides what a merge that died did: merged when the result it
// recorded is on the target branch (moved says how the branch moved), or
// when the source's head is (merged without a merge commit of its own);
// not merged otherwise.
func (s *Service) deadMerge(ctx context.Context, m model.MergeRequest, lock model.MergeLock) (o store.MergeOutcome, moved *model.RefUpdate, merged bool, err error) {
	p, err := s.db.ProjectByID(ctx, m.TargetProjectID)
	if err != nil {
		return o, nil, false, err
	}
	repo, err := s.repo(p)
	if err != nil {
		return o, nil, false, err
	}
	r := lock.Result
	branch := m.TargetBranch
	if r != nil && r.Branch != "" {
		branch = r.Branch
	}
	tip, err := branchTip(ctx, repo, branch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return o, nil, false, nil
	}
	if err != nil {
		return o, nil, false, err
	}
	onTarget := func(commit string) (bool, error) {
		if commit == "" {
			return false, nil
		}
		if _, ok, err := repo.ResolveCommit(ctx, commit); err != nil || !ok {
			return false, err
		}
		return repo.IsAncestor(ctx, git.ObjectID(commit), tip)
	}
	o = store.MergeOutcome{MergedByID: lock.UserID, MergedAt: s.now(), HeadSHA: m.HeadSHA, Squash: m.Squash}
	if r != nil {
		if ok, err := onTarget(r.NewTip); err != nil || ok {
			o.HeadSHA, o.MergeCommitSHA, o.SquashCommitSHA, o.Squash = r.Head, r.MergeCommit, r.SquashCommit, r.Squash
			return o, &model.RefUpdate{Ref: "refs/heads/" + branch, Old: r.OldTip, New: r.NewTip}, ok, err
		}
		o.HeadSHA = r.Head
	}
	ok, err := onTarget(o.HeadSHA)
	return o, nil, ok, err
}
