package store_test

import (
	"context"
	"errors"
	"testing"

	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestBoards_lists: label lists are appended, moved and removed with
// their positions kept 0.. in a row; a label's removal removes its lists
// and closes the gaps; a duplicate label list is a conflict; removing a
// project or the group tree removes their boards. GroupBoards is what an
// export of the group reads.
func TestBoards_lists(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		g := storetest.NewGroup(t, db, owner)
		p := storetest.NewProject(t, db, owner, storetest.InGroup(g))
		var ls []model.Label
		gb := model.Board{Name: "g", GroupID: g.ID}
		pb := model.Board{Name: "p", ProjectID: p.ID}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, title := range []string{"a", "b", "c", "d"} {
				l := model.Label{Title: title, Color: "#fff", GroupID: g.ID}
				if err := tx.CreateLabel(ctx, &l); err != nil {
					return err
				}
				ls = append(ls, l)
			}
			if err := tx.CreateBoard(ctx, &gb); err != nil {
				return err
			}
			if err := tx.CreateBoard(ctx, &pb); err != nil {
				return err
			}
			for _, b := range []int64{gb.ID, pb.ID} {
				for _, l := range ls {
					bl := model.BoardList{BoardID: b, Label: l}
					if err := tx.CreateBoardList(ctx, &bl); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		order := func(b model.Board) string {
			t.Helper()
			got, err := db.Board(ctx, store.BoardOwner{ProjectID: b.ProjectID, GroupID: b.GroupID}, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			s := ""
			for i, l := range got.Lists {
				if l.Position != i {
					t.Fatalf("list %s at %d; want %d", l.Label.Title, l.Position, i)
				}
				s += l.Label.Title
			}
			return s
		}
		if got := order(gb); got != "abcd" {
			t.Fatalf("lists %q", got)
		}
		dup := model.BoardList{BoardID: gb.ID, Label: ls[0]}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateBoardList(ctx, &dup) }); !errors.Is(err, model.ErrConflict) {
			t.Fatalf("duplicate list: %v; want a conflict", err)
		}
		b, _ := db.Board(ctx, store.BoardOwner{GroupID: g.ID}, gb.ID)
		for _, c := range []struct {
			list     int
			from, to int
			want     string
		}{{0, 0, 3, "bcda"}, {0, 3, 1, "bacd"}} {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				return tx.MoveBoardList(ctx, gb.ID, b.Lists[c.list].ID, c.from, c.to)
			}); err != nil {
				t.Fatal(err)
			}
			if got := order(gb); got != c.want {
				t.Fatalf("after a move %d→%d: %q; want %q", c.from, c.to, got, c.want)
			}
		}
		// Removing label "a" (at 1 on one board, 0 on the other).
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteLabel(ctx, ls[0].ID) }); err != nil {
			t.Fatal(err)
		}
		if got := order(gb); got != "bcd" {
			t.Fatalf("group board after the label's removal %q", got)
		}
		if got := order(pb); got != "bcd" {
			t.Fatalf("project board after the label's removal %q", got)
		}
		if list, err := db.GroupBoards(ctx, g.ID, 0, 10); err != nil || len(list) != 1 || len(list[0].Lists) != 3 || list[0].Lists[0].Label.Title != "b" {
			t.Fatalf("group boards %+v %v", list, err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProject(ctx, &p) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Board(ctx, store.BoardOwner{ProjectID: p.ID}, pb.ID); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("project board after the project: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteNamespaceTree(ctx, g.Traversal) }); err != nil {
			t.Fatal(err)
		}
		if list, err := db.GroupBoards(ctx, g.ID, 0, 10); err != nil || len(list) != 0 {
			t.Fatalf("group boards after the group %+v %v", list, err)
		}
	})
}
