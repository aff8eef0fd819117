package store_test

import (
	"context"
	"errors"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestLabels_removedWithOwners: removing a project removes its labels and
// its priorities of its group's labels; removing the group tree removes
// the group's labels; a title is unique per owner (a conflict), not
// across owners. GroupLabels and LabelPriorities are what an export of
// the group reads.
func TestLabels_removedWithOwners(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		p := storetest.NewProject(t, db, owner, storetest.InGroup(g))
		gl := model.Label{Title: "same", Color: "#fff", GroupID: g.ID}
		pl := model.Label{Title: "same", Color: "#000", ProjectID: p.ID}
		prio := 4
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.CreateLabel(ctx, &gl); err != nil {
				return err
			}
			if err := tx.CreateLabel(ctx, &pl); err != nil {
				return err
			}
			if _, err := tx.SetLabelSubscription(ctx, gl.ID, owner.ID, true); err != nil {
				return err
			}
			return tx.SetLabelPriority(ctx, p.ID, gl.ID, &prio)
		})
		if err != nil {
			t.Fatal(err)
		}
		dup := model.Label{Title: "same", Color: "#fff", GroupID: g.ID}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateLabel(ctx, &dup) }); !errors.Is(err, model.ErrConflict) {
			t.Fatalf("duplicate title: %v; want a conflict", err)
		}
		if list, err := db.GroupLabels(ctx, g.ID, 0, 100); err != nil || len(list) != 1 || list[0].ID != gl.ID {
			t.Fatalf("group labels %+v %v", list, err)
		}
		if got, err := db.LabelPriorities(ctx, p.ID, []int64{gl.ID, pl.ID}); err != nil || len(got) != 1 || got[gl.ID] != 4 {
			t.Fatalf("priorities %v %v", got, err)
		}

		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &p) }); err != nil {
			t.Fatal(err)
		}
		gone := func(o store.LabelOwners, id int64) {
			t.Helper()
			if _, err := db.FindLabel(ctx, o, id, ""); !errors.Is(err, model.ErrNotFound) {
				t.Fatalf("label %d: %v; want it gone", id, err)
			}
		}
		gone(store.LabelOwners{ProjectID: p.ID}, pl.ID)
		if got, err := db.LabelPriorities(ctx, p.ID, []int64{gl.ID}); err != nil || len(got) != 0 {
			t.Fatalf("priorities after the project's removal %v %v", got, err)
		}
		if _, err := db.FindLabel(ctx, store.LabelOwners{GroupIDs: []int64{g.ID}}, gl.ID, ""); err != nil {
			t.Fatalf("the group's label went with the project: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteNamespaceTree(ctx, g.Traversal) }); err != nil {
			t.Fatal(err)
		}
		gone(store.LabelOwners{GroupIDs: []int64{g.ID}}, gl.ID)
		if got, err := db.LabelSubscriptions(ctx, owner.ID, []int64{gl.ID}); err != nil || len(got) != 0 {
			t.Fatalf("subscriptions after the group's removal %v %v", got, err)
		}
	})
}
