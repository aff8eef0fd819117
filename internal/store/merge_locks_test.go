package store_test

import (
	"context"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// A merge request's lock: taken once from opened; renewed and recorded
// only under its token; ended (merged, or opened again) only under its
// token and, for a recovery, the lease it saw; a merged merge request is
// locked no more.
func TestMergeLocks_compareAndSet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		m := model.MergeRequest{TargetProjectID: p.ID, SourceProjectID: p.ID, SourceBranch: "topic", TargetBranch: "main",
			Title: "t", State: model.MRStateOpened, AuthorID: owner.ID, MergeStatus: model.MergeUnchecked}
		tx := func(fn func(tx *store.Tx) (bool, error)) bool {
			t.Helper()
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = fn(tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok
		}
		tx(func(tx *store.Tx) (bool, error) { return true, tx.CreateMergeRequest(ctx, &m) })
		until := time.Now().Add(time.Minute).Truncate(time.Microsecond).UTC()
		lock := func(token string) bool {
			return tx(func(tx *store.Tx) (bool, error) {
				return tx.LockMergeRequest(ctx, m.ID, model.MergeLock{Token: token, UserID: owner.ID, Until: until})
			})
		}
		if !lock("a") {
			t.Fatal("an open merge request was not locked")
		}
		if lock("b") {
			t.Fatal("a locked merge request was locked again")
		}
		result := &model.MergeResult{Branch: "main", Head: "h", OldTip: "o", NewTip: "n", MergeCommit: "n"}
		later := until.Add(time.Minute)
		if tx(func(tx *store.Tx) (bool, error) { return tx.RenewMergeLock(ctx, m.ID, "b", later, result) }) {
			t.Error("another token renewed the lock")
		}
		if !tx(func(tx *store.Tx) (bool, error) { return tx.RenewMergeLock(ctx, m.ID, "a", later, result) }) {
			t.Fatal("the lock's token did not renew it")
		}
		got, l, err := db.MergeRequestLock(ctx, m.ID)
		if err != nil || got.State != model.MRStateLocked || l.Token != "a" || l.UserID != owner.ID || !l.Until.Equal(later) ||
			l.Result == nil || *l.Result != *result {
			t.Fatalf("lock %+v %+v, %v", l, l.Result, err)
		}
		if list, err := db.LockedMergeRequests(ctx); err != nil || len(list) != 1 || list[0].ID != m.ID || !list[0].Until.Equal(later) {
			t.Errorf("locked merge requests %+v, %v", list, err)
		}
		// A recovery that saw the lease before its renewal loses.
		if tx(func(tx *store.Tx) (bool, error) { return tx.UnlockMergeRequest(ctx, m.ID, "a", &until) }) {
			t.Error("a recovery with a stale lease opened the merge request")
		}
		if !tx(func(tx *store.Tx) (bool, error) { return tx.UnlockMergeRequest(ctx, m.ID, "a", &later) }) {
			t.Fatal("a recovery with the lease opened nothing")
		}
		if got, l, err := db.MergeRequestLock(ctx, m.ID); err != nil || got.State != model.MRStateOpened || l.Token != "" || l.Result != nil {
			t.Fatalf("after unlock: %s %+v, %v", got.State, l, err)
		}
		if !lock("c") {
			t.Fatal("an opened merge request was not locked")
		}
		o := store.MergeOutcome{MergedByID: owner.ID, MergedAt: time.Now(), HeadSHA: "h", MergeCommitSHA: "n", Squash: true}
		if tx(func(tx *store.Tx) (bool, error) { return tx.MarkMerged(ctx, m.ID, "a", nil, o) }) {
			t.Error("an old token merged it")
		}
		if !tx(func(tx *store.Tx) (bool, error) { return tx.MarkMerged(ctx, m.ID, "c", nil, o) }) {
			t.Fatal("the lock's token did not merge it")
		}
		got, err = db.MergeRequest(ctx, p.ID, m.IID)
		if err != nil || got.State != model.MRStateMerged || got.MergedByID != owner.ID || got.MergeCommitSHA != "n" || got.HeadSHA != "h" ||
			!got.Squash || got.MergedAt == nil {
			t.Errorf("merged: %+v, %v", got, err)
		}
		if lock("d") || tx(func(tx *store.Tx) (bool, error) { return tx.UnlockMergeRequest(ctx, m.ID, "c", nil) }) {
			t.Error("a merged merge request was locked or opened")
		}
		if list, err := db.LockedMergeRequests(ctx); err != nil || len(list) != 0 {
			t.Errorf("locked merge requests after the merge: %+v, %v", list, err)
		}
	})
}
