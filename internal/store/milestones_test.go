package store_test

import (
	"context"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestMilestones_store: iids count per project and per group; an import
// keeps its iids and moves the counter past them; a group's milestones
// are listed for its export; titles are unique per parent on both engines
// (the index named alike); a stale update writes nothing; milestones go
// with their group and project.
func TestMilestones_store(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		p := storetest.NewProject(t, db, owner, storetest.InGroup(g))
		write := func(f func(tx *store.Tx) error) error { return db.InTx(ctx, f) }
		create := func(m model.Milestone) model.Milestone {
			t.Helper()
			m.State = model.MilestoneActive
			if err := write(func(tx *store.Tx) error { return tx.CreateMilestone(ctx, &m) }); err != nil {
				t.Fatal(err)
			}
			return m
		}
		g1 := create(model.Milestone{GroupID: g.ID, Title: "a"})
		p1 := create(model.Milestone{ProjectID: p.ID, Title: "a"})
		if g1.IID != 1 || p1.IID != 1 {
			t.Fatalf("iids %d, %d", g1.IID, p1.IID)
		}
		imp := model.Milestone{GroupID: g.ID, IID: 7, Title: "imported", State: model.MilestoneClosed, DueDate: "2030-01-02"}
		if err := write(func(tx *store.Tx) error { return tx.ImportMilestone(ctx, &imp) }); err != nil {
			t.Fatal(err)
		}
		low := model.Milestone{GroupID: g.ID, IID: 3, Title: "imported low", State: model.MilestoneActive}
		if err := write(func(tx *store.Tx) error { return tx.ImportMilestone(ctx, &low) }); err != nil {
			t.Fatal(err)
		}
		if g2 := create(model.Milestone{GroupID: g.ID, Title: "b"}); g2.IID != 8 {
			t.Fatalf("iid after import %d; want 8", g2.IID)
		}
		list, err := db.GroupMilestones(ctx, g.ID, 0, 100)
		if err != nil || len(list) != 4 || list[1].IID != 7 || list[1].DueDate != "2030-01-02" || list[1].State != model.MilestoneClosed ||
			list[0].ParentPath != g.FullPath {
			t.Fatalf("group milestones %+v, %v", list, err)
		}
		got, err := db.MilestoneByID(ctx, p1.ID)
		if err != nil || got.ParentPath != p.FullPath() || got.Description != nil {
			t.Fatalf("project milestone %+v, %v", got, err)
		}

		dup := model.Milestone{ProjectID: p.ID, Title: "a", State: model.MilestoneActive}
		err = write(func(tx *store.Tx) error { return tx.CreateMilestone(ctx, &dup) })
		if !store.IsUnique(err, store.UniqueMilestoneProjectTitle) {
			t.Fatalf("duplicate project title: %v", err)
		}
		dup = model.Milestone{GroupID: g.ID, Title: "a", State: model.MilestoneActive}
		err = write(func(tx *store.Tx) error { return tx.CreateMilestone(ctx, &dup) })
		if !store.IsUnique(err, store.UniqueMilestoneGroupTitle) {
			t.Fatalf("duplicate group title: %v", err)
		}

		stale := got
		d := "new"
		got.Description = &d
		update := func(m *model.Milestone) (ok bool, err error) {
			err = write(func(tx *store.Tx) error { ok, err = tx.UpdateMilestone(ctx, m); return err })
			return ok, err
		}
		if ok, err := update(&got); !ok || err != nil {
			t.Fatalf("update: %v, %v", ok, err)
		}
		if ok, err := update(&stale); ok || err != nil {
			t.Fatalf("stale update: %v, %v", ok, err)
		}

		if err := write(func(tx *store.Tx) error { return tx.DeleteProject(ctx, &p) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.MilestoneByID(ctx, p1.ID); err != model.ErrNotFound {
			t.Fatalf("project milestone after the project: %v", err)
		}
		if err := write(func(tx *store.Tx) error { return tx.DeleteNamespaceTree(ctx, g.Traversal) }); err != nil {
			t.Fatal(err)
		}
		if list, err := db.GroupMilestones(ctx, g.ID, 0, 100); err != nil || len(list) != 0 {
			t.Fatalf("group milestones after the group: %v, %v", list, err)
		}
	})
}
