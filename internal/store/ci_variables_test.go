package store_test

import (
	"context"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestCIVariables_owners: a project, a group and the instance each hold
// their own variable of one key; each owner lists, finds, counts and reads
// back only its own, as its kind; a second variable of a key in one owner
// and scope is UniqueCIVariable.
func TestCIVariables_owners(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		g := storetest.NewGroup(t, db, owner)
		owners := []struct {
			kind string
			id   int64
		}{{model.OwnerProject, p.ID}, {model.OwnerGroup, g.ID}, {model.OwnerInstance, 0}}
		for _, o := range owners {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.LockCIVariables(ctx, o.kind, o.id); err != nil {
					return err
				}
				v := model.CIVariable{OwnerType: o.kind, OwnerID: o.id, Key: "SHARED", Value: o.kind + " value", VariableType: model.VarEnv,
					EnvironmentScope: "*"}
				return tx.CreateCIVariable(ctx, &v)
			})
			if err != nil {
				t.Fatalf("create %s variable: %v", o.kind, err)
			}
		}
		for _, o := range owners {
			list, err := db.CIVariablesByKey(ctx, o.kind, o.id, "SHARED")
			if err != nil || len(list) != 1 || list[0].OwnerType != o.kind || list[0].OwnerID != o.id || list[0].Value != o.kind+" value" {
				t.Errorf("%s's SHARED: %+v, %v", o.kind, list, err)
			}
			page, _, err := db.CIVariables(ctx, o.kind, o.id, model.Page{Number: 1, PerPage: 20})
			if err != nil || len(page) != 1 || page[0].OwnerType != o.kind {
				t.Errorf("%s's list: %+v, %v", o.kind, page, err)
			}
			if n, err := db.CountCIVariables(ctx, o.kind, o.id); err != nil || n != 1 {
				t.Errorf("%s's count: %d, %v; want 1", o.kind, n, err)
			}
			err = db.InTx(ctx, func(tx *store.Tx) error {
				v := model.CIVariable{OwnerType: o.kind, OwnerID: o.id, Key: "SHARED", Value: "again", VariableType: model.VarEnv,
					EnvironmentScope: "*"}
				return tx.CreateCIVariable(ctx, &v)
			})
			if !store.IsUnique(err, store.UniqueCIVariable) {
				t.Errorf("a second %s SHARED: %v; want %s", o.kind, err, store.UniqueCIVariable)
			}
		}
		if list, err := db.InstanceCIVariables(ctx); err != nil || len(list) != 1 || list[0].OwnerType != model.OwnerInstance {
			t.Errorf("instance variables %+v, %v", list, err)
		}
		if list, err := db.ProjectCIVariables(ctx, p.ID); err != nil || len(list) != 1 || list[0].OwnerType != model.OwnerProject {
			t.Errorf("project variables %+v, %v", list, err)
		}
	})
}
