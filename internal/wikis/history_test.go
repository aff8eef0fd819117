package wikis

import (
	"strings"
	"testing"
)

func TestCleanFilePath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"uploads/abc/shot.png", true},
		{"a.txt", true},
		{"", false},
		{"/abs.png", false},
		{"uploads//x.png", false},
		{"uploads/./x.png", false},
		{"uploads/../home.md", false},
		{"..", false},
		{"uploads/x/", false},
		{strings.Repeat("a", 4097), false},
	} {
		if got := cleanFilePath(c.in); got != c.want {
			t.Errorf("cleanFilePath(%q) = %v; want %v", c.in, got, c.want)
		}
	}
}
