package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// Offset pages read behind the scenes as keyset pages (their start
// resolved from the index) hold exactly what OFFSET would: every page of
// every order, with ties on the sort key, on both databases; the total is
// right whether it was counted or told by the last page.
func TestList_offsetPagesAsKeyset(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		root := storetest.NewUser(t, db)
		base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		// 17 users whose names and creation times repeat (ties broken by
		// id), plus root.
		for i := 0; i < 17; i++ {
			u := newUser(fmt.Sprintf("lo%02d", i), base.Add(time.Duration(i%4)*time.Second))
			u.Name = fmt.Sprintf("Name %d", i%5)
			if err := create(t, db, &u); err != nil {
				t.Fatal(err)
			}
		}
		// 13 projects created at four instants.
		for i := 0; i < 13; i++ {
			storetest.NewProject(t, db, root, func(p *model.Project) {
				p.CreatedAt = base.Add(time.Duration(i%4) * time.Minute)
				p.Name = fmt.Sprintf("P %d %02d", i%3, i)
			})
		}
		check := func(name string, all []int64, pages func(page model.Page) ([]int64, model.PageInfo, error)) {
			t.Helper()
			for _, per := range []int{1, 2, 3, 5, 7, 50} {
				var got []int64
				for n := 1; n <= len(all)/per+2; n++ {
					ids, info, err := pages(model.Page{Number: n, PerPage: per})
					if err != nil {
						t.Fatalf("%s per %d page %d: %v", name, per, n, err)
					}
					if !info.TotalKnown || info.Total != len(all) {
						t.Errorf("%s per %d page %d: total %d (known %v); want %d", name, per, n, info.Total, info.TotalKnown, len(all))
					}
					want := min(max(len(all)-(n-1)*per, 0), per)
					if len(ids) != want || info.HasMore != ((n-1)*per+len(ids) < len(all)) {
						t.Errorf("%s per %d page %d: %d items, more %v; want %d", name, per, n, len(ids), info.HasMore, want)
					}
					got = append(got, ids...)
				}
				if fmt.Sprint(got) != fmt.Sprint(all) {
					t.Errorf("%s per %d: pages %v; want %v", name, per, got, all)
				}
			}
		}
		for _, ord := range []struct {
			by   string
			desc bool
		}{{"id", false}, {"id", true}, {"name", false}, {"name", true}, {"created_at", true}, {"username", false}} {
			users := func(page model.Page) ([]int64, model.PageInfo, error) {
				us, info, err := db.ListUsers(ctx, model.UserFilter{OrderBy: ord.by, Desc: ord.desc}, page)
				ids := make([]int64, len(us))
				for i, u := range us {
					ids[i] = u.ID
				}
				return ids, info, err
			}
			all, _, err := users(model.Page{Number: 1, PerPage: 100})
			if err != nil || len(all) != 18 {
				t.Fatalf("all users: %d, %v", len(all), err)
			}
			check(fmt.Sprintf("users by %s desc %v", ord.by, ord.desc), all, users)
		}
		for _, ord := range []struct {
			by   string
			desc bool
		}{{"", true}, {"created_at", false}, {"name", true}, {"id", false}} {
			projects := func(page model.Page) ([]int64, model.PageInfo, error) {
				ps, info, err := db.ListProjects(ctx, store.ProjectFilter{Viewer: store.Viewer{Admin: true}, OrderBy: ord.by, Desc: ord.desc}, page)
				ids := make([]int64, len(ps))
				for i, p := range ps {
					ids[i] = p.ID
				}
				return ids, info, err
			}
			all, _, err := projects(model.Page{Number: 1, PerPage: 100})
			if err != nil || len(all) != 13 {
				t.Fatalf("all projects: %d, %v", len(all), err)
			}
			check(fmt.Sprintf("projects by %q desc %v", ord.by, ord.desc), all, projects)
		}
	})
}

// TestList_offsetStartsFollowWrites: where an offset page starts is
// remembered (SQLite) only until the next write this process commits:
// a page read again after a project was added or removed before its
// start holds what OFFSET would, and a repeated read costs no statement
// for its start.
func TestList_offsetStartsFollowWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		root := storetest.NewUser(t, db)
		var ids []int64
		var second model.Project
		for i := 0; i < 9; i++ {
			p := storetest.NewProject(t, db, root)
			if i == 1 {
				second = p
			}
			ids = append(ids, p.ID)
		}
		f := store.ProjectFilter{Viewer: store.Viewer{Admin: true}, OrderBy: "id"}
		page3 := func() ([]int64, int64) {
			t.Helper()
			cctx, n := store.CountQueries(ctx)
			ps, _, err := db.ListProjects(cctx, f, model.Page{Number: 3, PerPage: 2})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(ps))
			for i, p := range ps {
				got[i] = p.ID
			}
			return got, n.N()
		}
		want := func(all []int64) string { return fmt.Sprint(all[4:6]) }
		got, first := page3()
		if fmt.Sprint(got) != want(ids) {
			t.Fatalf("page 3: %v; want %s", got, want(ids))
		}
		got, again := page3()
		if fmt.Sprint(got) != want(ids) {
			t.Fatalf("page 3 again: %v; want %s", got, want(ids))
		}
		if target.DatabaseURL == "" && again != first-1 {
			t.Errorf("statements: %d for page 3, %d read again; want one fewer (its start remembered)", first, again)
		}
		// The second project goes: page 3 starts one project later.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &second) }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids[:1], ids[2:]...)
		if got, _ := page3(); fmt.Sprint(got) != want(ids) {
			t.Errorf("page 3 after a removal: %v; want %s", got, want(ids))
		}
	})
}
