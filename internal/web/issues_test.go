package web

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestIssueFilter(t *testing.T) {
	for _, c := range []struct {
		query             string
		state, order, bad string
		asc               bool
		labels            []string
	}{
		{query: "", state: "opened"},
		{query: "state=closed&sort=created_asc", state: "closed", asc: true},
		{query: "state=all&sort=updated_desc", state: "all", order: "updated_at"},
		{query: "sort=updated_asc", state: "opened", order: "updated_at", asc: true},
		{query: "sort=due_date", state: "opened", order: "due_date", asc: true},
		{query: "sort=due_date_desc", state: "opened", order: "due_date"},
		{query: "sort=title_asc", state: "opened", order: "title", asc: true},
		{query: "sort=title_desc", state: "opened", order: "title"},
		{query: "sort=popularity", state: "opened"},
		{query: "label_name[]=a&label_name[]=b&labels=c,d", state: "opened", labels: []string{"a", "b", "c", "d"}},
		{query: "label_name=e,f", state: "opened", labels: []string{"e", "f"}},
		{query: "state=merged", bad: "state should be opened, closed or all"},
		{query: "scope=mine", bad: "scope should be all, created_by_me or assigned_to_me"},
		{query: "search=" + strings.Repeat("s", maxIssueFilterBytes+1), bad: "search is too long"},
		{query: "author_username=%ff", bad: "author_username is invalid"},
		{query: "labels=" + strings.Repeat("x,", 10) + manyDistinct(60), bad: "labels has too many values"},
		{query: strings.Repeat("label_name[]=a&", 60), bad: "label_name[] has too many values"},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		f, state, err := issueFilter(q)
		if c.bad != "" {
			var me *model.Error
			if !errors.As(err, &me) || me.Kind != model.KindParam || me.Message != c.bad {
				t.Errorf("%.60s: error %v; want %q", c.query, err, c.bad)
			}
			continue
		}
		if err != nil || state != c.state || f.State != c.state || f.OrderBy != c.order || f.Asc != c.asc ||
			strings.Join(f.Labels, ",") != strings.Join(c.labels, ",") {
			t.Errorf("%s: state %q, order %q asc %v, labels %v, err %v; want %q, %q %v, %v", c.query, state, f.OrderBy, f.Asc, f.Labels, err,
				c.state, c.order, c.asc, c.labels)
		}
	}
}

func manyDistinct(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("l")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// FuzzIssueFilter: any query string is a filter or a 400's message,
// never a panic, and every text kept is within its bound.
func FuzzIssueFilter(f *testing.F) {
	for _, s := range []string{"", "state=all&sort=title_asc", "label_name[]=a&labels=b,c", "release_tag=v1&scope=all&state=opened",
		"search=%ff", "scope=assigned-to-me&assignee_username[]=x", "milestone_title=None&author_username=a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		fl, state, err := issueFilter(q)
		if err != nil {
			var me *model.Error
			if !errors.As(err, &me) || me.Kind != model.KindParam || me.Message == "" {
				t.Fatalf("%q: error %v is not a parameter's", raw, err)
			}
			return
		}
		if state != "opened" && state != "closed" && state != "all" {
			t.Fatalf("%q: state %q", raw, state)
		}
		for _, s := range append([]string{fl.Search, fl.Milestone, fl.AuthorUsername, fl.AssigneeUsername, fl.ReleaseTag}, fl.Labels...) {
			if len(s) > maxIssueFilterBytes {
				t.Fatalf("%q: a filter of %d bytes kept", raw, len(s))
			}
		}
	})
}
