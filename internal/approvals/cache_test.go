package approvals

import (
	"testing"
)

// TestInputsCache_bounds: the cache keeps at most its entries and its
// estimated bytes, evicting the least recently used; an entry over the
// byte bound is not kept.
func TestInputsCache_bounds(t *testing.T) {
	entry := func(members int) *storedInputs {
		return &storedInputs{loaded: true, groupMembers: map[int64][]int64{1: make([]int64, members)}}
	}
	small := entry(0).size()
	tests := []struct {
		name     string
		entries  int
		maxBytes int64
		add      []int // members of each entry added, keys 0, 1, …
		kept     []int // keys kept after the adds
	}{
		{"under both bounds", 4, 10 * small, []int{0, 0, 0}, []int{0, 1, 2}},
		{"entries bound", 2, 10 * small, []int{0, 0, 0}, []int{1, 2}},
		{"bytes bound", 10, 2 * small, []int{0, 0, 0}, []int{1, 2}},
		{"an entry over the bytes bound", 10, 2 * small, []int{0, 1000}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newInputsCache(tt.entries, tt.maxBytes)
			for i, m := range tt.add {
				c.add(inputsKey{mrID: int64(i)}, entry(m))
			}
			var kept []int
			for i := range tt.add {
				if _, ok := c.get(inputsKey{mrID: int64(i)}); ok {
					kept = append(kept, i)
				}
			}
			if len(kept) != len(tt.kept) {
				t.Fatalf("kept %v; want %v", kept, tt.kept)
			}
			for i := range kept {
				if kept[i] != tt.kept[i] {
					t.Fatalf("kept %v; want %v", kept, tt.kept)
				}
			}
			var bytes int64
			for _, k := range tt.kept {
				bytes += entry(tt.add[k]).size()
			}
			if c.bytes != bytes || c.bytes > tt.maxBytes {
				t.Errorf("bytes %d; want %d (at most %d)", c.bytes, bytes, tt.maxBytes)
			}
		})
	}
}
