package milestones

import (
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestValidate(t *testing.T) {
	desc := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		m    model.Milestone
		want string
	}{
		{"fine", model.Milestone{Title: "v1"}, "{}"},
		{"no title", model.Milestone{}, `{:title=>["can't be blank"]}`},
		{"long title", model.Milestone{Title: strings.Repeat("é", 256)}, `{:title=>["is too long (maximum is 255 characters)"]}`},
		{"title of 255", model.Milestone{Title: strings.Repeat("é", 255)}, "{}"},
		{"long description", model.Milestone{Title: "t", Description: desc(strings.Repeat("x", MaxDescription+1))},
			`{:description=>["is too long (maximum is 1048576 characters)"]}`},
		{"due before start", model.Milestone{Title: "t", StartDate: "2020-02-01", DueDate: "2020-01-31"},
			`{:due_date=>["must be greater than start date"]}`},
		{"due on start", model.Milestone{Title: "t", StartDate: "2020-02-01", DueDate: "2020-02-01"},
			`{:due_date=>["must be greater than start date"]}`},
		{"due after start", model.Milestone{Title: "t", StartDate: "2020-02-01", DueDate: "2020-02-02"}, "{}"},
		{"only due", model.Milestone{Title: "t", DueDate: "1999-01-01"}, "{}"},
		{"two fields", model.Milestone{StartDate: "2020-02-01", DueDate: "2020-01-01"},
			`{:title=>["can't be blank"], :due_date=>["must be greater than start date"]}`},
	} {
		if got := Validate(&c.m).Ruby(); got != c.want {
			t.Errorf("%s: got %s; want %s", c.name, got, c.want)
		}
	}
}

func TestErrors_Ruby(t *testing.T) {
	e := Errors{}.add("title", `say "hi" \ #{x}`).add("title", "two").add("due_date", "d")
	want := `{:title=>["say \"hi\" \\ \#{x}", "two"], :due_date=>["d"]}`
	if got := e.Ruby(); got != want {
		t.Errorf("got %s; want %s", got, want)
	}
}

func TestAncestors(t *testing.T) {
	for _, c := range []struct {
		traversal string
		want      []int64
	}{
		{"", nil},
		{"7/", nil},
		{"1/5/9/", []int64{1, 5}},
		{"1/5/", []int64{1}},
	} {
		got := ancestors(c.traversal)
		if len(got) != len(c.want) {
			t.Errorf("%q: got %v; want %v", c.traversal, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: got %v; want %v", c.traversal, got, c.want)
			}
		}
	}
}

func TestMilestone_Expired(t *testing.T) {
	for _, c := range []struct {
		due  string
		want bool
	}{{"", false}, {"2026-11-26", true}, {"2026-11-27", false}, {"2026-11-28", false}} {
		m := model.Milestone{DueDate: c.due}
		if got := m.Expired("2026-11-27"); got != c.want {
			t.Errorf("due %q: got %v; want %v", c.due, got, c.want)
		}
	}
}
