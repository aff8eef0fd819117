package model

import (
	"strconv"
	"testing"
)

func TestParseID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"12", 12, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false}, {"18446744073709551617", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"+1", 0, false}, {"-1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"0x1", 0, false},
		{"alice", 0, false}, {"group/project", 0, false}, {"１", 0, false},
	} {
		got, ok := ParseID(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseID(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParseID: an id is exactly what strconv reads as a non-negative
// decimal int64 without sign, and it prints back as the input (leading
// zeros aside).
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "7", "007", "9223372036854775807", "9223372036854775808", "18446744073709551617", "+1", "-0", "a1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseID(s)
		ref, err := strconv.ParseInt(s, 10, 64)
		digits := s != "" && s[0] >= '0' && s[0] <= '9'
		if want := err == nil && digits && ref >= 0; ok != want {
			t.Fatalf("ParseID(%q) ok=%v; strconv says %v (%v)", s, ok, ref, err)
		}
		if ok && n != ref {
			t.Fatalf("ParseID(%q) = %d; want %d", s, n, ref)
		}
	})
}
