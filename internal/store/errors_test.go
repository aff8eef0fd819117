package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"quarry/internal/model"
)

// PostgreSQL's errors become the model's kinds: a rolled-back transaction
// (deadlock, serialization failure) is a conflict the caller may retry.
func TestMapErr_postgresCodes(t *testing.T) {
	for _, tc := range []struct {
		code string
		kind error
	}{
		{"40P01", model.ErrConflict},
		{"40001", model.ErrConflict},
		{"23503", model.ErrConflict},
	} {
		err := mapErr(fmt.Errorf("exec: %w", &pgconn.PgError{Code: tc.code}))
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v; want %v", tc.code, err, tc.kind)
		}
	}
	var ue *UniqueError
	if err := mapErr(&pgconn.PgError{Code: "23505", ConstraintName: "users_username"}); !errors.As(err, &ue) || ue.Constraint != "users_username" {
		t.Errorf("23505: %v; want a UniqueError naming its constraint", err)
	}
	if err := mapErr(&pgconn.PgError{Code: "XX000"}); errors.Is(err, model.ErrConflict) {
		t.Errorf("XX000: %v; want no kind", err)
	}
}
