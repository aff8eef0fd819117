package boards_test

import (
	"context"
	"testing"

	"quarry/internal/boards"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestBoards_exportImport: a group's boards, listed with their lists'
// label titles, are recreated in another group from label ids mapped by
// title, in the same order; an unmapped label (0) is left out.
func TestBoards_exportImport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		ctx := context.Background()
		db := storetest.Open(t, target, "")
		owner := storetest.NewUser(t, db)
		src, dst := storetest.NewGroup(t, db, owner), storetest.NewGroup(t, db, owner)
		titles := []string{"b", "a", "c"}
		byTitle := map[string]int64{}
		board := model.Board{Name: "exp", GroupID: src.ID, HideClosedList: true}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.CreateBoard(ctx, &board); err != nil {
				return err
			}
			for _, ti := range titles {
				l := model.Label{Title: ti, Color: "#fff", GroupID: src.ID}
				if err := tx.CreateLabel(ctx, &l); err != nil {
					return err
				}
				bl := model.BoardList{BoardID: board.ID, Label: l}
				if err := tx.CreateBoardList(ctx, &bl); err != nil {
					return err
				}
				if ti != "c" { // "c" has no label in the new group
					nl := model.Label{Title: ti, Color: "#000", GroupID: dst.ID}
					if err := tx.CreateLabel(ctx, &nl); err != nil {
						return err
					}
					byTitle[ti] = nl.ID
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		svc := boards.New(db, nil, nil)
		exp, err := svc.GroupBoards(ctx, src.ID, 100)
		if err != nil || len(exp) != 1 || len(exp[0].Lists) != 3 {
			t.Fatalf("export %+v %v", exp, err)
		}
		var ids []int64
		for _, l := range exp[0].Lists {
			ids = append(ids, byTitle[l.Label.Title])
		}
		imp, err := svc.ImportBoard(ctx, dst.ID, exp[0], ids)
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Board(ctx, store.BoardOwner{GroupID: dst.ID}, imp.ID)
		if err != nil || got.Name != "exp" || !got.HideClosedList || len(got.Lists) != 2 ||
			got.Lists[0].Label.ID != byTitle["b"] || got.Lists[1].Label.ID != byTitle["a"] || got.Lists[1].Position != 1 {
			t.Fatalf("imported %+v %v", got, err)
		}
	})
}
