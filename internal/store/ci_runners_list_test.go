package store_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

var runnerSeq atomic.Int64

// newStoreRunner stores a runner of a type, of a group or of projects
// (owner first).
func newStoreRunner(t *testing.T, db *store.DB, typ string, groupID int64, projectIDs ...int64) model.Runner {
	t.Helper()
	r := model.Runner{Type: typ, GroupID: groupID, ProjectIDs: projectIDs, TokenDigest: "digest-" + strconv.FormatInt(runnerSeq.Add(1), 10),
		RegistrationType: model.RegisteredByUser, RunUntagged: true, AccessLevel: model.RunnerNotProtected}
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateRunner(ctx, &r) }); err != nil {
		t.Fatalf("create runner: %v", err)
	}
	return r
}

// TestRunners_ownedAndBatched: the runners a user owns (maintained
// projects, owned groups and their subgroups, unexpired access only),
// runners by ids, the project lists of a page in owner-first order, and
// access inside a group tree.
func TestRunners_ownedAndBatched(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		today := time.Now().UTC().Format(model.DateLayout)
		owner, maint, dev, lapsed := storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, model.User{}, storetest.Parent(g))
		p := storetest.NewProject(t, db, owner, storetest.InGroup(sub))
		q := storetest.NewProject(t, db, owner)
		storetest.AddMember(t, db, p, maint, model.Maintainer)
		storetest.AddMember(t, db, p, dev, model.Developer)
		storetest.AddMember(t, db, g, lapsed, model.Owner, storetest.ExpiresAt("2001-01-01"))

		inst := newStoreRunner(t, db, model.RunnerInstance, 0)
		grp := newStoreRunner(t, db, model.RunnerGroup, g.ID)
		subr := newStoreRunner(t, db, model.RunnerGroup, sub.ID)
		shared := newStoreRunner(t, db, model.RunnerProject, 0, q.ID, p.ID)
		own := newStoreRunner(t, db, model.RunnerProject, 0, p.ID)

		for _, c := range []struct {
			who  model.User
			want []int64
		}{
			{owner, []int64{grp.ID, subr.ID, shared.ID, own.ID}},
			{maint, []int64{shared.ID, own.ID}},
			{dev, nil},
			{lapsed, nil},
		} {
			got, err := db.OwnedRunnerIDs(ctx, c.who.ID, today)
			slices.Sort(got)
			if err != nil || !slices.Equal(got, c.want) || got == nil {
				t.Errorf("owned by %s: %v, %v; want %v", c.who.Username, got, err, c.want)
			}
		}

		byID, err := db.RunnersByIDs(ctx, []int64{own.ID, inst.ID, own.ID, 1 << 40})
		if err != nil || len(byID) != 2 || byID[own.ID].Type != model.RunnerProject || byID[inst.ID].Type != model.RunnerInstance {
			t.Fatalf("by ids %v, %v", byID, err)
		}
		if empty, err := db.RunnersByIDs(ctx, nil); err != nil || len(empty) != 0 {
			t.Fatalf("by no ids %v, %v", empty, err)
		}

		page, _, err := db.Runners(ctx, store.RunnerFilter{Types: []string{model.RunnerProject}, Now: time.Now()}, model.Page{Number: 1, PerPage: 10})
		if err != nil || len(page) != 2 || !slices.Equal(page[0].ProjectIDs, []int64{q.ID, p.ID}) || !slices.Equal(page[1].ProjectIDs, []int64{p.ID}) {
			t.Fatalf("project runners %+v, %v", page, err)
		}

		for _, c := range []struct {
			who  model.User
			tree model.Group
			min  model.AccessLevel
			want bool
		}{
			{maint, g, model.Maintainer, true}, {maint, sub, model.Maintainer, true}, {dev, g, model.Maintainer, false},
			{dev, g, model.Developer, true}, {owner, g, model.Owner, true},
		} {
			if got, err := db.HasProjectAccessInTree(ctx, c.who.ID, c.tree.Traversal, c.min, today); err != nil || got != c.want {
				t.Errorf("%s in %s at %d: %v, %v; want %v", c.who.Username, c.tree.FullPath, c.min, got, err, c.want)
			}
		}
	})
}

// TestRunners_assignTwiceInOneTransaction: enabling a runner where it
// already serves answers false and leaves the transaction usable (a
// failed insert would abort it on PostgreSQL).
func TestRunners_assignTwiceInOneTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		u := storetest.NewUser(t, db)
		p, q := storetest.NewProject(t, db, u), storetest.NewProject(t, db, u)
		r := newStoreRunner(t, db, model.RunnerProject, 0, p.ID)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if added, err := tx.AddRunnerProject(ctx, r.ID, p.ID); err != nil || added {
				t.Errorf("again: %v, %v; want false", added, err)
			}
			added, err := tx.AddRunnerProject(ctx, r.ID, q.ID)
			if err == nil && !added {
				t.Error("a new project: not added")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if ids, err := db.RunnerProjectIDs(ctx, r.ID); err != nil || !slices.Equal(ids, []int64{p.ID, q.ID}) {
			t.Fatalf("projects %v, %v", ids, err)
		}
		// A machine's first contact twice over is one record.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			for range 2 {
				if err := tx.TouchRunnerManager(ctx, r.ID, "s_1", time.Now(), model.RunnerInfo{}); err != nil {
					return err
				}
			}
			return nil
		})
		if ms, err2 := db.RunnerManagers(ctx, r.ID); err != nil || err2 != nil || len(ms) != 1 {
			t.Fatalf("managers %v, %v, %v", ms, err, err2)
		}
	})
}
