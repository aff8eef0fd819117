package ci

import (
	"regexp"
	"testing"
)

func TestCoverageOf(t *testing.T) {
	cases := []struct {
		name, log, expr string
		want            *float64
	}{
		{"last matching line wins", "Coverage: 10.5%\nother\nCoverage: 87.25%\n", `Coverage: \d+\.\d+%`, ptr(87.25)},
		{"capture group", "total: (statements) 76.3%\n", `total:\s+\(statements\)\s+(\d+.\d+)%`, ptr(76.3)},
		{"last match of a line", "a 1% b 2%", `\d+%`, ptr(2)},
		{"an integer", "Lines: 90%\r\n", `Lines: \d+%`, ptr(90)},
		{"no match", "nothing here\n", `Coverage: \d+%`, nil},
		{"a match without a number is passed over", "Coverage: 55%\nCoverage: n/a\n", `Coverage: \S+`, ptr(55)},
		{"empty log", "", `\d+`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CoverageOf([]byte(c.log), regexp.MustCompile(c.expr))
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Fatalf("got %v; want %v", deref(got), deref(c.want))
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
