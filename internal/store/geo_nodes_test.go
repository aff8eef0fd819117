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

func geoNode(name, url, key string, primary bool) model.GeoNode {
	return model.GeoNode{Name: name, URL: url, Primary: primary, Enabled: true, FilesMaxCapacity: 10, ReposMaxCapacity: 25,
		VerificationMaxCapacity: 100, ContainerRepositoriesMaxCapacity: 10, MinimumReverificationInterval: 7,
		CloneProtocol: "http", AccessKey: key}
}

// TestGeoNodes_store: nodes read back with their groups in order and their
// secret sealed; each unique index is named alike on both engines; an
// update with a stale version writes nothing; a status computed earlier
// than the stored one is dropped; deleting a group or a node takes its
// links and status along.
func TestGeoNodes_store(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		owner := storetest.NewUser(t, db)
		g1, g2 := storetest.NewGroup(t, db, owner), storetest.NewGroup(t, db, owner)
		create := func(n model.GeoNode, secret string) (model.GeoNode, error) {
			err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateGeoNode(ctx, &n, secret) })
			return n, err
		}
		a := geoNode("Alpha", "https://alpha.example.com/", "key-a", true)
		a.SelectiveSyncNamespaceIDs = []int64{g2.ID, g1.ID}
		a.SelectiveSyncShards = []string{"default"}
		a, err := create(a, "secret-a")
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.GeoNodeByName(ctx, "ALPHA")
		if err != nil || got.ID != a.ID || len(got.SelectiveSyncNamespaceIDs) != 2 || got.SelectiveSyncNamespaceIDs[0] != g2.ID ||
			got.SelectiveSyncShards[0] != "default" || got.Version != 1 || !got.Primary {
			t.Fatalf("by name: %+v, %v", got, err)
		}
		if key, secret, err := db.GeoNodeCredentials(ctx, a.ID); err != nil || key != "key-a" || secret != "secret-a" {
			t.Errorf("credentials: %q %q %v", key, secret, err)
		}
		if n, secret, err := db.GeoNodeByAccessKey(ctx, "key-a"); err != nil || n.ID != a.ID || secret != "secret-a" {
			t.Errorf("by access key: %v %v", n.ID, err)
		}
		for _, c := range []struct {
			n          model.GeoNode
			constraint string
		}{
			{geoNode("alpha", "https://other.example.com/", "key-b", false), store.UniqueGeoNodeName},
			{geoNode("Beta", "HTTPS://ALPHA.example.com/", "key-b", false), store.UniqueGeoNodeURL},
			{geoNode("Beta", "https://beta.example.com/", "key-a", false), store.UniqueGeoAccessKey},
			{geoNode("Beta", "https://beta.example.com/", "key-b", true), store.UniqueGeoNodePrimary},
		} {
			if _, err := create(c.n, "s"); !store.IsUnique(err, c.constraint) {
				t.Errorf("%s: %v; want a violation of %s", c.n.Name, err, c.constraint)
			}
		}
		b, err := create(geoNode("Beta", "https://beta.example.com/", "key-b", false), "secret-b")
		if err != nil {
			t.Fatal(err)
		}
		// Compare-and-set on the version.
		stale := b
		b.FilesMaxCapacity = 3
		if ok, err := writeNode(ctx, db, &b); !ok || err != nil || b.Version != 2 {
			t.Fatalf("update: %v %v (version %d)", ok, err, b.Version)
		}
		stale.ReposMaxCapacity = 9
		if ok, err := writeNode(ctx, db, &stale); ok || err != nil {
			t.Errorf("a stale update wrote: %v %v", ok, err)
		}
		if got, _ := db.GeoNodeByID(ctx, b.ID); got.FilesMaxCapacity != 3 || got.ReposMaxCapacity != 25 {
			t.Errorf("after the stale update: %+v", got)
		}
		// Statuses keep the latest computed.
		at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		save := func(doc string, checked time.Time) bool {
			var saved bool
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				saved, err = tx.SaveGeoNodeStatus(ctx, b.ID, doc, checked)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return saved
		}
		if !save("first", at) || save("older", at.Add(-time.Minute)) || !save("newer", at.Add(time.Minute)) {
			t.Error("statuses: want the first and the newer kept, the older dropped")
		}
		if d, err := db.GeoNodeStatus(ctx, b.ID); err != nil || d.Doc != "newer" || !d.CheckedAt.Equal(at.Add(time.Minute)) {
			t.Errorf("stored status: %+v %v", d, err)
		}
		list, info, err := db.ListGeoNodesWithStatus(ctx, 0, model.Page{Number: 1, PerPage: 20})
		if err != nil || len(list) != 1 || list[0].ID != b.ID || info.Total != 1 {
			t.Errorf("with a status: %v %+v %v", list, info, err)
		}
		if list, _, _ := db.ListGeoNodesWithStatus(ctx, a.ID, model.Page{Number: 1, PerPage: 20}); len(list) != 2 {
			t.Errorf("with the current node: %v", list)
		}
		// A group's removal takes its links; a node's, its status.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteNamespaceTree(ctx, g2.Traversal) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.GeoNodeByID(ctx, a.ID); len(got.SelectiveSyncNamespaceIDs) != 1 || got.SelectiveSyncNamespaceIDs[0] != g1.ID {
			t.Errorf("after the group's removal: %v", got.SelectiveSyncNamespaceIDs)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteGeoNode(ctx, b.ID) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.GeoNodeStatus(ctx, b.ID); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("status after the node's removal: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteGeoNode(ctx, b.ID) }); !errors.Is(err, model.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

func writeNode(ctx context.Context, db *store.DB, n *model.GeoNode) (bool, error) {
	var ok bool
	err := db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ok, err = tx.UpdateGeoNode(ctx, n)
		return err
	})
	return ok, err
}
