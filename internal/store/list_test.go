package store

import (
	"testing"

	"quarry/internal/model"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []cursor{{ID: 5}, {Key: "alice", ID: 7}, {Key: int64(1700000000000000), ID: 9}} {
		got, err := decodeCursor(encodeCursor(c))
		if err != nil || got != c {
			t.Errorf("round trip %+v = %+v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "!!", "e30", "bm90IGpzb24"} {
		if _, err := decodeCursor(bad); model.KindOf(err) != model.KindParam {
			t.Errorf("decodeCursor(%q) = %v", bad, err)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(cursor{Key: "x", ID: 1}))
	f.Add("eyJpZCI6MX0")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err == nil && c.ID == 0 {
			t.Fatalf("accepted a cursor without id: %q", s)
		}
		if err != nil && model.KindOf(err) != model.KindParam {
			t.Fatalf("unclassified error %v", err)
		}
	})
}

func TestRebind(t *testing.T) {
	tx := &Tx{dialect: Postgres}
	if got := tx.rebind("SELECT a FROM t WHERE b = ? AND c IN (?, ?)"); got != "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)" {
		t.Errorf("rebind = %q", got)
	}
	if got := (&Tx{dialect: SQLite}).rebind("x = ?"); got != "x = ?" {
		t.Errorf("sqlite rebind = %q", got)
	}
}
