package web

import (
	"fmt"
	"testing"
)

func TestLanguages(t *testing.T) {
	for _, c := range []struct {
		shares map[string]float64
		want   string
	}{
		{nil, "[]"},
		{map[string]float64{"Go": 100}, "[{Go 100.0 lang-w-100 lang-c-00add8}]"},
		{map[string]float64{"Go": 0, "Ruby": 100}, "[{Ruby 100.0 lang-w-100 lang-c-701516}]"},
		{map[string]float64{"Shell": 49.5, "C": 49.5, "Brainfuck": 0.01, "Go": 1}, "[{C 49.5 lang-w-50 lang-c-555555} " +
			"{Shell 49.5 lang-w-50 lang-c-89e051} {Go 1.0 lang-w-1 lang-c-00add8} {Brainfuck 0.0 lang-w-1 lang-c-8b8b8b}]"},
		{map[string]float64{"Go": 99.44, "C": 0.56}, "[{Go 99.4 lang-w-99 lang-c-00add8} {C 0.6 lang-w-1 lang-c-555555}]"},
	} {
		if got := fmt.Sprint(languages(c.shares)); got != c.want {
			t.Errorf("languages(%v) = %s; want %s", c.shares, got, c.want)
		}
	}
}
