package runners

import (
	"strconv"
	"strings"
	"testing"
)

func TestContentRange(t *testing.T) {
	for _, c := range []struct {
		in    string
		start int64
		ok    bool
	}{
		{"0-99", 0, true},
		{"100-199", 100, true},
		{" 5-9 ", 5, true},
		{"7-", 7, true}, // the end is ignored, as GitLab ignores it
		{"", 0, false},
		{"-5", 0, false},
		{"abc-5", 0, false},
		{"5", 0, false},
		{"-1-4", 0, false},
		{"99999999999999999999-1", 0, false},
	} {
		start, ok := contentRange(c.in)
		if ok != c.ok || (ok && start != c.start) {
			t.Errorf("contentRange(%q) = %d, %v; want %d, %v", c.in, start, ok, c.start, c.ok)
		}
	}
}

// FuzzContentRange: any header value parses to a non-negative offset that
// is the number before the first dash, or is refused; never a panic.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"0-99", "100-", "-", "1-2-3", " 5-9 ", "x-y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		start, ok := contentRange(in)
		if !ok {
			return
		}
		if start < 0 {
			t.Fatalf("negative offset %d from %q", start, in)
		}
		before, _, _ := strings.Cut(strings.TrimSpace(in), "-")
		if n, err := strconv.ParseInt(before, 10, 64); err != nil || n != start {
			t.Fatalf("offset %d from %q", start, in)
		}
	})
}
