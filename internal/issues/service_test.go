package issues

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"quarry/internal/model"
)

func TestCheckText(t *testing.T) {
	long := strings.Repeat("é", model.IssueTitleMax)
	for _, c := range []struct {
		name, title, description string
		wantTitle                string
		field                    string // "" when valid
	}{
		{"trimmed", "  a title ", "", "a title", ""},
		{"blank", "   ", "", "", "title"},
		{"empty", "", "", "", "title"},
		{"255 characters", long, "", long, ""},
		{"256 characters", long + "é", "", "", "title"},
		{"long description", "t", strings.Repeat("d", model.IssueDescriptionMax+1), "", "description"},
		{"description at the bound", "t", strings.Repeat("d", model.IssueDescriptionMax), "t", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			title, desc := c.title, c.description
			err := checkText(&title, &desc)
			if c.field == "" {
				if err != nil || title != c.wantTitle {
					t.Errorf("got %q, %v; want %q, nil", title, err, c.wantTitle)
				}
				return
			}
			var me *model.Error
			if !errors.As(err, &me) || !strings.Contains(me.Error(), c.field) {
				t.Errorf("got %v; want an error on %s", err, c.field)
			}
		})
	}
}

func TestCheckDate(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"", true}, {"2030-01-02", true}, {"2030-13-01", false}, {"tomorrow", false}, {"2030-1-2", false}, {"20300102", false}} {
		if err := checkDate("due_date", c.in); (err == nil) != c.ok {
			t.Errorf("checkDate(%q) = %v; want ok %v", c.in, err, c.ok)
		}
	}
}

func TestTraversalIDs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
	}{{"1/5/9/", []int64{1, 5, 9}}, {"7/", []int64{7}}, {"", nil}, {"x/2/", []int64{2}}} {
		if got := traversalIDs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("traversalIDs(%q) = %v; want %v", c.in, got, c.want)
		}
	}
}

// FuzzCheckText: any title and description are accepted within GitLab's
// bounds (a kept title is trimmed, not blank, at most 255 characters) or
// refused, never a panic.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"", " ", "title", "\x00", "\xff\xfe", strings.Repeat("é", 256)} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, title, description string) {
		tt, d := title, description
		if err := checkText(&tt, &d); err != nil {
			return
		}
		if tt != strings.TrimSpace(tt) || tt == "" || utf8.RuneCountInString(tt) > model.IssueTitleMax {
			t.Errorf("kept title %q", tt)
		}
	})
}
