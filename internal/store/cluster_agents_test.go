package store_test

import (
	"context"
	"errors"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

func newAgent(t *testing.T, db *store.DB, p model.Project, name string, by int64) store.ClusterAgent {
	t.Helper()
	a := store.ClusterAgent{ProjectID: p.ID, Name: name, CreatedByUserID: by}
	if err := db.InTx(context.Background(), func(tx *store.Tx) error { return tx.CreateClusterAgent(context.Background(), &a) }); err != nil {
		t.Fatalf("create agent %q: %v", name, err)
	}
	return a
}

// TestClusterAgents_crud: agents are stored per project, one of a name
// each (another project may reuse it), read back by project and id, paged
// by id, and removed once.
func TestClusterAgents_crud(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		p, other := storetest.NewProject(t, db, owner), storetest.NewProject(t, db, owner)
		a := newAgent(t, db, p, "prod", owner.ID)
		b := newAgent(t, db, p, "staging", 0)
		newAgent(t, db, other, "prod", owner.ID)
		if a.ID == 0 || a.CreatedAt.IsZero() || a.UpdatedAt.IsZero() {
			t.Fatalf("created agent %+v", a)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CreateClusterAgent(ctx, &store.ClusterAgent{ProjectID: p.ID, Name: "prod"})
		})
		if !store.IsClusterAgentNameTaken(err) {
			t.Fatalf("second agent named prod: %v; want the unique index", err)
		}
		got, err := db.ClusterAgent(ctx, p.ID, a.ID)
		if err != nil || got.Name != "prod" || got.CreatedByUserID != owner.ID || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("agent %+v, %v; want %+v", got, err, a)
		}
		if got, err := db.ClusterAgent(ctx, p.ID, b.ID); err != nil || got.CreatedByUserID != 0 {
			t.Fatalf("agent without creator %+v, %v", got, err)
		}
		if _, err := db.ClusterAgent(ctx, other.ID, a.ID); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("agent of another project: %v; want not found", err)
		}
		if ok, err := db.ClusterAgentNamed(ctx, p.ID, "staging"); err != nil || !ok {
			t.Fatalf("named staging: %v, %v", ok, err)
		}
		if ok, err := db.ClusterAgentNamed(ctx, p.ID, "dev"); err != nil || ok {
			t.Fatalf("named dev: %v, %v", ok, err)
		}
		page1, info, err := db.ClusterAgents(ctx, p.ID, model.Page{Number: 1, PerPage: 1})
		if err != nil || len(page1) != 1 || page1[0].ID != a.ID || !info.HasMore || info.Total != 2 {
			t.Fatalf("page 1: %+v %+v %v", page1, info, err)
		}
		page2, info, err := db.ClusterAgents(ctx, p.ID, model.Page{Number: 2, PerPage: 1})
		if err != nil || len(page2) != 1 || page2[0].ID != b.ID || info.HasMore {
			t.Fatalf("page 2: %+v %+v %v", page2, info, err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteClusterAgent(ctx, a.ID) }); err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteClusterAgent(ctx, a.ID) })
		if !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("second delete: %v; want not found", err)
		}
	})
}

// TestClusterAgentsUnder_rootTreeOnly: the agents that may authorize a
// project are those configured in projects of its root namespace's tree
// (subgroups included), never another tree's, nor a project's being
// deleted; removing a project or its creator takes its agents or the
// creator's id with it.
func TestClusterAgentsUnder_rootTreeOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner, creator := storetest.NewUser(t, db), storetest.NewUser(t, db)
		root := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, owner, storetest.Parent(root))
		elsewhere := storetest.NewGroup(t, db, owner)
		inRoot := storetest.NewProject(t, db, owner, storetest.InGroup(root))
		inSub := storetest.NewProject(t, db, owner, storetest.InGroup(sub))
		outside := storetest.NewProject(t, db, owner, storetest.InGroup(elsewhere))
		personal := storetest.NewProject(t, db, owner)
		a1 := newAgent(t, db, inRoot, "one", creator.ID)
		a2 := newAgent(t, db, inSub, "two", owner.ID)
		newAgent(t, db, outside, "three", owner.ID)
		a4 := newAgent(t, db, personal, "four", owner.ID)

		ids := func(traversal string) []int64 {
			t.Helper()
			list, err := db.ClusterAgentsUnder(ctx, traversal)
			if err != nil {
				t.Fatal(err)
			}
			var out []int64
			for _, a := range list {
				if a.Project.ID != a.ProjectID || a.Project.Namespace.ID == 0 {
					t.Fatalf("agent %d without its project: %+v", a.ID, a.Project)
				}
				out = append(out, a.ID)
			}
			return out
		}
		if got := ids(root.Traversal); len(got) != 2 || got[0] != a1.ID || got[1] != a2.ID {
			t.Fatalf("agents under root: %v; want [%d %d]", got, a1.ID, a2.ID)
		}
		if got := ids(personal.Namespace.Traversal); len(got) != 1 || got[0] != a4.ID {
			t.Fatalf("agents under the personal namespace: %v; want [%d]", got, a4.ID)
		}

		// A project being deleted configures nothing.
		inSub.PendingDelete = true
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateProject(ctx, &inSub) }); err != nil {
			t.Fatal(err)
		}
		if got := ids(root.Traversal); len(got) != 1 || got[0] != a1.ID {
			t.Fatalf("agents under root with a project being deleted: %v; want [%d]", got, a1.ID)
		}
		// Removing the project removes its agents; removing the creator
		// keeps the agent without one.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &inSub) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ClusterAgent(ctx, inSub.ID, a2.ID); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("agent of a removed project: %v; want not found", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteUser(ctx, creator.ID) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.ClusterAgent(ctx, inRoot.ID, a1.ID); err != nil || got.CreatedByUserID != 0 {
			t.Fatalf("agent of a removed creator: %+v, %v", got, err)
		}
	})
}
