package store_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// fakeSealer seals as "<key>|<column>|<hex>" with the keys it holds (the
// first is current); without keys it stores plain text, as versions that
// did not seal did. The cipher is internal/secrets' business: this checks
// what the store does with a sealer.
type fakeSealer struct{ keys []string }

var errFakeOpen = errors.New("fake sealer: cannot open")

func (f fakeSealer) Seal(plain, column string) (string, error) {
	if len(f.keys) == 0 {
		return plain, nil
	}
	return f.keys[0] + "|" + column + "|" + hex.EncodeToString([]byte(plain)), nil
}

func (f fakeSealer) Open(sealed, column string) (string, error) {
	if len(f.keys) == 0 {
		return sealed, nil
	}
	parts := strings.Split(sealed, "|")
	if len(parts) != 3 || !f.Holds(parts[0]) || parts[1] != column {
		return "", fmt.Errorf("%q: %w", sealed, errFakeOpen)
	}
	b, err := hex.DecodeString(parts[2])
	return string(b), err
}

func (f fakeSealer) KeyID() string {
	if len(f.keys) == 0 {
		return ""
	}
	return f.keys[0]
}

func (f fakeSealer) Holds(id string) bool { return slices.Contains(f.keys, id) }

func (f fakeSealer) SealedWith(v string) (string, bool) {
	parts := strings.Split(v, "|")
	return parts[0], len(parts) == 3
}

// TestSealSecrets: values stored in plain text are sealed by the first
// pass, which records its key so the next pass reads nothing; a new key
// seals everything again; a sealer lacking the recorded key is refused.
// Every value reads back the same throughout, and registration tokens are
// found by digest.
func TestSealSecrets(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		db.SetSealer(fakeSealer{}) // plain text, as before
		p, pl, job := ciRows(t, db)
		owner := storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, v := range []model.CIVariable{
				{OwnerType: model.OwnerProject, OwnerID: p.ID, Key: "P", Value: "project value", VariableType: model.VarEnv, EnvironmentScope: "*"},
				{OwnerType: model.OwnerGroup, OwnerID: g.ID, Key: "G", Value: "group value", VariableType: model.VarEnv, EnvironmentScope: "*"},
				{OwnerType: model.OwnerInstance, Key: "I", Value: "instance value", VariableType: model.VarEnv, EnvironmentScope: "*"},
			} {
				if err := tx.CreateCIVariable(ctx, &v); err != nil {
					return err
				}
			}
			if err := tx.AddPipelineVariables(ctx, pl.ID, []model.Variable{{Key: "V", Value: "pipeline value", VariableType: model.VarEnv}}); err != nil {
				return err
			}
			if err := tx.SetJobManualVariables(ctx, job.ID, []model.Variable{{Key: "M", Value: "played value", VariableType: model.VarEnv}}); err != nil {
				return err
			}
			_, err := tx.ApplicationSettings(ctx, func() model.ApplicationSettings {
				s := model.DefaultApplicationSettings()
				s.RunnersRegistrationToken = "instance-token"
				return s
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		readBack := func(t *testing.T) {
			t.Helper()
			vars, err := db.ProjectCIVariables(ctx, p.ID)
			if err != nil || len(vars) != 1 || vars[0].Value != "project value" {
				t.Errorf("project variables %+v, %v", vars, err)
			}
			gvars, err := db.GroupsCIVariables(ctx, []int64{g.ID})
			if err != nil || len(gvars) != 1 || gvars[0].Value != "group value" {
				t.Errorf("group variables %+v, %v", gvars, err)
			}
			ivars, err := db.InstanceCIVariables(ctx)
			if err != nil || len(ivars) != 1 || ivars[0].Value != "instance value" {
				t.Errorf("instance variables %+v, %v", ivars, err)
			}
			pv, err := db.PipelineVariables(ctx, pl.ID)
			if err != nil || len(pv) != 1 || pv[0].Value != "pipeline value" {
				t.Errorf("pipeline variables %+v, %v", pv, err)
			}
			j, err := db.Job(ctx, job.ID)
			if err != nil || len(j.ManualVariables) != 1 || j.ManualVariables[0].Value != "played value" {
				t.Errorf("played job %+v, %v", j.ManualVariables, err)
			}
			gotP, err := db.ProjectByID(ctx, p.ID)
			if err != nil || gotP.Settings.RunnersToken != p.Settings.RunnersToken {
				t.Errorf("project token %q, %v; want %q", gotP.Settings.RunnersToken, err, p.Settings.RunnersToken)
			}
			gotG, err := db.GroupByID(ctx, g.ID)
			if err != nil || gotG.RunnersToken != g.RunnersToken {
				t.Errorf("group token %q, %v; want %q", gotG.RunnersToken, err, g.RunnersToken)
			}
			st, err := db.ApplicationSettings(ctx, model.DefaultApplicationSettings)
			if err != nil || st.Settings.RunnersRegistrationToken != "instance-token" {
				t.Errorf("instance token %q, %v", st.Settings.RunnersRegistrationToken, err)
			}
			if id, err := db.ProjectIDByRunnersToken(ctx, p.Settings.RunnersToken); err != nil || id != p.ID {
				t.Errorf("project by token: %d, %v", id, err)
			}
			if id, err := db.GroupIDByRunnersToken(ctx, g.RunnersToken); err != nil || id != g.ID {
				t.Errorf("group by token: %d, %v", id, err)
			}
			if ok, err := db.IsInstanceRunnersToken(ctx, "instance-token"); err != nil || !ok {
				t.Errorf("instance token found: %v, %v", ok, err)
			}
		}
		// 8 values: three variables, a pipeline variable, a played job's
		// variables, three registration tokens.
		const n = 8

		db.SetSealer(fakeSealer{keys: []string{"a"}})
		rep, err := db.SealSecrets(ctx)
		if err != nil || rep.Plain != n || rep.Resealed != 0 || rep.KeyID != "a" || rep.Current {
			t.Fatalf("first pass %+v, %v; want %d values sealed from plain text", rep, err, n)
		}
		readBack(t)
		if rep, err := db.SealSecrets(ctx); err != nil || !rep.Current || rep.Plain+rep.Resealed != 0 {
			t.Errorf("second pass %+v, %v; want nothing read", rep, err)
		}

		db.SetSealer(fakeSealer{keys: []string{"b", "a"}})
		if rep, err := db.SealSecrets(ctx); err != nil || rep.Resealed != n || rep.Plain != 0 || rep.KeyID != "b" {
			t.Fatalf("pass after rotation %+v, %v; want %d values sealed again", rep, err, n)
		}
		db.SetSealer(fakeSealer{keys: []string{"b"}}) // a is no longer needed
		readBack(t)

		db.SetSealer(fakeSealer{keys: []string{"c"}})
		if _, err := db.SealSecrets(ctx); err == nil || !strings.Contains(err.Error(), "key b") {
			t.Errorf("a sealer lacking the recorded key: %v; want refused", err)
		}
		if _, err := db.ProjectCIVariables(ctx, p.ID); !errors.Is(err, errFakeOpen) {
			t.Errorf("read with the wrong key: %v; want the sealer's error", err)
		}

		// A value that claims a held key but does not open is an error once
		// a pass has finished (not plain text to seal).
		db.SetSealer(fakeSealer{keys: []string{"d", "b"}})
		err = db.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetJobManualVariables(ctx, job.ID, []model.Variable{{Key: "M", Value: "x", VariableType: model.VarEnv}})
		})
		if err != nil {
			t.Fatal(err)
		}
		db.SetSealer(fakeSealer{keys: []string{"e", "b", "d"}})
		if rep, err := db.SealSecrets(ctx); err != nil || rep.Resealed != n {
			t.Fatalf("pass with keys e, b, d: %+v, %v", rep, err)
		}
	})
}

// Registration tokens are unique by digest: no two projects or groups
// share one, and an unknown one is not found.
func TestRunnersToken_digestLookups(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		p := storetest.NewProject(t, db, owner)
		other := storetest.NewProject(t, db, owner)
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetProjectRunnersToken(ctx, other.ID, p.Settings.RunnersToken) })
		if !store.IsUnique(err, store.UniqueProjectRunnersToken) {
			t.Errorf("a second project with one token: %v; want %s", err, store.UniqueProjectRunnersToken)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetProjectRunnersToken(ctx, p.ID, "GR1348941fresh") }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ProjectIDByRunnersToken(ctx, p.Settings.RunnersToken); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("the replaced token: %v; want not found", err)
		}
		if id, err := db.ProjectIDByRunnersToken(ctx, "GR1348941fresh"); err != nil || id != p.ID {
			t.Errorf("the new token: %d, %v", id, err)
		}
		g := storetest.NewGroup(t, db, owner)
		if _, err := db.GroupIDByRunnersToken(ctx, p.Settings.RunnersToken+"x"); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("unknown group token: %v", err)
		}
		if id, err := db.GroupIDByRunnersToken(ctx, g.RunnersToken); err != nil || id != g.ID {
			t.Errorf("group token: %d, %v", id, err)
		}
	})
}
