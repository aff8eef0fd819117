package boards

import "testing"

func TestValidMove(t *testing.T) {
	for _, c := range []struct {
		from int
		to   int64
		n    int
		want bool
	}{
		{0, 1, 2, true},
		{1, 0, 2, true},
		{0, 0, 2, false},  // same place
		{0, 2, 2, false},  // past the last
		{0, -1, 2, false}, // before the first
		{0, 1 << 40, 2, false},
		{0, 0, 1, false},
	} {
		if got := ValidMove(c.from, c.to, c.n); got != c.want {
			t.Errorf("ValidMove(%d, %d, %d) = %v; want %v", c.from, c.to, c.n, got, c.want)
		}
	}
}

func TestTraversalIDs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
	}{{"1/5/9/", []int64{1, 5, 9}}, {"7/", []int64{7}}, {"", nil}} {
		got := traversalIDs(c.in)
		if len(got) != len(c.want) {
			t.Fatalf("traversalIDs(%q) = %v; want %v", c.in, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("traversalIDs(%q) = %v; want %v", c.in, got, c.want)
			}
		}
	}
}
