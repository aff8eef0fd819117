package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// A group shared with another group gives the invited group's direct
// members access to the shared group, its subgroups and their projects,
// capped at the share's level and ending with the earlier expiry; members
// inherited from above the invited group get nothing; unsharing and
// deleting either group take the access away.
func TestGroupShares_reachSharedTreeForDirectMembers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		day := time.Now().UTC()
		today := day.Format(model.DateLayout)
		tomorrow := day.AddDate(0, 0, 1).Format(model.DateLayout)
		owner, other := storetest.NewUser(t, db), storetest.NewUser(t, db)
		shared := storetest.NewGroup(t, db, owner)
		sub := storetest.NewGroup(t, db, owner, storetest.Parent(shared))
		p := storetest.NewProject(t, db, owner, storetest.InGroup(sub))
		invitedTop := storetest.NewGroup(t, db, other)
		invited := storetest.NewGroup(t, db, other, storetest.Parent(invitedTop))
		maint, guest, leaving, inherited := storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db), storetest.NewUser(t, db)
		storetest.AddMember(t, db, invited, maint, model.Maintainer)
		storetest.AddMember(t, db, invited, guest, model.Guest)
		storetest.AddMember(t, db, invited, leaving, model.Owner, storetest.ExpiresAt(tomorrow))
		storetest.AddMember(t, db, invitedTop, inherited, model.Owner)

		share := func(expires string) {
			t.Helper()
			err := db.InTx(ctx, func(tx *store.Tx) error {
				l := store.GroupShare{SharedGroupID: shared.ID, SharedWithGroupID: invited.ID, GroupAccess: model.Developer, ExpiresAt: expires}
				if err := tx.CreateGroupShare(ctx, &l); err != nil {
					return err
				}
				users, err := tx.DirectMemberIDs(ctx, invited.ID)
				if err != nil {
					return err
				}
				return tx.RefreshAuthorizations(ctx, users...)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		share("")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.CreateGroupShare(ctx, &store.GroupShare{SharedGroupID: shared.ID, SharedWithGroupID: invited.ID, GroupAccess: model.Guest})
		})
		if !store.IsGroupShareTaken(err) {
			t.Errorf("second share of the same groups: %v; want the unique index", err)
		}

		check := func(when string, u model.User, wantProject, wantShared model.AccessLevel, day string) {
			t.Helper()
			if got, err := db.ProjectAccess(ctx, u.ID, p.ID, day); err != nil || got != wantProject {
				t.Errorf("%s: project access %d, %v; want %d", when, got, err, wantProject)
			}
			if got, err := db.NamespaceAccess(ctx, u.ID, shared.ID, day); err != nil || got != wantShared {
				t.Errorf("%s: shared group access %d, %v; want %d", when, got, err, wantShared)
			}
		}
		check("maintainer capped at developer", maint, model.Developer, model.Developer, today)
		check("guest keeps guest", guest, model.Guest, model.Guest, today)
		check("owner until tomorrow", leaving, model.Developer, model.Developer, today)
		check("owner on the day the membership ends", leaving, 0, -1, tomorrow)
		check("member of the invited group's parent", inherited, 0, -1, today)

		ls, err := db.GroupSharesOf(ctx, shared.ID)
		if err != nil || len(ls) != 1 || ls[0].SharedWith.FullPath != invited.FullPath || ls[0].GroupAccess != model.Developer || ls[0].ExpiresAt != "" {
			t.Errorf("shares of the shared group %+v, %v", ls, err)
		}

		// members/all of the subgroup's project: the invited group's direct
		// members (its creator among them), capped.
		ms, err := db.MembershipsSharedInto(ctx, model.SourceProject, p.ID, store.MemberFilter{}, today)
		if err != nil {
			t.Fatal(err)
		}
		levels := map[int64]model.AccessLevel{}
		for _, m := range ms {
			levels[m.UserID] = m.AccessLevel
		}
		if len(levels) != 4 || levels[other.ID] != model.Developer || levels[maint.ID] != model.Developer || levels[guest.ID] != model.Guest || levels[leaving.ID] != model.Developer {
			t.Errorf("memberships shared into the project %v", levels)
		}

		// Unsharing takes the access away.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			users, err := tx.DirectMemberIDs(ctx, invited.ID)
			if err != nil {
				return err
			}
			if err := tx.DeleteGroupShare(ctx, shared.ID, invited.ID); err != nil {
				return err
			}
			return tx.RefreshAuthorizations(ctx, users...)
		})
		if err != nil {
			t.Fatal(err)
		}
		check("after unshare", maint, 0, -1, today)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteGroupShare(ctx, shared.ID, invited.ID) }); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("unshare twice: %v; want not found", err)
		}

		// A share that ends tomorrow holds today and not tomorrow.
		share(tomorrow)
		check("dated share today", maint, model.Developer, model.Developer, today)
		check("dated share on its last day", maint, 0, -1, tomorrow)

		// Deleting the invited group removes its shares.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			users, err := tx.UsersInTree(ctx, invited.Traversal)
			if err != nil {
				return err
			}
			if err := tx.DeleteNamespaceTree(ctx, invited.Traversal); err != nil {
				return err
			}
			return tx.RefreshAuthorizations(ctx, users...)
		})
		if err != nil {
			t.Fatal(err)
		}
		if ls, err := db.GroupSharesOf(ctx, shared.ID); err != nil || len(ls) != 0 {
			t.Errorf("shares after the invited group went: %v, %v", ls, err)
		}
		check("after the invited group went", maint, 0, -1, today)
	})
}
