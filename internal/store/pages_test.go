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

// TestPages_rememberedUntilCommit: on SQLite a page of a project list's
// heads and of a merge request list is read once and then answered from
// memory (no statement) until this process commits a write, after which
// it is read again with the write in it; each reader has its own slice.
// On PostgreSQL (several processes share it) every read reads.
func TestPages_rememberedUntilCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner, reader := storetest.NewUser(t, db), storetest.NewUser(t, db)
		a, b := storetest.NewProject(t, db, owner), storetest.NewProject(t, db, owner)
		storetest.AddMember(t, db, a, reader, model.Developer)
		remembered := target.DatabaseURL == ""
		today := time.Now().UTC().Format(model.DateLayout)
		f := store.ProjectFilter{Viewer: store.Viewer{UserID: reader.ID, Today: today}, Membership: true, OrderBy: "id"}
		heads := func() (string, int64) {
			t.Helper()
			cctx, n := store.CountQueries(ctx)
			hs, info, err := db.ListProjectHeads(cctx, f, model.Page{Number: 1, PerPage: 20}, reader.ID, today)
			if err != nil {
				t.Fatal(err)
			}
			s := fmt.Sprint(info.Total)
			for i := range hs {
				s += fmt.Sprintf(" %d:%d", hs[i].ID, hs[i].Access)
				hs[i].Access = model.Owner // a reader's own slice
			}
			return s, n.N()
		}
		want := fmt.Sprintf("1 %d:%d", a.ID, model.Developer)
		got, first := heads()
		if got != want || first == 0 {
			t.Fatalf("heads: %q in %d statements; want %q", got, first, want)
		}
		got, again := heads()
		if got != want || (remembered && again != 0) || (!remembered && again != first) {
			t.Errorf("heads read again: %q in %d statements; want %q in %d", got, again, want, map[bool]int64{true: 0, false: first}[remembered])
		}
		storetest.AddMember(t, db, b, reader, model.Reporter)
		want = fmt.Sprintf("2 %d:%d %d:%d", a.ID, model.Developer, b.ID, model.Reporter)
		if got, n := heads(); got != want || n == 0 {
			t.Errorf("heads after a membership: %q in %d statements; want %q read again", got, n, want)
		}

		mr := func(title string) {
			t.Helper()
			m := model.MergeRequest{TargetProjectID: a.ID, SourceProjectID: a.ID, SourceBranch: title, TargetBranch: "main",
				Title: title, State: "opened", AuthorID: owner.ID, AssigneeIDs: []int64{reader.ID}, MergeStatus: "unchecked"}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMergeRequest(ctx, &m) }); err != nil {
				t.Fatal(err)
			}
		}
		mr("first")
		mrs := func() (string, int64) {
			t.Helper()
			cctx, n := store.CountQueries(ctx)
			list, users, _, err := db.MergeRequestsWithPeople(cctx, store.MergeRequestFilter{ProjectIDs: []int64{a.ID}}, model.Page{Number: 1, PerPage: 20})
			if err != nil {
				t.Fatal(err)
			}
			s := ""
			for i := range list {
				s += fmt.Sprintf("%s:%s:%v ", list[i].Title, users[list[i].AuthorID].Username, list[i].AssigneeIDs)
				list[i].Title = "changed by a reader"
			}
			return s, n.N()
		}
		want = fmt.Sprintf("first:%s:[%d] ", owner.Username, reader.ID)
		got, first = mrs()
		if got != want || first == 0 {
			t.Fatalf("merge requests: %q in %d statements; want %q", got, first, want)
		}
		got, again = mrs()
		if got != want || (remembered && again != 0) || (!remembered && again != first) {
			t.Errorf("merge requests read again: %q in %d statements; want %q", got, again, want)
		}
		mr("second")
		want = fmt.Sprintf("second:%s:[%d] first:%s:[%d] ", owner.Username, reader.ID, owner.Username, reader.ID)
		if got, n := mrs(); got != want || n == 0 {
			t.Errorf("merge requests after a new one: %q in %d statements; want %q read again", got, n, want)
		}
	})
}
