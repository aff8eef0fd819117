package store_test

import (
	"context"
	"errors"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestJobTokenScope_allowed: a project admits its own jobs; with the
// inbound limit off (it is on by default) every project's; with it on,
// the projects of its allowlist and the projects anywhere under a group
// of its groups allowlist — not a sibling group's, nor a group's whose id
// merely starts the same digits.
func TestJobTokenScope_allowed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		top := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, owner, storetest.Parent(top))
		deep := storetest.NewGroup(t, db, owner, storetest.Parent(sub))
		sibling := storetest.NewGroup(t, db, owner, storetest.Parent(top))
		guarded := storetest.NewProject(t, db, owner)
		listed := storetest.NewProject(t, db, owner)
		inDeep := storetest.NewProject(t, db, owner, storetest.InGroup(deep))
		inSibling := storetest.NewProject(t, db, owner, storetest.InGroup(sibling))
		inTop := storetest.NewProject(t, db, owner, storetest.InGroup(top))
		stranger := storetest.NewProject(t, db, owner)

		allowed := func(source model.Project) bool {
			t.Helper()
			ok, err := db.JobTokenAllowed(ctx, source.ID, guarded.ID)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		inTx := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := db.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		if on, err := db.JobTokenInboundEnabled(ctx, guarded.ID); err != nil || !on {
			t.Fatalf("inbound of a new project %v, %v; want on", on, err)
		}
		if !allowed(guarded) || allowed(stranger) || allowed(listed) {
			t.Fatalf("by default: self %v, stranger %v, listed %v; want only self", allowed(guarded), allowed(stranger), allowed(listed))
		}
		inTx(func(tx *store.Tx) error { return tx.SetJobTokenInbound(ctx, guarded.ID, false) })
		if on, err := db.JobTokenInboundEnabled(ctx, guarded.ID); err != nil || on || !allowed(stranger) {
			t.Fatalf("inbound off: %v, %v, stranger %v", on, err, allowed(stranger))
		}
		inTx(func(tx *store.Tx) error { return tx.SetJobTokenInbound(ctx, guarded.ID, true) })
		if on, err := db.JobTokenInboundEnabled(ctx, guarded.ID); err != nil || !on || allowed(stranger) {
			t.Fatalf("inbound on again: %v, %v, stranger %v", on, err, allowed(stranger))
		}

		inTx(func(tx *store.Tx) error {
			return tx.CreateJobTokenProjectLink(ctx, &store.JobTokenProjectLink{SourceProjectID: guarded.ID, TargetProjectID: listed.ID, AddedByID: owner.ID})
		})
		inTx(func(tx *store.Tx) error {
			return tx.CreateJobTokenGroupLink(ctx, &store.JobTokenGroupLink{SourceProjectID: guarded.ID, TargetGroupID: sub.ID, AddedByID: owner.ID})
		})
		if !allowed(listed) || !allowed(inDeep) || allowed(inSibling) || allowed(inTop) || allowed(stranger) {
			t.Fatalf("listed %v, under the group %v, sibling %v, above %v, stranger %v; want the first two",
				allowed(listed), allowed(inDeep), allowed(inSibling), allowed(inTop), allowed(stranger))
		}
		// The allowlist admits into the project, not out of it.
		if ok, err := db.JobTokenAllowed(ctx, guarded.ID, listed.ID); err != nil || ok {
			t.Fatalf("the reverse direction: %v, %v; want refused", ok, err)
		}

		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CreateJobTokenProjectLink(ctx, &store.JobTokenProjectLink{SourceProjectID: guarded.ID, TargetProjectID: listed.ID})
		})
		if !store.IsJobTokenProjectLinked(err) {
			t.Fatalf("second project link: %v; want the unique index", err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CreateJobTokenGroupLink(ctx, &store.JobTokenGroupLink{SourceProjectID: guarded.ID, TargetGroupID: sub.ID})
		})
		if !store.IsJobTokenGroupLinked(err) {
			t.Fatalf("second group link: %v; want the unique index", err)
		}

		// Removing a group takes it off the allowlist; removing a link
		// twice finds nothing the second time.
		inTx(func(tx *store.Tx) error {
			if err := tx.DeleteProject(ctx, &inDeep); err != nil {
				return err
			}
			return tx.DeleteNamespaceTree(ctx, deep.Traversal)
		})
		if n, err := db.JobTokenGroupLinks(ctx, guarded.ID); err != nil || n != 1 {
			t.Fatalf("group links after removing a subgroup: %d, %v; want 1", n, err)
		}
		inTx(func(tx *store.Tx) error {
			if err := tx.DeleteProject(ctx, &inSibling); err != nil {
				return err
			}
			if err := tx.DeleteProject(ctx, &inTop); err != nil {
				return err
			}
			return tx.DeleteNamespaceTree(ctx, top.Traversal)
		})
		if n, err := db.JobTokenGroupLinks(ctx, guarded.ID); err != nil || n != 0 {
			t.Fatalf("group links after removing the group: %d, %v; want 0", n, err)
		}
		inTx(func(tx *store.Tx) error { return tx.DeleteJobTokenProjectLink(ctx, guarded.ID, listed.ID) })
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteJobTokenProjectLink(ctx, guarded.ID, listed.ID) })
		if !errors.Is(err, model.ErrNotFound) || allowed(listed) {
			t.Fatalf("second unlink: %v; allowed %v", err, allowed(listed))
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteJobTokenGroupLink(ctx, guarded.ID, sub.ID) })
		if !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("unlinking a removed group: %v; want not found", err)
		}
	})
}

// TestJobTokenScope_lists: the allowlist shows the project itself first,
// then the projects added, in the order added, paged by offset or
// keyset; a removed project leaves it; the groups allowlist lists its
// groups in the order added.
func TestJobTokenScope_lists(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		src := storetest.NewProject(t, db, owner)
		var added []model.Project
		for range 3 {
			added = append(added, storetest.NewProject(t, db, owner))
		}
		// Added in reverse order of creation: the list follows the links.
		for i := len(added) - 1; i >= 0; i-- {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				return tx.CreateJobTokenProjectLink(ctx, &store.JobTokenProjectLink{SourceProjectID: src.ID, TargetProjectID: added[i].ID})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		want := []int64{src.ID, added[2].ID, added[1].ID, added[0].ID}
		var got []int64
		for n := 1; n <= 3; n++ {
			page, info, err := db.JobTokenProjects(ctx, src.ID, model.Page{Number: n, PerPage: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !info.TotalKnown || info.Total != 4 || info.HasMore != (n == 1) {
				t.Fatalf("page %d info %+v", n, info)
			}
			for _, p := range page {
				if p.Namespace.ID == 0 {
					t.Fatalf("project %d without namespace", p.ID)
				}
				got = append(got, p.ID)
			}
		}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Fatalf("offset pages %v; want %v", got, want)
		}
		got = nil
		page := model.Page{Number: 1, PerPage: 1, Keyset: true}
		for range 10 {
			list, info, err := db.JobTokenProjects(ctx, src.ID, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range list {
				got = append(got, p.ID)
			}
			if info.NextCursor == "" {
				break
			}
			page.Cursor = info.NextCursor
		}
		if len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
			t.Fatalf("keyset pages %v; want %v", got, want)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &added[1]) })
		if err != nil {
			t.Fatal(err)
		}
		if n, err := db.JobTokenProjectLinks(ctx, src.ID); err != nil || n != 2 {
			t.Fatalf("links after removing a target: %d, %v; want 2", n, err)
		}

		g1, g2 := storetest.NewGroup(t, db, owner), storetest.NewGroup(t, db, owner)
		for _, g := range []model.Group{g2, g1} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				return tx.CreateJobTokenGroupLink(ctx, &store.JobTokenGroupLink{SourceProjectID: src.ID, TargetGroupID: g.ID, AddedByID: owner.ID})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		groups, info, err := db.JobTokenGroups(ctx, src.ID, model.Page{Number: 1, PerPage: 20})
		if err != nil || info.Total != 2 || len(groups) != 2 || groups[0].Group.ID != g2.ID || groups[1].Group.ID != g1.ID ||
			groups[0].Group.FullPath != g2.FullPath || groups[0].AddedByID != owner.ID {
			t.Fatalf("groups allowlist %+v %+v %v", groups, info, err)
		}
		if ok, err := db.JobTokenGroupLinked(ctx, src.ID, g1.ID); err != nil || !ok {
			t.Fatalf("g1 linked: %v, %v", ok, err)
		}
		if ok, err := db.JobTokenProjectLinked(ctx, src.ID, added[0].ID); err != nil || !ok {
			t.Fatalf("project linked: %v, %v", ok, err)
		}
	})
}
