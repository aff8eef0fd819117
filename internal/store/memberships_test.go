package store_test

import (
	"context"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// A user's memberships are their direct ones, oldest first, of both kinds
// or one; a membership that ended is not among them, a pending one is.
func TestListMemberships_directUnexpired(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		day := time.Now().UTC()
		today := day.Format(model.DateLayout)
		owner, u := storetest.NewUser(t, db), storetest.NewUser(t, db)
		top := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, owner, storetest.Parent(top))
		p := storetest.NewProject(t, db, owner, storetest.InGroup(sub))
		q := storetest.NewProject(t, db, owner)
		gone := storetest.NewGroup(t, db, owner)
		storetest.AddMember(t, db, top, u, model.Reporter)
		storetest.AddMember(t, db, p, u, model.Developer, storetest.ExpiresAt(day.AddDate(0, 0, 1).Format(model.DateLayout)))
		storetest.AddMember(t, db, gone, u, model.Maintainer, storetest.ExpiresAt(today))
		m := storetest.AddMember(t, db, q, u, model.Guest)
		m.Pending = true
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateMember(ctx, &m) }); err != nil {
			t.Fatal(err)
		}

		all, info, err := db.ListMemberships(ctx, u.ID, "", today, model.Page{Number: 1, PerPage: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 || !info.TotalKnown || info.Total != 3 {
			t.Fatalf("memberships %+v, %+v", all, info)
		}
		want := []store.Membership{
			{SourceID: top.ID, SourceType: model.SourceNamespace, SourceName: top.Name, AccessLevel: model.Reporter},
			{SourceID: p.ID, SourceType: model.SourceProject, SourceName: p.Name, AccessLevel: model.Developer},
			{SourceID: q.ID, SourceType: model.SourceProject, SourceName: q.Name, AccessLevel: model.Guest},
		}
		for i := range want {
			got := all[i]
			got.ID = 0
			if got != want[i] {
				t.Errorf("membership %d: %+v; want %+v", i, got, want[i])
			}
		}
		projects, _, err := db.ListMemberships(ctx, u.ID, model.SourceProject, today, model.Page{Number: 2, PerPage: 1})
		if err != nil || len(projects) != 1 || projects[0].SourceID != q.ID {
			t.Errorf("second page of projects %+v, %v", projects, err)
		}
		// The next day the project membership has ended too.
		later, _, err := db.ListMemberships(ctx, u.ID, "", day.AddDate(0, 0, 1).Format(model.DateLayout), model.Page{Number: 1, PerPage: 20})
		if err != nil || len(later) != 2 {
			t.Errorf("memberships the next day %+v, %v", later, err)
		}
	})
}
