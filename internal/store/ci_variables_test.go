package store_test

import (
	"context"
	"reflect"
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

// TestCIVariablesInScope: the one statement returns what the three
// reads (instance, groups, project) return, each list by id, and none of
// another project's or group's.
func TestCIVariablesInScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		p, other := storetest.NewProject(t, db, owner), storetest.NewProject(t, db, owner)
		g1, g2, g3 := storetest.NewGroup(t, db, owner), storetest.NewGroup(t, db, owner), storetest.NewGroup(t, db, owner)
		add := func(kind string, id int64, key, scope string) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				v := model.CIVariable{OwnerType: kind, OwnerID: id, Key: key, Value: kind + " " + key, VariableType: model.VarEnv,
					EnvironmentScope: scope}
				return tx.CreateCIVariable(ctx, &v)
			}); err != nil {
				t.Fatal(err)
			}
		}
		add(model.OwnerProject, p.ID, "B", "*")
		add(model.OwnerGroup, g2.ID, "A", "*")
		add(model.OwnerInstance, 0, "I", "*")
		add(model.OwnerGroup, g1.ID, "A", "review/*")
		add(model.OwnerProject, other.ID, "B", "*")
		add(model.OwnerGroup, g3.ID, "C", "*")
		add(model.OwnerProject, p.ID, "A", "production")
		add(model.OwnerInstance, 0, "J", "*")
		add(model.OwnerGroup, g1.ID, "D", "*")
		ids := func(l []model.CIVariable) []int64 {
			var out []int64
			for _, v := range l {
				out = append(out, v.ID)
			}
			return out
		}
		wantInstance, err := db.InstanceCIVariables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantGroups, err := db.GroupsCIVariables(ctx, []int64{g1.ID, g2.ID})
		if err != nil {
			t.Fatal(err)
		}
		wantProject, err := db.ProjectCIVariables(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(wantInstance) != 2 || len(wantGroups) != 3 || len(wantProject) != 2 {
			t.Fatalf("the three reads: %d, %d, %d variables", len(wantInstance), len(wantGroups), len(wantProject))
		}
		instance, groups, project, err := db.CIVariablesInScope(ctx, p.ID, []int64{g1.ID, g2.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want []model.CIVariable
		}{{"instance", instance, wantInstance}, {"groups", groups, wantGroups}, {"project", project, wantProject}} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, ids(c.got), ids(c.want))
			}
		}
		instance, groups, project, err = db.CIVariablesInScope(ctx, other.ID, nil)
		if err != nil || len(instance) != 2 || len(groups) != 0 || len(project) != 1 || project[0].OwnerID != other.ID {
			t.Errorf("without groups: %v, %v, %v, %v", ids(instance), ids(groups), ids(project), err)
		}
	})
}
