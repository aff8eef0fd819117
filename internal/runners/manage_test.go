package runners

import (
	"slices"
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// TestListFilter_query: the deprecated scope, type, status and paused
// filters combine as GitLab chains them; contradictions give an empty
// list, never a wider one.
func TestListFilter_query(t *testing.T) {
	yes, no := true, false
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name   string
		f      ListFilter
		types  []string
		status string
		paused *bool
		ok     bool
	}{
		{"nothing", ListFilter{}, nil, "", nil, true},
		{"type", ListFilter{Type: model.RunnerGroup}, []string{model.RunnerGroup}, "", nil, true},
		{"specific", ListFilter{Scope: "specific"}, []string{model.RunnerGroup, model.RunnerProject}, "", nil, true},
		{"shared", ListFilter{Scope: "shared"}, []string{model.RunnerInstance}, "", nil, true},
		{"specific and project", ListFilter{Scope: "specific", Type: model.RunnerProject}, []string{model.RunnerProject}, "", nil, true},
		{"shared and group", ListFilter{Scope: "shared", Type: model.RunnerGroup}, []string{}, "", nil, false},
		{"scope status", ListFilter{Scope: "online"}, nil, "online", nil, true},
		{"scope and status agree", ListFilter{Scope: "online", Status: "online"}, nil, "online", nil, true},
		{"scope and status differ", ListFilter{Scope: "online", Status: "stale"}, nil, "stale", nil, false},
		{"active", ListFilter{Status: "active"}, nil, "", &no, true},
		{"paused status", ListFilter{Status: "paused"}, nil, "", &yes, true},
		{"paused and active", ListFilter{Scope: "active", Paused: &yes}, nil, "", &yes, false},
		{"paused twice", ListFilter{Status: "paused", Paused: &yes}, nil, "", &yes, true},
	} {
		q, ok := c.f.query(store.RunnerFilter{ProjectID: 7}, now)
		if ok != c.ok || !slices.Equal(q.Types, c.types) || q.Status != c.status || (q.Paused == nil) != (c.paused == nil) ||
			(q.Paused != nil && *q.Paused != *c.paused) || q.ProjectID != 7 || !q.Now.Equal(now) {
			t.Errorf("%s: %+v, %v", c.name, q, ok)
		}
		if !ok && (q.IDs == nil || len(q.IDs) != 0) {
			t.Errorf("%s: contradiction does not empty the list: IDs %v", c.name, q.IDs)
		}
	}
}
