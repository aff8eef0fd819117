package attributes

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"testing"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// TestAttributes_List_overflowingID: an id past int64 names no user. It
// used to wrap around: 2^64+1 read as 1, answering user 1's attributes.
func TestAttributes_List_overflowingID(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		db := storetest.Open(t, target, "")
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		admin := model.User{Username: "root", Email: "root@example.com", Name: "Root", State: model.UserActive,
			Type: model.UserHuman, Admin: true, ProjectsLimit: 10, ThemeID: 1, ColorSchemeID: 1, CreatedAt: now, UpdatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateUser(ctx, &admin) }); err != nil {
			t.Fatal(err)
		}
		svc := New(db)
		actor := auth.Actor{User: &admin}
		if _, err := svc.Set(ctx, actor, Users, strconv.FormatInt(admin.ID, 10), model.CustomAttribute{Key: "k", Value: "v"}); err != nil {
			t.Fatal(err)
		}
		if attrs, err := svc.List(ctx, actor, Users, strconv.FormatInt(admin.ID, 10)); err != nil || len(attrs) != 1 {
			t.Fatalf("own attributes: %v, %v", attrs, err)
		}
		// 2^64 + id wraps to id in 64-bit arithmetic.
		wrapped := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(admin.ID)).String()
		for _, c := range []struct{ kind, ref, msg string }{
			{Users, wrapped, "404 User Not Found"},
			{Users, "9223372036854775808", "404 User Not Found"},
			{Users, "+" + strconv.FormatInt(admin.ID, 10), "404 User Not Found"},
			{Users, "-1", "404 User Not Found"},
			{Projects, wrapped, "404 Project Not Found"},
			{Groups, wrapped, "404 Group Not Found"},
		} {
			attrs, err := svc.List(ctx, actor, c.kind, c.ref)
			var me *model.Error
			if !errors.As(err, &me) || me.Kind != model.KindNotFound || me.Message != c.msg {
				t.Errorf("List(%s, %q) = %v, %v; want %q", c.kind, c.ref, attrs, err, c.msg)
			}
		}
	})
}
