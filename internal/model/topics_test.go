package model

import (
	"slices"
	"strings"
	"testing"
)

func TestCleanTopics(t *testing.T) {
	long := strings.Repeat("é", MaxTopicLength)
	for _, c := range []struct {
		in   []string
		want []string
		msg  string
	}{
		{nil, []string{}, ""},
		{[]string{"t", "t"}, []string{"t"}, ""},
		{[]string{"Go", "go", "GO"}, []string{"Go"}, ""},
		{[]string{" a ", "", "  ", "b", "a"}, []string{"a", "b"}, ""},
		{[]string{long}, []string{long}, ""},
		{[]string{long + "x"}, []string{long + "x"}, "is too long (maximum is 255 characters)"},
	} {
		got, msg := CleanTopics(c.in)
		if !slices.Equal(got, c.want) || msg != c.msg {
			t.Errorf("CleanTopics(%q) = %q, %q; want %q, %q", c.in, got, msg, c.want, c.msg)
		}
	}
}
