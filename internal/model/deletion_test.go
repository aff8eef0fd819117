package model

import (
	"testing"
	"time"
)

func TestPlanDeletion(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	for _, c := range []struct {
		name                string
		marked, permanently bool
		confirm             string
		delay               time.Duration
		want                Deletion
		err                 string
	}{
		{"no delay: at once", false, false, "", 0, Deletion{RunAt: now}, ""},
		{"delay: marked", false, false, "", week, Deletion{Mark: true, RunAt: now.Add(week)}, ""},
		{"marked twice", true, false, "", week, Deletion{}, "Group has been already marked for deletion"},
		{"permanently, not marked", false, true, "g", week, Deletion{}, "Group has not been marked for deletion"},
		{"permanently, wrong path", true, true, "x", week, Deletion{}, "`full_path` is incorrect. You must enter the complete path for the group."},
		{"permanently", true, true, "g", week, Deletion{RunAt: now}, ""},
	} {
		got, err := PlanDeletion("Group", c.marked, c.permanently, c.confirm, "g", c.delay, now)
		if msg := ""; err != nil {
			msg = err.Error()
			if msg != c.err {
				t.Errorf("%s: error %q; want %q", c.name, msg, c.err)
			}
		} else if c.err != "" || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v, %q", c.name, got, err, c.want, c.err)
		}
	}
}
